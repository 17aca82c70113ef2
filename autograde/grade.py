"""Grade one lesson for a whole class with nbgrader, so that no single submission can spoil the batch.

    python autograde/grade.py LESSON SUBMISSIONS [--workers N] [--timeout SECONDS] [--out DIR] [--force]

SUBMISSIONS is a folder of LMS downloads named like nbgrader's zip_collect expects
(`<student>_..._<lesson>.ipynb`, directly in the folder or in its `archive/` subfolder), or the
word `exchange` (runs `nbgrader collect LESSON` first). Either way the originals are kept, untouched,
in `autograde/submitted/<student>/<lesson>/`.

The pipeline, one step per function:
  collect      LMS folder or exchange -> autograde/submitted/<student>/<lesson>/
  sanitize     repair each submission against the released notebook (restore edited, deleted,
               duplicated or renamed graded cells and their metadata) -> OUT/sanitized/
  scan         flag code that rebinds names the tests rely on (np.*, torch.*, builtins, checks.*)
  autograde    `nbgrader autograde LESSON --student=ID`, one process per student in a worker pool,
               with nbgrader's per-cell timeout and a wall-clock cap per notebook (kills the
               process tree, kernel included)
  feedback     nbgrader's GenerateFeedback with the hidden tests' source and tracebacks removed
  report       read the gradebook -> grades.csv, summary.txt, summary.png

Idempotent: a submission whose sanitized notebook, lesson source and course configuration are
unchanged since the last run keeps its recorded result (use --force to grade it again);
hand-given points live in the gradebook and are read back on every run.
"""
import argparse
import ast
import builtins
import concurrent.futures
import copy
import csv
import difflib
import hashlib
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.@+-]*$")
HIDDEN = re.compile(r"[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S)
# Names whose attributes the tests and helpers rely on; rebinding one of their attributes is flagged.
PROTECTED_MODULES = {"np", "numpy", "torch", "F", "nn", "math", "builtins", "__builtins__", "checks", "ac",
                     "attention_course", "plots", "widgets", "data", "sys", "random"}
DYNAMIC_CALLS = {"exec", "eval", "__import__", "setattr", "delattr", "globals", "vars"}


# --------------------------------------------------------------------------------------------
# course and configuration

class Course:
    """Paths and settings of the nbgrader course rooted at `root` (read from its nbgrader_config.py)."""

    def __init__(self, root):
        from traitlets.config.loader import PyFileConfigLoader
        self.root = Path(root).resolve()
        self.config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        cd = self.config.CourseDirectory

        def folder(key, default):
            return self.root / cd.get(key, default)
        self.source = folder("source_directory", "source")
        self.release = folder("release_directory", "release")
        self.submitted = folder("submitted_directory", "submitted")
        self.autograded = folder("autograded_directory", "autograded")
        self.feedback = folder("feedback_directory", "feedback")
        self.db_url = cd.get("db_url", f"sqlite:///{self.root / 'gradebook.db'}")

    def notebooks(self, lesson):
        """Names (without .ipynb) of the lesson's released notebooks."""
        return sorted(p.stem for p in (self.release / lesson).glob("*.ipynb"))

    def fingerprint(self, lesson):
        """Changes when the lesson's tests, the configuration or this script change."""
        h = hashlib.sha256()
        for path in sorted((self.source / lesson).glob("*.ipynb")) + [self.root / "nbgrader_config.py",
                                                                        Path(__file__).resolve()]:
            h.update(path.read_bytes())
        return h.hexdigest()


def nbgrader_env(course):
    """nbgrader starts kernels (and alembic) with the first `python` on PATH: make it this interpreter."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.setdefault("PYTHONHASHSEED", "0")
    return env


# --------------------------------------------------------------------------------------------
# collect

def collect_exchange(course, lesson):
    result = subprocess.run([sys.executable, "-m", "nbgrader", "collect", lesson, "--update"], cwd=course.root,
                            env=nbgrader_env(course), capture_output=True, text=True)
    if result.returncode != 0 or "[CollectApp | ERROR]" in result.stderr:
        raise SystemExit(f"nbgrader collect {lesson} failed:\n{result.stderr[-3000:]}")


def collect_folder(course, lesson, folder):
    """Copy LMS downloads (zip_collect naming) into submitted/<student>/<lesson>/. Returns notes per student."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SystemExit(f"no such folder: {folder}")
    base = folder / "archive" if (folder / "archive").is_dir() else folder
    files = sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith("."))
    expanded = []
    for path in files:
        if path.suffix == ".zip":                # an LMS may zip a student's files
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist():
                    if not info.is_dir():
                        expanded.append((f"{path.stem}_{Path(info.filename).name}", zf.read(info)))
        else:
            expanded.append((path.name, path.read_bytes()))
    notebooks = course.notebooks(lesson)
    chosen, notes = {}, {}
    for name, content in expanded:
        student = name.split("_", 1)[0]
        if not STUDENT_ID.match(student):
            print(f"skipping {name!r}: cannot read a student id from its name", file=sys.stderr)
            continue
        rest = name.split("_", 1)[1] if "_" in name else name
        target = next((f"{nb}.ipynb" for nb in notebooks if rest == f"{nb}.ipynb" or rest.endswith(f"_{nb}.ipynb")),
                      rest)
        if (student, target) in chosen:          # several downloads: the last in name order wins
            notes.setdefault(student, []).append(f"several files for {target}; used {name}")
        chosen[(student, target)] = content
    for (student, target), content in chosen.items():
        dest = course.submitted / student / lesson
        dest.mkdir(parents=True, exist_ok=True)
        if not (dest / target).exists() or (dest / target).read_bytes() != content:
            (dest / target).write_bytes(content)
    return notes


