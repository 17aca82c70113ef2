"""JupyterHub for a class of the course: `make hub` (a demo class on this machine) or `jupyterhub -f` on a server.

Who is in the class: hub/class.toml. Everything the hub writes (its database, the users' homes, the
nbgrader exchange) goes under HUB_STATE (default .hub/ in the repository, git-ignored).

Environment:
    HUB_PORT        port on 127.0.0.1 (default 8000); the hub's API and the proxy's take the next two
    HUB_STATE       state folder (default <repo>/.hub)
    HUB_PASSWORD    the class's shared password (at least 8 characters; make hub makes one and prints it)
    HUB_ADMIN_PASSWORD  the instructors' password (at least 32 characters, not HUB_PASSWORD)
    HUB_COURSE_ROOT the instructors' course folder (default: this repository)
    HUB_API_TOKEN   optional: a token for scripts and tests (an admin service named "class-admin")
    ATTENTION_COURSE_DB optional: the gradebook (e.g. postgresql://…); default: the course's SQLite file

The demo spawner runs every user's server as the hub's own Unix user, with a home of its own under
HUB_STATE; on a real server use system accounts (LocalProcessSpawner) or containers (see README).
"""

import contextlib
import os
import shutil
import sys
import tomllib
from pathlib import Path

from tornado.web import RedirectHandler

c = get_config()  # noqa: F821  (provided by traitlets)

REPO = Path(__file__).resolve().parents[1]
CLASS = tomllib.loads((REPO / "hub" / "class.toml").read_text())
STATE = Path(os.environ.get("HUB_STATE", REPO / ".hub")).resolve()
COURSE_ROOT = Path(os.environ.get("HUB_COURSE_ROOT", REPO)).resolve()
STUDENT_TOOLS = REPO / "tools" / "student"  # Validate's settings and the student's JupyterLab page settings
EXCHANGE = STATE / "exchange"
BIN = Path(sys.executable).parent  # the course's venv: the same packages for the hub and every user
INSTRUCTORS, STUDENTS = set(CLASS["instructors"]), set(CLASS["students"])

# JupyterLab's defaults in the venv every user's server runs (what `make hub` installs; again here for
# `jupyterhub -f`): no pop-up asking to fetch Jupyter's news (LabApp.news_url = None, below, does not stop the
# question), and "(view feedback)" in the Assignment List opens the feedback page (tools/student/labextension).
LAB_SHARE = Path(sys.prefix) / "share" / "jupyter"
with contextlib.suppress(OSError):  # a read-only environment keeps what its image installed
    (LAB_SHARE / "lab" / "settings").mkdir(parents=True, exist_ok=True)
    shutil.copy(STUDENT_TOOLS / "labsettings" / "overrides.json", LAB_SHARE / "lab" / "settings" / "overrides.json")
    shutil.copytree(STUDENT_TOOLS / "labextension", LAB_SHARE / "labextensions", dirs_exist_ok=True)

for folder in (STATE, EXCHANGE, STATE / "home"):
    folder.mkdir(parents=True, exist_ok=True)
