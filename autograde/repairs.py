"""Step 2, repairs: make a submitted notebook gradable against the released one.

Each repair is a small class in the declared list `REPAIRS` (the way nbgrader declares its
preprocessors); `repair(raw, released)` runs them in order on a `Work` and returns the repaired
notebook and the notes saying what was changed. Graded cells are matched by grade_id in the
released order; cells whose id was renamed or whose metadata was removed are recognised by
position and content; locked cells get the released source and metadata back (nbgrader puts the
hidden tests back from the gradebook); copies of locked cells are dropped, copies of answer cells
kept as plain cells; missing graded cells come back from the release.
"""

import copy
import difflib
import json
import re
import uuid

from .cells import role


class Broken(Exception):
    """The submission cannot be graded at all; the message is the reason shown in grades.csv."""


def meta(cell):
    """The nbgrader metadata of a cell (a dict or a NotebookNode), or None."""
    value = (cell.get("metadata") or {}).get("nbgrader")
    return value if isinstance(value, dict) else None


def kind(cell):
    """The cell's role (cells.role), where any other cell nbgrader marks counts as locked ('readonly'): what
    a student should not have changed is put back. None for a cell without nbgrader metadata."""
    if not meta(cell):
        return None
    found = role(cell)
    return found if found in ("answer", "manual", "tests") else "readonly"


def source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


LOCKED = ("tests", "readonly")


class Work:
    """What the repairs work on: the submitted cells, the released notebook and the matches so far."""

    def __init__(self, data, released):
        self.data = data
        self.released = released
        self.cells = list(data.get("cells", []))
        self.ref = [c for c in released.cells if meta(c)]  # released graded/locked cells, in order
        self.ref_ids = {c.metadata.nbgrader.grade_id for c in self.ref}
        self.match = [None] * len(self.ref)  # the submitted cell (object) for each
        self.notes = []
        self.notebook = None

    def matched(self, cell):
        return any(m is cell for m in self.match)

    def index(self, cell):
        return next(i for i, c in enumerate(self.cells) if c is cell)


class Repair:
    """A repair step; subclasses implement apply(work)."""

    def __call__(self, work):
        self.apply(work)

    def apply(self, work):
        raise NotImplementedError


class DropMalformedCells(Repair):
    """Cells that are not dicts or not code/markdown/raw cells are removed."""

    def apply(self, work):
        kept = [c for c in work.cells if isinstance(c, dict) and c.get("cell_type") in ("code", "markdown", "raw")]
        if len(kept) != len(work.cells):
            work.notes.append("dropped a malformed cell")
        work.cells = kept


NBGRADER_TYPES = {
    "grade_id": str,
    "grade": bool,
    "solution": bool,
    "locked": bool,
    "task": bool,
    "points": (int, float),
    "schema_version": int,
    "checksum": str,
    "cell_type": str,
}
KEPT_METADATA = {"tags", "collapsed", "scrolled", "editable", "deletable", "jupyter", "slideshow", "trusted"}


def plain_json(value, depth=0, budget=None):
    """True for JSON of at most 6 levels and 10,000 values (what cell metadata of a real notebook holds)."""
    budget = budget if budget is not None else [10_000]
    budget[0] -= 1
    if budget[0] < 0 or depth > 6:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json(v, depth + 1, budget) for k, v in value.items())
    if isinstance(value, list):
        return all(plain_json(v, depth + 1, budget) for v in value)
    return value is None or isinstance(value, (str, bool, int, float))


class ShapeCells(Repair):
    """Every field a repair reads gets the type it should have, whatever the file held: a source that
    is not text becomes empty, metadata that is not a dict becomes {}, nbgrader metadata with a field
    of the wrong type (a list as grade_id, a string as points) is ignored (the cell is then recognised
    by position and content, like a cell whose metadata was removed), other metadata is kept only if
    it is small plain JSON. Nothing else in a cell is kept (outputs go anyway)."""

    def apply(self, work):
        shaped = []
        for n, cell in enumerate(work.cells, 1):
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(line, str) for line in source):
                source = "".join(source)
            elif not isinstance(source, str):
                work.notes.append(f"cell {n}: its source was not text (emptied)")
                source = ""
            metadata = cell.get("metadata")
            if not isinstance(metadata, dict):
                if metadata is not None:
                    work.notes.append(f"cell {n}: its metadata was not a dict (ignored)")
                metadata = {}
            kept = {k: v for k, v in metadata.items() if k in KEPT_METADATA and plain_json(v)}
            nb_meta = metadata.get("nbgrader")
            if nb_meta is not None:
                if self.well_typed(nb_meta):
                    kept["nbgrader"] = dict(nb_meta)
                else:
                    work.notes.append(f"cell {n}: its nbgrader metadata had fields of the wrong type (ignored)")
            new = {"cell_type": cell["cell_type"], "metadata": kept, "source": source}
            if isinstance(cell.get("id"), str):
                new["id"] = cell["id"]
            attachments = cell.get("attachments")
            if cell["cell_type"] != "code" and isinstance(attachments, dict) and plain_json(attachments):
                new["attachments"] = attachments
            shaped.append(new)
        work.cells = shaped

    @staticmethod
    def well_typed(meta):
        if not isinstance(meta, dict) or not isinstance(meta.get("grade_id", ""), str):
            return False
        for key, types in NBGRADER_TYPES.items():
            value = meta.get(key)
            if value is not None and (not isinstance(value, types) or (types is not bool and isinstance(value, bool))):
                return False
        gid = meta.get("grade_id")
        return gid is None or (0 < len(gid) <= 200 and re.fullmatch(r"[A-Za-z0-9_\-]+", gid) is not None)