# --------------------------------------------------------------------------------------------
# sanitize

class Broken(Exception):
    """The submission cannot be graded at all; the message is the reason shown in grades.csv."""


def _meta(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else None


def _role(meta):
    if not meta:
        return None
    solution, grade = bool(meta.get("solution")), bool(meta.get("grade"))
    return {(True, False): "answer", (True, True): "manual", (False, True): "tests"}.get((solution, grade), "readonly")


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def sanitize(raw, released):
    """Repair a submitted notebook against the released one.

    raw: the submitted file's bytes; released: the released notebook (nbformat node).
    Returns (notebook, notes). Graded cells are matched by grade_id in the released order; cells
    whose id was renamed or whose metadata was removed are recognised by position and content;
    locked cells get the released source and metadata back (nbgrader restores the hidden tests
    from the gradebook); duplicates of locked cells are dropped, duplicates of answer cells are
    kept as plain cells; missing graded cells are put back from the release (a missing answer
    becomes the unanswered stub)."""
    import nbformat
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise Broken("invalid JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise Broken("not a notebook")
    notes = []
    cells = []
    for cell in data["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            notes.append("dropped a malformed cell")
            continue
        cells.append(cell)

    ref = [c for c in released.cells if _meta(c)]
    ref_ids = {c.metadata.nbgrader.grade_id for c in ref}
    match = [None] * len(ref)                   # index into `cells`
    used = set()

    # 1. by grade_id, keeping the released order (a pasted copy before the original is skipped)
    pos = -1
    for i, r in enumerate(ref):
        gid = r.metadata.nbgrader.grade_id
        hits = [j for j, c in enumerate(cells)
                if (_meta(c) or {}).get("grade_id") == gid and c.get("cell_type") == r.cell_type and j not in used]
        if hits:
            after = [j for j in hits if j > pos]
            j = after[0] if after else hits[0]
            match[i] = j
            used.add(j)
            pos = max(pos, j)

    # 2. unmatched released cells: renamed grade_id or removed metadata, searched between matched neighbours
    for i, r in enumerate(ref):
        if match[i] is not None:
            continue
        lo = max([m for m in match[:i] if m is not None], default=-1)
        hi = min([m for m in match[i + 1:] if m is not None], default=len(cells))
        best, best_score = None, 0.0
        want = _source(r)
        for j in range(lo + 1, hi):
            c = cells[j]
            if j in used or c.get("cell_type") != r.cell_type:
                continue
            meta = _meta(c)
            if meta and meta.get("grade_id") in ref_ids:
                continue                          # belongs to another graded cell
            if meta and _role(meta) == _role(r.metadata.nbgrader):
                score = 2.0                       # same kind of graded cell under another name
            elif _role(r.metadata.nbgrader) in ("tests", "readonly"):
                score = 1.5 if _source(c).strip() == want.strip() else 0.0
            else:
                score = difflib.SequenceMatcher(None, _source(c), want).ratio()
            if score > best_score:
                best, best_score = j, score
        candidates = [j for j in range(lo + 1, hi) if j not in used and cells[j].get("cell_type") == r.cell_type
                      and (_meta(cells[j]) or {}).get("grade_id") not in ref_ids]
        # the only cell of its kind between two graded neighbours is taken even if it looks different
        single = len(candidates) == 1 and lo >= 0 and hi < len(cells) and _role(r.metadata.nbgrader) in ("answer", "manual")
        if single:
            best, best_score = candidates[0], max(best_score, 0.5)
        if best is not None and best_score >= 0.5:
            match[i] = best
            used.add(best)
            gid = r.metadata.nbgrader.grade_id
            old = (_meta(cells[best]) or {}).get("grade_id")
            notes.append(f"restored the metadata of {gid}" + (f" (was renamed {old})" if old else ""))

    # 3. rebuild: released metadata on graded cells, released source on locked ones, missing ones re-inserted
    by_student = {j: i for i, j in enumerate(match) if j is not None}
    anchor = {}                                   # student index after which a missing released cell goes
    for i, j in enumerate(match):
        if j is None:
            prev = [match[k] for k in range(i) if match[k] is not None]
            anchor.setdefault(prev[-1] if prev else -1, []).append(i)
    out = [copy.deepcopy(ref[i]) for i in anchor.get(-1, [])]
    for i in anchor.get(-1, []):
        notes.append(f"put back missing cell {ref[i].metadata.nbgrader.grade_id}")
    for j, c in enumerate(cells):
        c = copy.deepcopy(c)
        meta = _meta(c)
        if j in by_student:
            r = ref[by_student[j]]
            c["metadata"] = dict(c.get("metadata") or {}, nbgrader=copy.deepcopy(r.metadata.nbgrader))
            if _role(r.metadata.nbgrader) in ("tests", "readonly"):
                if _source(c) != _source(r):
                    notes.append(f"restored the locked cell {r.metadata.nbgrader.grade_id}")
                c["source"] = r.source
            out.append(c)
        elif meta is not None:
            role, gid = _role(meta), meta.get("grade_id")
            if role in ("tests", "readonly"):
                notes.append(f"dropped an extra copy of locked cell {gid}")
                continue
            del c["metadata"]["nbgrader"]
            notes.append(f"kept an extra graded-looking cell ({gid}) as a plain cell")
            out.append(c)
        else:
            out.append(c)
        for i in anchor.get(j, []):
            out.append(copy.deepcopy(ref[i]))
            notes.append(f"put back missing cell {ref[i].metadata.nbgrader.grade_id}")

    # 4. a clean nbformat 4 notebook: unique cell ids, no outputs, the released kernel
    seen = set()
    for c in out:
        c["source"] = _source(c)
        if c.get("cell_type") == "code":
            c["outputs"], c["execution_count"] = [], None
        else:
            c.pop("outputs", None)
            c.pop("execution_count", None)
        c.setdefault("metadata", {})
        cid = c.get("id")
        if not isinstance(cid, str) or not re.fullmatch(r"[a-zA-Z0-9-_]{1,64}", cid) or cid in seen:
            cid = uuid.uuid5(uuid.NAMESPACE_URL, f"{len(seen)}:{_source(c)}").hex[:12]
            while cid in seen:
                cid = uuid.uuid5(uuid.NAMESPACE_URL, cid).hex[:12]
            c["id"] = cid
        seen.add(cid)
    nb = nbformat.from_dict({"cells": out, "metadata": copy.deepcopy(released.metadata),
                             "nbformat": released.nbformat, "nbformat_minor": released.nbformat_minor})
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as err:
        raise Broken(f"not a valid notebook ({str(err).splitlines()[0][:80]})") from None
    return nb, sorted(set(notes))


# --------------------------------------------------------------------------------------------
# scan for rebinding

def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound_names(target):
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            yield from _bound_names(t)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def test_names(solution_nb):
    """Names the test cells (hidden ones included) use and the student should not rebind."""
    names = set()
    for cell in solution_nb.cells:
        if cell.cell_type == "code" and _role(_meta(cell)) == "tests":
            try:
                names |= {n.id for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Name)}
            except SyntaxError:
                pass
    return names


def scan(nb, protected_names):
    """Lines of student code that rebind what grading relies on, as short descriptions."""
    builtin_names = set(dir(builtins))
    flags = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or _role(_meta(cell)) == "tests":
            continue
        source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.splitlines())
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        where = f"cell {index + 1}"
        top_level = set()
        for stmt in tree.body:
            for node in ast.walk(stmt) if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)) else [stmt]:
                top_level.add(id(node))
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                if isinstance(t, (ast.Attribute, ast.Subscript)) and _root_name(t) in PROTECTED_MODULES:
                    flags.append(f"{where}: rebinds {ast.unparse(t)}")
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Call) and \
                        isinstance(t.value.func, ast.Name) and t.value.func.id in ("globals", "vars"):
                    flags.append(f"{where}: writes to {ast.unparse(t)}")
                if id(node) in top_level:
                    for name in _bound_names(t):
                        if name.id in protected_names and (name.id in builtin_names or name.id in PROTECTED_MODULES):
                            flags.append(f"{where}: rebinds {name.id}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and id(node) in top_level \
                    and node.name in protected_names and (node.name in builtin_names or node.name in PROTECTED_MODULES):
                flags.append(f"{where}: redefines {node.name}")
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) in top_level:
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    if bound in protected_names and bound in builtin_names:
                        flags.append(f"{where}: import rebinds {bound}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in DYNAMIC_CALLS:
                if node.func.id in ("globals", "vars") and not any(
                        isinstance(p, ast.Subscript) for p in ast.walk(tree)):
                    continue
                flags.append(f"{where}: calls {node.func.id}()")
            if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "__builtins__", "modules") and \
                    _root_name(node) in PROTECTED_MODULES | {"sys"} and not isinstance(node.ctx, ast.Load):
                flags.append(f"{where}: rebinds {ast.unparse(node)}")
    return sorted(set(flags), key=flags.index)


