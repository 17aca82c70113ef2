"""Start the class's JupyterHub on this machine (`make hub`): prints the address and the passwords.

    python hub/start.py          (the course's venv first on PATH; make hub does that)

The passwords come from HUB_PASSWORD / HUB_ADMIN_PASSWORD, or are made once and kept in
<HUB_STATE>/passwords.toml (readable only by you). Stop the hub with Ctrl+C: it stops every user's server.
"""

import os
import secrets
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE = Path(os.environ.get("HUB_STATE", HERE.parent / ".hub")).resolve()


def passwords():
    path = STATE / "passwords.toml"
    if not path.is_file():
        STATE.mkdir(parents=True, exist_ok=True)
        path.write_text(f'students = "{secrets.token_urlsafe(9)}"\ninstructors = "{secrets.token_urlsafe(24)}"\n')
        path.chmod(0o600)
    saved = tomllib.loads(path.read_text())
    return (
        os.environ.get("HUB_PASSWORD") or saved["students"],
        os.environ.get("HUB_ADMIN_PASSWORD") or saved["instructors"],
    )


def enrol(course_root, students):
    """Put the class (hub/class.toml) in nbgrader's student list: the formgrader lists them, and the grading
    command gives each a row in grades.csv, `not submitted` for those who did not hand a lesson in."""
    from nbgrader.api import Gradebook

    from autograde.course import Course
    from autograde.gradebook import schema_version_in_process

    course = Course(course_root)
    schema_version_in_process()  # a new class's gradebook: no `alembic heads` subprocess
    with Gradebook(course.db_url, course.course_id) as gradebook:
        for student in students:
            gradebook.update_or_create_student(student)


def main():
    if not (HERE / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        raise SystemExit(
            "JupyterHub's proxy is missing: run `make hub` (it installs it with npm into hub/node_modules)"
        )
    student, instructor = passwords()
    cls = tomllib.loads((HERE / "class.toml").read_text())
    port = os.environ.get("HUB_PORT", "8000")
    enrol(os.environ.get("HUB_COURSE_ROOT", HERE.parent), cls["students"])
    print(
        f"JupyterHub for {cls['course_id']} at http://127.0.0.1:{port}/\n"
        f"  students {', '.join(cls['students'])}: password {student}\n"
        f"  instructors {', '.join(cls['instructors'])}: password {instructor}\n"
        f"  formgrader: open http://127.0.0.1:{port}/user/{cls['instructors'][0]}/formgrader in its own tab\n"
        f"  state (homes, exchange, hub database): {STATE}",
        flush=True,
    )
    env = dict(os.environ, HUB_PASSWORD=student, HUB_ADMIN_PASSWORD=instructor, HUB_STATE=str(STATE))
    os.chdir(STATE)
    jupyterhub = str(Path(sys.executable).parent / "jupyterhub")
    os.execve(jupyterhub, [jupyterhub, "-f", str(HERE / "jupyterhub_config.py")], env)


if __name__ == "__main__":
    main()
