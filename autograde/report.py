"""Step 6, report: grades.csv (one row per submitted file), summary.txt and summary.png."""

import csv
import re

from .messages import Status

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$")


def safe_cell(value):
    """A CSV cell a spreadsheet shows as text: one that starts like a formula (= + - @, tab, CR) gets
    a leading apostrophe (OWASP's advice on CSV injection); plain numbers are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not NUMBER.match(value):
        return "'" + value
    return value


def fmt(x):
    return "" if x is None else f"{x:g}"


def student_status(record, cells, columns, flags, reviewed):
    """(status, reason) of a student a worker graded (a messages.StudentRecord): failed to run (and why), needs
    manual grading (a score waits for a human, or a flag for review), or graded."""
    if record.failed:
        return Status.FAILED, record.reason
    pending = any(cells.get(cid, (None, 0))[0] is None for cid, _ in columns)
    flagged = flags and record.student not in reviewed
    return (Status.NEEDS_MANUAL if pending or flagged else Status.GRADED), ""


def rows_for(entries, records, scores, columns, reviewed):
    """One row per entry (submitted file, collect.Entry); records: {student: messages.StudentRecord}."""
    rows = []
    for entry in entries:
        record = records.get(entry.student)
        row = {"student": entry.student, "file": entry.file}
        flags = list(entry.flags)
        notes = list(entry.notes)
        if entry.status:  # superseded, extra file: not graded as such
            (status, reason), cells = (entry.status, entry.reason), {}
        elif record is None:
            (status, reason), cells = (Status.FAILED, "no notebook submitted"), {}
        else:
            cells = scores.get(entry.student, {}) if not record.failed else {}
            flags += [f for f in record.flags if f not in flags]
            notes += [n for n in record.notes if n not in notes]
            status, reason = student_status(record, cells, columns, flags, reviewed)
        for cid, _ in columns:
            row[cid] = fmt(cells[cid][0]) if cid in cells else ""
        known = [cells[cid][0] for cid, _ in columns if cid in cells and cells[cid][0] is not None]
        row["total"] = fmt(sum(known)) if cells else ""
        row["max"] = fmt(sum(p for _, p in columns))
        row["status"], row["reason"] = Status(status).value, reason
        row["flags"] = "; ".join(flags) + (" (reviewed)" if flags and entry.student in reviewed else "")
        row["notes"] = "; ".join(notes)
        rows.append(row)
    return rows


NOT_SUBMITTED = Status.NOT_SUBMITTED.value


def not_submitted_rows(expected, rows, columns):
    """A row for each expected student (the roster, nbgrader's student list) who has no row: nothing was submitted."""
    have = {r["student"] for r in rows}
    blank = {"file": "", **{cid: "" for cid, _ in columns}, "total": "", "max": fmt(sum(p for _, p in columns))}
    return [
        {"student": s, **blank, "status": NOT_SUBMITTED, "reason": "", "flags": "", "notes": ""}
        for s in sorted(set(expected) - have)
    ]


def write(out, lesson, columns, rows, isolation):
    fields = ["student", "file"] + [cid for cid, _ in columns] + ["total", "max", "status", "reason", "flags", "notes"]
    tmp = out / "grades.csv.tmp"
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: safe_cell(v) for k, v in row.items()} for row in rows)
    tmp.replace(out / "grades.csv")
    write_summary(out, lesson, columns, rows, isolation)


def write_summary(out, lesson, columns, rows, isolation):
    graded = [r for r in rows if r["status"] in (Status.GRADED, Status.NEEDS_MANUAL)]
    lines = [
        f"Lesson {lesson}: {sum(r['status'] != NOT_SUBMITTED for r in rows)} submitted files, "
        f"{len({r['student'] for r in rows})} students",
        f"Isolation: {isolation}",
        "",
    ]
    for status in sorted({r["status"] for r in rows}):
        lines.append(f"  {status:<22} {sum(r['status'] == status for r in rows)}")
    lines += [
        "",
        f"{'question (grade cell)':<32} {'max':>4} {'n':>4} {'mean':>6} {'full':>6} {'zero':>6} {'pending':>8}",
    ]
    for cid, points in columns:
        values = [float(r[cid]) for r in graded if r[cid] != ""]
        pending = sum(r[cid] == "" for r in graded)
        if values:
            mean = f"{sum(values) / len(values):.2f}"
            full = f"{sum(v >= points for v in values) / len(values):.0%}"
            zero = f"{sum(v == 0 for v in values) / len(values):.0%}"
        else:  # nobody has a score for it yet (a free answer waiting for a human): nothing to average
            mean = full = zero = "-"
        lines.append(f"{cid:<32} {points:>4g} {len(values):>4} {mean:>6} {full:>6} {zero:>6} {pending:>8}")
    totals = [float(r["total"]) for r in graded if r["total"] != ""]
    if totals:
        lines += [
            "",
            f"total: mean {sum(totals) / len(totals):.2f} of {rows[0]['max']}, "
            f"min {min(totals):g}, max {max(totals):g} over {len(totals)} graded submissions",
        ]
    failed = [r for r in rows if r["status"] == Status.FAILED]
    if failed:
        lines += ["", "Could not be graded (no score; look at submitted/<student>/ and logs/<student>.log):"]
        lines += [f"  {r['student']} ({r['file']}): {r['status']} ({r.get('reason', '')})" for r in failed]
    flagged = [r for r in rows if r["flags"]]
    if flagged:
        lines += [
            "",
            "Flagged for review (tampering, or a name that is not a known student id; add the id to "
            "reviewed.txt once checked):",
        ]
        lines += [f"  {r['student']}: {r['flags']}" for r in flagged]
    graded_or_not = (Status.GRADED, Status.NEEDS_MANUAL, Status.FAILED, Status.NOT_SUBMITTED)
    other = [r for r in rows if r["status"] not in graded_or_not]
    if other:
        lines += ["", "Files not graded themselves:"] + [
            f"  {r['student']} ({r['file']}): {r['status']}" for r in other
        ]
    missing = [r["student"] for r in rows if r["status"] == NOT_SUBMITTED]
    if missing:
        lines += ["", "Not submitted (on the roster or in nbgrader's student list): " + ", ".join(missing)]
    manual = [r["student"] for r in rows if r["status"] == Status.NEEDS_MANUAL]
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
        counts = [
            sum(v != "" and float(v) >= points for v in vals),
            sum(v != "" and 0 < float(v) < points for v in vals),
            sum(v != "" and float(v) == 0 for v in vals),
            sum(v == "" for v in vals),
        ]
        left = 0
        for (label, colour), count in zip(kinds, counts):
            ax.barh(y, count / n, left=left, color=colour, label=label if y == 0 else None)
            left += count / n
    ax.set_yticks(range(len(columns)), [f"{cid} ({p:g} pt)" for cid, p in columns])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of graded submissions")
    ax.set_title(f"{lesson}: score per question (n = {len(graded)})")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=4, fontsize=9, frameon=False)
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