# --------------------------------------------------------------------------------------------
# autograde one student in its own process

def _kill_tree(proc):
    """Kill a worker, its process group and every descendant (kernels run in their own session)."""
    try:
        import psutil
        family = psutil.Process(proc.pid).children(recursive=True)
    except Exception:
        family = []
    for p in family:
        try:
            p.kill()
        except Exception:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


REASONS = [  # (pattern in nbgrader's log, reason shown to the instructor)
    (r"DeadKernelError|Kernel died|kernel died", "the kernel died: os._exit, a crash or out of memory"),
    (r"Timeout waiting for IOPub output", "a cell ran past the per-cell limit and did not stop when interrupted"),
    (r"CellTimeoutError", "a cell ran past the per-cell limit"),
    (r"SchemaTooOldError|SchemaTooNewError", "nbgrader metadata could not be repaired"),
    (r"MissingEntry|KeyError", "a graded cell could not be matched to the gradebook"),
]


def autograde(course, lesson, student, sanitized_root, out, cap):
    """Grade one student in a separate process (this script's worker mode: nbgrader autograde, then
    feedback). Returns (ok, reason, seconds)."""
    log_path = out / "logs" / f"{student}.log"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(course.root), lesson, student,
           str(sanitized_root), str(out)]
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=course.root, env=nbgrader_env(course), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            code = proc.wait(timeout=cap)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            code, timed_out = proc.wait(), True
    seconds = time.monotonic() - start
    if timed_out:
        shutil.rmtree(course.autograded / student / lesson, ignore_errors=True)
        return False, f"timed out after {cap:g} s", seconds
    text = Path(log_path).read_text(errors="replace")
    done = all((course.autograded / student / lesson / f"{nb}.ipynb").is_file() for nb in course.notebooks(lesson))
    if code == 0 and done:
        return True, "", seconds
    for pattern, reason in REASONS:
        if re.search(pattern, text):
            return False, reason, seconds
    errors = [line.split("ERROR]", 1)[1].strip() for line in text.splitlines() if "ERROR]" in line]
    return False, (errors[-1][:100] if errors else f"nbgrader exited with code {code}"), seconds


