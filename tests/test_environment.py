"""The set-up files agree with each other, and committed notebooks carry no outputs."""

import json
import re
import subprocess

import pytest
from harness import ROOT

pytestmark = pytest.mark.xdist_group("environment")


def pins(lines):
    return {
        m.group(1).lower(): m.group(2) for line in lines if (m := re.match(r"\s*-?\s*([A-Za-z0-9_.\-]+)==(\S+)", line))
    }


def test_environment_yml_matches_requirements():
    req = pins((ROOT / "requirements.txt").read_text().splitlines())
    env = pins((ROOT / "environment.yml").read_text().splitlines())
    assert req["torch"] == "2.13.0", "torch must stay at 2.13.0: other releases pull multi-GB CUDA builds"
    assert req == env, f"requirements.txt and environment.yml differ: {set(req.items()) ^ set(env.items())}"


def not_wanted(makefile):
    """The packages a Makefile uninstalls after installing the pins (its NOT_WANTED)."""
    return re.search(r"^NOT_WANTED := (.+)$", (ROOT / makefile).read_text(), re.M).group(1).split()


def test_no_package_makes_every_jupyter_process_start_slowly():
    """The Makefiles uninstall what they call NOT_WANTED, and Binder's postBuild the same: rfc3987-syntax, which
    jsonschema imports whenever it can and which then builds a parser (about 1 s of CPU in every process that imports
    nbformat)."""
    import importlib.util

    gone = not_wanted("Makefile")
    assert "rfc3987-syntax" in gone
    assert not_wanted("tools/student/Makefile") == gone, "the student bundle leaves out the same packages"
    binder = re.search(r"pip uninstall --yes --quiet (.+)$", (ROOT / "postBuild").read_text(), re.M).group(1).split()
    assert binder == gone, "Binder's postBuild leaves out the same packages"
    still_there = [name for name in gone if importlib.util.find_spec(name.replace("-", "_"))]
    assert not still_there, f"{still_there} installed: run `make venv` (it uninstalls them)"


def test_every_requirement_is_pinned_exactly():
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert "==" in line, f"not pinned exactly: {line}"


def test_committed_notebooks_have_no_outputs():
    tracked = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    for path in tracked or [str(p.relative_to(ROOT)) for p in ROOT.glob("[sn]*/*/*.ipynb")]:
        nb = json.loads((ROOT / path).read_text())
        for cell in nb["cells"]:
            assert not cell.get("outputs") and cell.get("execution_count") is None, f"{path} has outputs: strip them"


def test_ci_calls_make_test_and_readme_shows_both_commands():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme


def test_xdist_groups_are_honoured(request):
    """Tests of one lesson share a kernel only if pytest-xdist keeps their group on one worker
    (pytest 9 silently broke that with pytest-xdist 3.8: every notebook then ran twice)."""
    if getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@environment"), request.node.nodeid
