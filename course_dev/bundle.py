"""Write the student bundle: what a student needs, and nothing an instructor must keep.

    python -m course_dev.bundle dist/student-bundle      -> that folder and dist/student-bundle.zip

Contents: notebooks/, the helper package, pyproject.toml, a student Makefile, README, nbconvert settings and
nbgrader settings for Validate (tools/student/; only the cells the checks depend on run, as when grading:
autograde/prune.py, copied as .validate/prune.py, with notebooks/.release_cells.json), and requirements.txt /
environment.yml with the course's runtime packages only (`STUDENT_PACKAGES`), at the course's pins. Never:
solutions/, tests/, autograde/ (gradebook, submissions), course_dev/, tools/, and none of the instructor's or
developer's tools (jupyterhub, pytest, playwright, ruff, a database driver).
"""

import re
import shutil
import sys
from pathlib import Path

from course_dev.paths import ROOT

STUDENT_FILES = ["notebooks", "attention_course", "pyproject.toml"]
# What the notebooks and JupyterLab need on a student's machine. nbgrader gives the Validate button and the
# exchange's Assignment List; nbconvert and nbclient run a notebook headless; latex2mathml draws the maths of a
# notebook saved as HTML.
STUDENT_PACKAGES = [
    "numpy",
    "torch",
    "matplotlib",
    "ipywidgets",
    "ipykernel",
    "jupyterlab",
    "notebook",
    "nbgrader",
    "nbclient",
    "jupyter_client",  # make run patches one of its private methods (attention_course/nbclient_fix.py)
    "nbformat",
    "nbconvert",
    "latex2mathml",
]
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")
PIN = re.compile(r"^(\s*-\s*)?([A-Za-z0-9_.-]+)==")


def lessons_section():
    """README's "Lessons" section (each lesson's time, how it is counted, what you build and see): the lessons cite it
    as (README, "Lessons"), so the student copy's README ends with it."""
    text = (ROOT / "README.md").read_text()
    start = text.index("## Lessons")
    return text[start : text.index("\n## ", start + 1)].rstrip() + "\n"


def only_runtime(text):
    """The lines of a pins file (requirements.txt or environment.yml) that are not another package's pin."""
    keep = []
    for line in text.splitlines():
        pin = PIN.match(line)
        if pin and pin.group(2).lower() not in STUDENT_PACKAGES:
            continue
        keep.append(line)
    return "\n".join(keep) + "\n"


def build(dest):
    dest = Path(dest).resolve()
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in STUDENT_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=IGNORE)
        else:
            shutil.copy(src, dest / name)
    for pins in ("requirements.txt", "environment.yml"):
        note = "# The student copy (course_dev/bundle.py): the course's runtime packages only, at its pins.\n"
        (dest / pins).write_text(note + only_runtime((ROOT / pins).read_text()))
    # Validate's settings (cell timeout, warnings); nbconvert's (HTML that fetches nothing)
    for name in ("Makefile", "nbgrader_config.py", "jupyter_nbconvert_config.py"):
        shutil.copy(ROOT / "tools" / "student" / name, dest / name)
    for name in ("labconfig", "labsettings"):  # no instructor tools in JupyterLab; no news pop-up
        shutil.copytree(ROOT / "tools" / "student" / name, dest / name)
    readme = (ROOT / "tools" / "student" / "README.md").read_text()
    (dest / "README.md").write_text(readme.rstrip() + "\n\n" + lessons_section())
    (dest / ".validate").mkdir()
    shutil.copy(ROOT / "autograde" / "prune.py", dest / ".validate" / "prune.py")
    archive = shutil.make_archive(str(dest), "zip", root_dir=dest.parent, base_dir=dest.name)
    return dest, Path(archive)


if __name__ == "__main__":
    folder, archive = build(sys.argv[1] if len(sys.argv) > 1 else ROOT / "dist" / "student-bundle")
    print(f"student bundle: {folder}\n               {archive}")