def worker(root, lesson, student, sanitized_root, out):
    """Worker mode (one process per student): nbgrader autograde, then this student's feedback."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config
    course = Course(root)
    os.environ.update(nbgrader_env(course))
    os.chdir(course.root)
    config = copy.deepcopy(course.config)
    extra = {"CourseDirectory": {"submitted_directory": sanitized_root}}
    if "iopub_timeout" not in config.Execute:   # nbclient's 4 s default fails slow-but-honest cells on a busy machine
        extra["Execute"] = {"iopub_timeout": 15}
    config.merge(Config(extra))
    try:
        result = NbGraderAPI(config=config).autograde(lesson, student, force=True, create=True)
    finally:
        _kill_children()   # a kernel that ignored shutdown (e.g. a loop ignoring SIGINT) must not outlive grading
    print(result.get("log", ""), result.get("error", ""), sep="\n", flush=True)
    if not result["success"]:
        return 1
    generate_feedback(course, lesson, [student], Path(out))
    return 0


def _kill_children():
    import psutil
    for child in psutil.Process().children(recursive=True):
        try:
            child.kill()
        except psutil.Error:
            pass


# --------------------------------------------------------------------------------------------
# feedback without hidden tests

def _hide_hidden_tests_class():
    from nbgrader.preprocessors import NbGraderPreprocessor

    class HideHiddenTests(NbGraderPreprocessor):
        """Remove the hidden tests' source from test cells and their tracebacks (which quote it)."""

        def preprocess_cell(self, cell, resources, index):
            if _role(_meta(cell)) == "tests":
                if "### BEGIN HIDDEN TESTS" in cell.source:
                    cell.source = HIDDEN.sub("# (hidden tests were run here)\n", cell.source)
                for output in cell.get("outputs", []):
                    if output.get("output_type") == "error":
                        output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
            return cell, resources
    return HideHiddenTests


