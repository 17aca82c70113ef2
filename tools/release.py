"""Regenerate the student notebooks: solutions/<lesson>/ -> notebooks/<lesson>/ with nbgrader generate_assignment.

    python tools/release.py [--root COURSE_ROOT] [LESSON ...]     (all lessons by default)

Runs nbgrader in one process for all lessons, records them in the gradebook, and fails loudly
if nbgrader reports an error (the nbgrader command line would exit 0 on some failures).
"""
import argparse
import os
import sys
from pathlib import Path

from nbgrader.apps import NbGraderAPI
from traitlets.config.loader import PyFileConfigLoader

ROOT = Path(__file__).resolve().parents[1]
# nbgrader calls `alembic` and starts kernels with the first `python` on PATH: make them this interpreter's.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")


def lessons(root):
    return sorted(p.name for p in (root / "solutions").iterdir() if (p / f"{p.name}.ipynb").is_file())


def release(root, names=None):
    root = Path(root).resolve()
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    (root / "autograde").mkdir(exist_ok=True)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        api = NbGraderAPI(config=config)
        for name in names or lessons(root):
            result = api.generate_assignment(name, force=True)
            if not result["success"]:
                details = result.get("log", "") + (result.get("error") or "")
                raise SystemExit(f"nbgrader generate_assignment {name} failed:\n{details}")
            print(f"released {name} -> notebooks/{name}/")
    finally:
        os.chdir(cwd)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=ROOT, help="course root (default: this repository)")
    parser.add_argument("lessons", nargs="*")
    args = parser.parse_args()
    release(args.root, args.lessons)
    sys.exit(0)