class MatchByGradeId(Repair):
    """Graded cells found under their own grade_id, in the released order (a pasted copy of a cell
    above the original is skipped)."""

    def apply(self, work):
        pos = -1
        for i, r in enumerate(work.ref):
            gid = r.metadata.nbgrader.grade_id
            hits = [
                j
                for j, c in enumerate(work.cells)
                if (meta(c) or {}).get("grade_id") == gid and c.get("cell_type") == r.cell_type and not work.matched(c)
            ]
            if hits:
                after = [j for j in hits if j > pos]
                j = after[0] if after else hits[0]
                work.match[i] = work.cells[j]
                pos = max(pos, j)


class MatchRenamedCells(Repair):
    """A released graded cell not found by id is looked for between its matched neighbours: a graded
    cell of the same kind under another id, a locked cell with the same source, an answer cell whose
    source resembles the released one, or the only candidate between two graded neighbours."""

    def apply(self, work):
        for i, r in enumerate(work.ref):
            if work.match[i] is not None:
                continue
            lo = max([work.index(m) for m in work.match[:i] if m is not None], default=-1)
            hi = min([work.index(m) for m in work.match[i + 1 :] if m is not None], default=len(work.cells))
            wanted, want = kind(r), source(r)
            candidates = [
                j
                for j in range(lo + 1, hi)
                if work.cells[j].get("cell_type") == r.cell_type
                and not work.matched(work.cells[j])
                and (meta(work.cells[j]) or {}).get("grade_id") not in work.ref_ids
            ]
            best, best_score = None, 0.0
            for j in candidates:
                c = work.cells[j]
                if meta(c) and kind(c) == wanted:
                    score = 2.0  # same kind of graded cell under another name
                elif wanted in LOCKED:
                    score = 1.5 if source(c).strip() == want.strip() else 0.0
                else:
                    score = difflib.SequenceMatcher(None, source(c), want).ratio()
                if score > best_score:
                    best, best_score = j, score
            if len(candidates) == 1 and lo >= 0 and hi < len(work.cells) and wanted in ("answer", "manual"):
                best, best_score = candidates[0], max(best_score, 0.5)
            if best is not None and best_score >= 0.5:
                cell = work.cells[best]
                work.match[i] = cell
                old = (meta(cell) or {}).get("grade_id")
                work.notes.append(
                    f"restored the metadata of {r.metadata.nbgrader.grade_id}"
                    + (f" (was renamed {old})" if old else "")
                )


class RestoreGradedCells(Repair):
    """Matched cells get the released nbgrader metadata (points, ids, schema); locked cells (tests,
    read-only) also get the released source: an edited test cell gains nothing."""

    def apply(self, work):
        for r, cell in zip(work.ref, work.match):
            if cell is None:
                continue
            cell["metadata"] = dict(cell.get("metadata") or {}, nbgrader=copy.deepcopy(dict(r.metadata.nbgrader)))
            if kind(r) in LOCKED:
                if source(cell) != source(r):
                    work.notes.append(f"restored the locked cell {r.metadata.nbgrader.grade_id}")
                cell["source"] = source(r)


class DropExtraGradedCells(Repair):
    """Unmatched cells that look graded: copies of locked cells are dropped (stock nbgrader aborts the
    whole batch on them), other copies are kept as plain cells."""

    def apply(self, work):
        kept = []
        for cell in work.cells:
            m = meta(cell)
            if m is not None and not work.matched(cell):
                if kind(cell) in LOCKED:
                    work.notes.append(f"dropped an extra copy of locked cell {m.get('grade_id')}")
                    continue
                del cell["metadata"]["nbgrader"]
                work.notes.append(f"kept an extra graded-looking cell ({m.get('grade_id')}) as a plain cell")
            kept.append(cell)
        work.cells = kept