def generate_feedback(course, lesson, students, out):
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import GetGrades
    from traitlets.config import Config

    config = copy.deepcopy(course.config)
    config.merge(Config({"GenerateFeedback": {"preprocessors": [GetGrades, CSSHTMLHeaderPreprocessor,
                                                                _hide_hidden_tests_class()]},
                         "Application": {"log_level": "ERROR"}}))
    cwd = os.getcwd()
    os.chdir(course.root)
    try:
        for student in students:
            coursedir = CourseDirectory(config=config)
            coursedir.assignment_id, coursedir.student_id = lesson, student
            converter = GenerateFeedback(coursedir=coursedir, config=config)
            converter.force = True
            converter.log.setLevel("ERROR")
            converter.start()
    finally:
        os.chdir(cwd)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for student in students:
        pages = sorted((course.feedback / student / lesson).glob("*.html"))
        if pages:
            shutil.copy(pages[0], out / "feedback" / f"{student}.html")


def failure_page(student, lesson, reason):
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(lesson)}: {html.escape(student)}"
            f"</title></head><body><h1>{html.escape(lesson)}</h1><p>Your submission could not be graded automatically: "
            f"<b>{html.escape(reason)}</b>.</p><p>Your instructor will look at it; nothing you submitted was lost."
            "</p></body></html>")


# --------------------------------------------------------------------------------------------
# report

