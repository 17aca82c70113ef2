"""The sandbox (autograde/sandbox.py) overrides private methods of jupyter_client's AsyncKernelManager: they are
tested against the pinned version (requirements.txt and environment.yml pin the same one), so that an upgrade
that renames or reshapes them fails here, not silently in a grading run. Fast, no kernel."""

import inspect
import re
from importlib.metadata import version
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from autograde.sandbox import SandboxKernelManager

ROOT = Path(__file__).resolve().parents[1]
OVERRIDDEN = ("_async_pre_start_kernel", "_async_launch_kernel", "_async_cleanup_resources")
# what nbclient calls on the kernel manager: AsyncKernelManager binds these to KernelManager's coroutines when the
# class is made, so an override is reached only where one of them calls it through `self`
ENTRY_POINTS = ("_async_start_kernel", "_async_shutdown_kernel")


def pinned(text, name):
    found = re.search(rf"^\s*-?\s*{re.escape(name)}==([\w.]+)", text, re.M)
    return found.group(1) if found else None


def test_jupyter_client_is_pinned_alike_and_installed_at_the_pin():
    pins = {f: pinned((ROOT / f).read_text(), "jupyter_client") for f in ("requirements.txt", "environment.yml")}
    assert set(pins.values()) == {version("jupyter_client")}, pins


def test_the_sandboxs_overrides_match_the_pinned_methods():
    for name in OVERRIDDEN:
        theirs, ours = getattr(AsyncKernelManager, name, None), SandboxKernelManager.__dict__.get(name)
        assert theirs is not None and ours is not None, name
        assert inspect.iscoroutinefunction(theirs) == inspect.iscoroutinefunction(ours), name
        mine = inspect.signature(ours).parameters
        for param in inspect.signature(theirs).parameters.values():
            assert param.name in mine or any(p.kind is p.VAR_KEYWORD for p in mine.values()), (name, param.name)


def test_every_override_is_reached_from_what_nbclient_calls():
    """An override of a method that AsyncKernelManager's public names bind directly (as `shutdown_kernel` binds
    KernelManager._async_shutdown_kernel) would never run."""
    called = "".join(inspect.getsource(getattr(AsyncKernelManager, name)) for name in ENTRY_POINTS)
    for name in [n for n in vars(SandboxKernelManager) if n.startswith("_async_")]:
        assert f"self.{name}(" in called, f"{name} is overridden but nothing nbclient calls reaches it"


def test_the_gradebook_schema_version_read_in_process_is_the_one_alembic_prints(tmp_path):
    """gradebook.schema_version_in_process replaces nbgrader's `alembic heads` subprocess: same answer, and nbgrader's
    Gradebook still asks through nbgrader.api.get_alembic_version for a new database (so the replacement is reached)."""
    import subprocess

    import nbgrader.api
    from nbgrader.dbutil import _temp_alembic_ini

    from autograde import gradebook
    from course_dev.env import use_this_python

    assert "get_alembic_version()" in inspect.getsource(nbgrader.api.Gradebook.__init__)
    use_this_python()
    with _temp_alembic_ini(f"sqlite:///{tmp_path / 'unused.db'}") as ini:
        printed = subprocess.run(["alembic", "-c", ini, "heads"], capture_output=True, text=True, check=True).stdout
    gradebook.schema_version_in_process()
    assert nbgrader.api.get_alembic_version() == printed.split()[0]
    with nbgrader.api.Gradebook(f"sqlite:///{tmp_path / 'new.db'}") as gb:
        stamped = gb.db.execute(nbgrader.api.text("SELECT version_num FROM alembic_version")).scalar()
    assert stamped == printed.split()[0]