class PutBackMissingCells(Repair):
    """A released graded cell with no match comes back from the release, after the submitted cell
    matched to its released predecessor, or before the one matched to its successor (a missing answer
    becomes the unanswered stub)."""

    def apply(self, work):
        for i, r in enumerate(work.ref):
            if work.match[i] is not None:
                continue
            prev = next((work.match[k] for k in range(i - 1, -1, -1) if work.match[k] is not None), None)
            after = next((work.match[k] for k in range(i + 1, len(work.ref)) if work.match[k] is not None), None)
            at = (
                work.index(prev) + 1
                if prev is not None
                else work.index(after)
                if after is not None
                else len(work.cells)
            )
            cell = json.loads(json.dumps(r))
            work.cells.insert(at, cell)
            work.match[i] = cell
            work.notes.append(f"put back missing cell {r.metadata.nbgrader.grade_id}")


class CleanCells(Repair):
    """No outputs or execution counts, sources as strings, valid and unique cell ids."""

    def apply(self, work):
        seen = set()
        for n, c in enumerate(work.cells):
            c["source"] = source(c)
            if c.get("cell_type") == "code":
                c["outputs"], c["execution_count"] = [], None
            else:
                c.pop("outputs", None)
                c.pop("execution_count", None)
            if not isinstance(c.get("metadata"), dict):
                c["metadata"] = {}
            cid = c.get("id")
            if not isinstance(cid, str) or not re.fullmatch(r"[a-zA-Z0-9-_]{1,64}", cid) or cid in seen:
                cid = uuid.uuid5(uuid.NAMESPACE_URL, f"{n}:{source(c)}").hex[:12]
                while cid in seen:
                    cid = uuid.uuid5(uuid.NAMESPACE_URL, cid).hex[:12]
                c["id"] = cid
            seen.add(cid)


class ReleasedMetadata(Repair):
    """The notebook takes the released notebook-level metadata (kernel, language) and format; the
    result must validate as nbformat 4."""

    def apply(self, work):
        import nbformat

        nb = nbformat.from_dict(
            {
                "cells": work.cells,
                "metadata": copy.deepcopy(work.released.metadata),
                "nbformat": work.released.nbformat,
                "nbformat_minor": work.released.nbformat_minor,
            }
        )
        try:
            nbformat.validate(nb)
        except nbformat.ValidationError as err:
            raise Broken(f"not a valid notebook ({str(err).splitlines()[0][:80]})") from None
        work.notebook = nb


REPAIRS = [
    DropMalformedCells,
    ShapeCells,
    MatchByGradeId,
    MatchRenamedCells,
    RestoreGradedCells,
    DropExtraGradedCells,
    PutBackMissingCells,
    CleanCells,
    ReleasedMetadata,
]


MAX_BYTES = 64 * 1024 * 1024  # a lesson's notebook with all its figures is a few MiB


def load(raw):
    """The submitted file's bytes as a notebook-shaped dict (nbformat 3 converted), or Broken."""
    if len(raw) > MAX_BYTES:
        raise Broken(f"too large to be a notebook of this lesson ({len(raw) / 2**20:.0f} MiB)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Broken("invalid JSON (not UTF-8 text)") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise Broken("invalid JSON (nested too deeply)") from None
    except json.JSONDecodeError:
        raise Broken("invalid JSON") from None
    except (ValueError, MemoryError) as err:  # e.g. an integer of thousands of digits
        raise Broken(f"invalid JSON ({str(err).split(':')[0][:60]})") from None
    if isinstance(data, dict) and data.get("nbformat") == 3 and isinstance(data.get("worksheets"), list):
        data = from_nbformat3(data)
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise Broken("not a notebook")
    return data


def from_nbformat3(data):
    """An nbformat 3 notebook, converted by nbformat's own converter (as `jupyter nbconvert --to notebook`
    would), or Broken with how to re-save it."""
    import nbformat

    try:
        converted = nbformat.convert(nbformat.from_dict(data), 4)
        return json.loads(nbformat.writes(converted, version=4))
    except Exception:  # noqa: BLE001 - any shape the converter cannot take
        raise Broken(
            "an nbformat 3 notebook that could not be converted: open it in Jupyter and save it again"
        ) from None


def repair(raw, released, repairs=REPAIRS):
    """(repaired notebook, sorted notes) for the submitted bytes `raw` and the released notebook.
    Whatever the file holds, the result is a valid notebook or Broken with a reason."""
    work = Work(load(raw), released)
    try:
        for step in repairs:
            step()(work)
    except Broken:
        raise
    except RecursionError:
        raise Broken("could not be read (nested too deeply)") from None
    except Exception as err:  # noqa: BLE001 - a shape no repair foresaw: this file fails, not the batch
        raise Broken(f"could not be read ({type(err).__name__} in {step.__name__})") from None
    return work.notebook, sorted(set(work.notes))
