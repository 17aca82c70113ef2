"""Write the student bundle: what a student needs, and nothing an instructor must keep.

    python -m course_dev.bundle dist/student-bundle      -> that folder and dist/student-bundle.zip

Contents: notebooks/, the helper package, requirements.txt, pyproject.toml, a student Makefile and
README. Never: solutions/, tests/, autograde/ (gradebook, submissions), course_dev/, tools/.
"""

import shutil
import sys
from pathlib import Path

from course_dev.paths import ROOT

STUDENT_FILES = ["notebooks", "attention_course", "requirements.txt", "pyproject.toml", "environment.yml"]
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")


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
    shutil.copy(ROOT / "tools" / "student" / "Makefile", dest / "Makefile")
    shutil.copy(ROOT / "tools" / "student" / "README.md", dest / "README.md")
    archive = shutil.make_archive(str(dest), "zip", root_dir=dest.parent, base_dir=dest.name)
    return dest, Path(archive)


if __name__ == "__main__":
    folder, archive = build(sys.argv[1] if len(sys.argv) > 1 else ROOT / "dist" / "student-bundle")
    print(f"student bundle: {folder}\n               {archive}")