def read_gradebook(course, lesson, students):
    """{student: {grade cell: (score or None if waiting for a human, max)}} for the graded students."""
    from nbgrader.api import Gradebook, MissingEntry
    scores = {}
    with Gradebook(course.db_url) as gb:
        for student in students:
            try:
                sub = gb.find_submission(lesson, student)
            except MissingEntry:
                continue
            cells = {}
            for nb in sub.notebooks:
                for g in nb.grades:
                    pending = g.needs_manual_grade and g.manual_score is None
                    cells[g.name] = (None if pending else float(g.score), float(g.max_score))
            scores[student] = cells
    return scores


def graded_cells(released_nbs):
    cells = []
    for nb in released_nbs:
        for c in nb.cells:
            meta = _meta(c)
            if meta and meta.get("grade"):
                cells.append((meta["grade_id"], float(meta.get("points", 0))))
    return cells


def _fmt(x):
    return "" if x is None else (f"{x:g}")


def write_reports(out, lesson, columns, results, scores, reviewed):
    rows = []
    for student in sorted(results):
        res = results[student]
        row = {"student": student}
        flags = res.get("flags", [])
        if res["status"] == "failed":
            status, cells = f"failed to run ({res['reason']})", {}
        else:
            cells = scores.get(student, {})
            pending = any(cells.get(cid, (None, 0))[0] is None for cid, _ in columns)
            status = "needs manual grading" if pending or (flags and student not in reviewed) else "graded"
        for cid, _ in columns:
            row[cid] = _fmt(cells[cid][0]) if cid in cells else ""
        known = [cells[cid][0] for cid, _ in columns if cid in cells and cells[cid][0] is not None]
        row["total"] = _fmt(sum(known)) if res["status"] != "failed" else ""
        row["max"] = _fmt(sum(p for _, p in columns))
        row["status"] = status
        row["flags"] = "; ".join(flags) + (" (reviewed)" if flags and student in reviewed else "")
        row["notes"] = "; ".join(res.get("notes", []))
        rows.append(row)
    fields = ["student"] + [cid for cid, _ in columns] + ["total", "max", "status", "flags", "notes"]
    with open(out / "grades.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    write_summary(out, lesson, columns, rows)
    return rows


def write_summary(out, lesson, columns, rows):
    graded = [r for r in rows if not r["status"].startswith("failed")]
    lines = [f"Lesson {lesson}: {len(rows)} submissions", ""]
    for status in sorted({r["status"].split(" (")[0] for r in rows}):
        lines.append(f"  {status:<22} {sum(r['status'].split(' (')[0] == status for r in rows)}")
    lines += ["", f"{'question (grade cell)':<32} {'max':>4} {'n':>4} {'mean':>6} {'full':>6} {'zero':>6} {'pending':>8}"]
    for cid, points in columns:
        values = [float(r[cid]) for r in graded if r[cid] != ""]
        pending = sum(r[cid] == "" for r in graded)
        mean = sum(values) / len(values) if values else float("nan")
        full = sum(v >= points for v in values) / len(values) if values else float("nan")
        zero = sum(v == 0 for v in values) / len(values) if values else float("nan")
        lines.append(f"{cid:<32} {points:>4g} {len(values):>4} {mean:>6.2f} {full:>6.0%} {zero:>6.0%} {pending:>8}")
    totals = [float(r["total"]) for r in graded if r["total"] != ""]
    if totals:
        lines += ["", f"total: mean {sum(totals) / len(totals):.2f} of {rows[0]['max']}, "
                      f"min {min(totals):g}, max {max(totals):g} over {len(totals)} graded submissions"]
    failed = [r for r in rows if r["status"].startswith("failed")]
    if failed:
        lines += ["", "Could not be graded (no score; look at autograde/submitted/<student>/ and logs/<student>.log):"]
        lines += [f"  {r['student']}: {r['status']}" for r in failed]
    flagged = [r for r in rows if r["flags"]]
    if flagged:
        lines += ["", "Flagged for review: the code rebinds names the tests rely on (add the id to reviewed.txt "
                      "once checked):"]
        lines += [f"  {r['student']}: {r['flags']}" for r in flagged]
    manual = [r["student"] for r in rows if r["status"] == "needs manual grading"]
    if manual:
        lines += ["", "Needs manual grading (nbgrader formgrader, or review the flags): " + ", ".join(manual)]
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    plot_summary(out / "summary.png", lesson, columns, graded)


def plot_summary(path, lesson, columns, graded):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # Okabe-Ito colours: safe for colour-blind readers
    kinds = [("full marks", "#009E73"), ("partial", "#E69F00"), ("zero", "#D55E00"), ("waiting for a human", "#999999")]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 0.45 * len(columns) + 2.2), gridspec_kw={"width_ratios": [3, 2]})
    n = max(len(graded), 1)
    for y, (cid, points) in enumerate(columns):
        vals = [r[cid] for r in graded]
        counts = [sum(v != "" and float(v) >= points for v in vals), sum(v != "" and 0 < float(v) < points for v in vals),
                  sum(v != "" and float(v) == 0 for v in vals), sum(v == "" for v in vals)]
        left = 0
        for (label, colour), count in zip(kinds, counts):
            ax.barh(y, count / n, left=left, color=colour, label=label if y == 0 else None)
            left += count / n
    ax.set_yticks(range(len(columns)), [f"{cid} ({p:g} pt)" for cid, p in columns])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of graded submissions")
    ax.set_title(f"{lesson}: score per question (n = {len(graded)})")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=4, fontsize=8, frameon=False)
    totals = [float(r["total"]) for r in graded if r["total"] != ""]
    top = sum(p for _, p in columns)
    ax2.hist(totals, bins=[x - 0.5 for x in range(int(top) + 2)], color="#0072B2", edgecolor="white")
    ax2.xaxis.get_major_locator().set_params(integer=True)
    ax2.yaxis.get_major_locator().set_params(integer=True)
    ax2.set_xlabel(f"total score (of {top:g})")
    ax2.set_ylabel("submissions")
    ax2.set_title("distribution of totals")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------------------------