EXCHANGE.chmod(0o1777)  # nbgrader's exchange: writable by all, sticky

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(os.environ.get("HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
# The hub's and the proxy's own APIs on the two ports after HUB_PORT (JupyterHub's fixed 8081 and 8001 would make a
# second hub on this machine, such as a test's, talk to the first one's proxy).
c.JupyterHub.hub_port = c.JupyterHub.port + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{c.JupyterHub.port + 2}"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.command = [str(REPO / "hub" / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")

# A demo class: one shared password for students, another for instructors (who are hub admins).
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ.get("HUB_PASSWORD", "")
c.SharedPasswordAuthenticator.admin_password = os.environ.get("HUB_ADMIN_PASSWORD", "")
c.Authenticator.allowed_users = INSTRUCTORS | STUDENTS
c.Authenticator.admin_users = INSTRUCTORS

if os.environ.get("HUB_API_TOKEN"):
    c.JupyterHub.services = [{"name": "class-admin", "api_token": os.environ["HUB_API_TOKEN"]}]
    c.JupyterHub.load_roles = [
        {
            "name": "class-admin",
            "services": ["class-admin"],
            "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
        }
    ]

# Every user's server: the course's venv, JupyterLab, a home under STATE.
c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.args = ["--allow-root"] if os.geteuid() == 0 else []
c.Spawner.environment = {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
c.Spawner.http_timeout = 60
c.Spawner.start_timeout = 120

# nbgrader's formgrader, in its own tab, links a lesson's folder and its Preview to /tree/… without the
# server's /user/<name>/ prefix (its links assume a server at the root). The hub sends such a link on to
# the user's own server. (The hub adds its /hub/ prefix to these patterns. JupyterHub logs that
# extra_handlers is deprecated in favour of services, but a service only answers under /services/.)
c.JupyterHub.extra_handlers = [
    (r"/(tree|notebooks|edit)/(.*)", RedirectHandler, {"url": "/hub/user-redirect/lab/tree/{1}", "permanent": False})
]


def nbgrader_config(name):
    """Each user's nbgrader configuration: the course, the exchange, who they are; the course root for instructors."""
    lines = [
        f"c.CourseDirectory.course_id = {CLASS['course_id']!r}",
        f"c.Exchange.root = {str(EXCHANGE)!r}",
        f"c.CourseDirectory.student_id = {name!r}",
        # The demo servers share one Unix user: every submission is owned by it, and nbgrader's owner check
        # would call each one a cheating attempt. With system accounts or containers, leave it on.
        "c.ExchangeCollect.check_owner = False",
        "c.ExchangeFactory.submit = 'autograde.exchange.SubmitWithoutCheckpoints'  # no checkpoint logged as EXTRA",
        # Validate's settings (cell timeout, warnings), the same as the student bundle's and the course's
        f"load_subconfig({str(STUDENT_TOOLS / 'nbgrader_config.py')!r})",
    ]
    if name in INSTRUCTORS:
        lines.append(f"load_subconfig({str(COURSE_ROOT / 'nbgrader_config.py')!r})")
        lines.append("c.CourseDirectory.student_id = '*'")
    return "c = get_config()  # noqa: F821\n" + "\n".join(lines) + "\n"


def server_config(home):
    """Each user's Jupyter server: terminals start with the course's shell set-up (below); a notebook saved
    as HTML carries its maths as MathML, so it renders without the internet."""
    shell = [shutil.which("bash") or "/bin/bash", "--rcfile", str(home / ".course_shell"), "-i"]
    return (
        "c = get_config()  # noqa: F821\n"
        f"c.ServerApp.terminado_settings = {{'shell_command': {shell!r}}}\n"
        "c.HTMLExporter.preprocessors = ['attention_course.offline_maths.MathML']\n"
        "c.LabApp.news_url = None  # no pop-up asking to fetch JupyterLab's news\n"
    )


def shell_setup(name):
    """A terminal's start-up: the course's .venv first on PATH (a login shell would reset PATH), and for
    instructors the course folder, where `make grade …` and `make lms …` run."""
    lines = ["[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc", f'export PATH="{BIN}:$PATH"']
    if name in INSTRUCTORS:
        # A terminal opened in a folder of the course stays there; anywhere else, the instructor's home included
        # (under the hub's state folder, which by default is inside the course), it starts in the course folder.
        course = f'cd "{COURSE_ROOT}"'
        lines.append(f'case "$PWD/" in "{STATE}/"*) {course} ;; "{COURSE_ROOT}/"*) ;; *) {course} ;; esac')
    return "# Written by hub/jupyterhub_config.py at every start of this server.\n" + "\n".join(lines) + "\n"


START_HERE = """# Your lessons

Your lessons come from your instructor through nbgrader: open the menu **Nbgrader → Assignment List**.

1. Under *Released assignments*, **Fetch** a lesson: its folder appears here, in your home.
2. Open its notebook and work through it. The **Validate** button runs all its visible checks.
3. When you are done, save, then **Submit** in the Assignment List. You can submit again until the deadline:
   the latest submission is graded.
4. After grading, **Fetch Feedback** there, then **(view feedback)** beside your submission: your page opens in
   a browser tab. It is kept in the lesson's `feedback/` folder.
"""


def prepare_home(spawner):
    """Before a server starts: its home, its configuration, and (instructors) the course folder."""
    name = spawner.user.name
    home = Path(spawner.home_dir)
    (home / ".jupyter").mkdir(parents=True, exist_ok=True)
    (home / ".jupyter" / "nbgrader_config.py").write_text(nbgrader_config(name))
    (home / ".jupyter" / "jupyter_server_config.py").write_text(server_config(home))
    (home / ".course_shell").write_text(shell_setup(name))
    shutil.copy(STUDENT_TOOLS / "jupyter_nbconvert_config.py", home / ".jupyter")  # nbconvert: HTML fetches nothing
    if name in INSTRUCTORS:
        spawner.notebook_dir = str(COURSE_ROOT)  # formgrader needs the course inside the server's root
        extra = {"ATTENTION_COURSE_EXCHANGE": str(EXCHANGE)}  # for `make grade … exchange` in a terminal
        if os.environ.get("ATTENTION_COURSE_DB"):
            extra["ATTENTION_COURSE_DB"] = os.environ["ATTENTION_COURSE_DB"]
        spawner.environment = dict(spawner.environment, **extra)
    else:
        # Students see the Assignment List and Validate, not the instructor's tools (Create Assignment, the
        # formgrader, the course list): the same JupyterLab page settings as `make lab` and the student bundle.
        shutil.copytree(STUDENT_TOOLS / "labconfig", home / ".jupyter" / "labconfig", dirs_exist_ok=True)
        if not (home / "START_HERE.md").exists():  # a new student's empty home says where the lessons are,
            (home / "START_HERE.md").write_text(START_HERE)  # and their first JupyterLab opens it
            spawner.default_url = "/lab/tree/START_HERE.md"


c.Spawner.pre_spawn_hook = prepare_home