# the command

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lesson")
    parser.add_argument("submissions", help="folder of LMS downloads, or the word `exchange`")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="students graded at once (default: number of cores)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="wall-clock cap per notebook in seconds (default 600); the per-cell limit is "
                             "Execute.timeout in nbgrader_config.py")
    parser.add_argument("--out", help="output folder (default autograde/runs/LESSON)")
    parser.add_argument("--force", action="store_true", help="grade every submission again, even unchanged ones")
    parser.add_argument("--root", default=str(ROOT), help="course root (default: this repository)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def main(argv=None):
    import nbformat
    from tqdm import tqdm

    args = parse_args(sys.argv[1:] if argv is None else argv)
    course = Course(args.root)
    lesson = args.lesson
    notebooks = course.notebooks(lesson)
    if not notebooks:
        raise SystemExit(f"lesson {lesson!r} has no released notebook in {course.release / lesson}: "
                         f"run `make release` first")
    out = Path(args.out).resolve() if args.out else course.root / "autograde" / "runs" / lesson
    for sub in ("sanitized", "results", "logs", "feedback"):
        (out / sub).mkdir(parents=True, exist_ok=True)

    # collect
    collect_notes = {}
    if args.submissions == "exchange":
        collect_exchange(course, lesson)
    else:
        collect_notes = collect_folder(course, lesson, args.submissions)
    students = sorted(p.parent.name for p in course.submitted.glob(f"*/{lesson}") if p.is_dir()
                      and STUDENT_ID.match(p.parent.name))

    released = {nb: nbformat.read(str(course.release / lesson / f"{nb}.ipynb"), as_version=4) for nb in notebooks}
    protected = set()
    for nb in notebooks:
        protected |= test_names(nbformat.read(str(course.source / lesson / f"{nb}.ipynb"), as_version=4))
    fingerprint = course.fingerprint(lesson)
    reviewed_file = out / "reviewed.txt"
    reviewed = set(reviewed_file.read_text().split()) if reviewed_file.exists() else set()

    # sanitize and scan (fast, in this process)
    results, todo = {}, []
    for student in students:
        src, notes, flags = course.submitted / student / lesson, list(collect_notes.get(student, [])), []
        dest = out / "sanitized" / student / lesson
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        key = hashlib.sha256(fingerprint.encode() + str(args.timeout).encode())
        failure = None
        submitted = sorted(p for p in src.glob("*.ipynb") if not p.name.startswith("."))
        for nb_name in notebooks:
            path = src / f"{nb_name}.ipynb"
            if not path.exists():
                others = [p for p in submitted if p.stem not in notebooks]
                if len(notebooks) == 1 and len(others) == 1:
                    path = others[0]
                    notes.append(f"notebook renamed to {path.name}: graded as {nb_name}.ipynb")
                else:
                    failure = failure or ("no notebook submitted" if not submitted else
                                          f"notebook {nb_name}.ipynb missing")
                    continue
            raw = path.read_bytes()
            key.update(raw)
            try:
                nb, repaired = sanitize(raw, released[nb_name])
            except Broken as err:
                failure = failure or str(err)
                continue
            notes += repaired
            flags += scan(nb, protected)
            nbformat.write(nb, str(dest / f"{nb_name}.ipynb"))
        for extra in src.iterdir():               # data files the student submitted (nbgrader overwrites course files)
            if extra.is_file() and extra.suffix != ".ipynb" and extra.name != "timestamp.txt":
                shutil.copy(extra, dest / extra.name)
        if (src / "timestamp.txt").exists():
            shutil.copy(src / "timestamp.txt", dest / "timestamp.txt")
        record = {"student": student, "key": key.hexdigest(), "notes": notes, "flags": flags}
        if failure:
            results[student] = dict(record, status="failed", reason=failure, seconds=0.0)
            continue
        previous = out / "results" / f"{student}.json"
        old = json.loads(previous.read_text()) if previous.exists() else None
        have = all((course.autograded / student / lesson / f"{nb}.ipynb").is_file() for nb in notebooks)
        if old and old.get("key") == record["key"] and not args.force and (old["status"] == "failed" or have):
            results[student] = old
        else:
            results[student] = record
            todo.append(student)

    # autograde the new or changed submissions in parallel, one process per student
    cap = args.timeout
    if todo:
        bar = tqdm(total=len(todo), desc=f"grading {lesson}", unit="nb", disable=args.quiet, file=sys.stderr)
        with concurrent.futures.ThreadPoolExecutor(max(1, args.workers)) as pool:
            jobs = {pool.submit(autograde, course, lesson, s, out / "sanitized", out, cap): s for s in todo}
            for job in concurrent.futures.as_completed(jobs):
                student = jobs[job]
                try:
                    ok, reason, seconds = job.result()
                except Exception as err:          # never let one student stop the batch
                    ok, reason, seconds = False, f"grading crashed: {err}", 0.0
                results[student].update(status="graded" if ok else "failed", reason=reason, seconds=round(seconds, 1))
                bar.set_postfix_str(f"{student}: {'ok' if ok else reason[:30]}")
                bar.update()
        bar.close()
    for student, res in results.items():
        (out / "results" / f"{student}.json").write_text(json.dumps(res, indent=1, sort_keys=True))

    # feedback and reports
    ok = [s for s in students if results[s]["status"] != "failed"]
    missing = [s for s in ok if not (out / "feedback" / f"{s}.html").exists()]
    if missing:
        generate_feedback(course, lesson, missing, out)
    for s in students:
        if results[s]["status"] == "failed":
            (out / "feedback" / f"{s}.html").write_text(failure_page(s, lesson, results[s]["reason"]))
    columns = graded_cells([released[nb] for nb in notebooks])
    rows = write_reports(out, lesson, columns, results, read_gradebook(course, lesson, ok), reviewed)
    if not args.quiet:
        print((out / "summary.txt").read_text())
        print(f"wrote {out / 'grades.csv'}, {out / 'summary.txt'}, {out / 'summary.png'} and {out / 'feedback'}/")
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker(*sys.argv[2:7]))
    main()
    sys.exit(0)
