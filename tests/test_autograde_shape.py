"""The grader's shape, measured from its source with `ast` so that it stays a newcomer can hold in their head
(issue 26): short functions, the batch's `run` on a screen, no code hidden in strings, one exception turned into
an exit status by the command line only, no import of the development package, one home for the sandbox's
defaults."""

import ast
import re
from pathlib import Path

import pytest

from autograde import batch, cli
from autograde.course import HOME, PACKAGE
from autograde.sandbox import Limits, parse_size

SOURCES = sorted(PACKAGE.glob("*.py"))
LONGEST_FUNCTION = 60  # lines, decorators and docstring included
LONGEST_RUN = 40  # batch.run: the phases declared in PHASES, run in order
LONGEST_CODE_STRING = 20  # lines of a string that is not a docstring


def tree(path):
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def functions(path):
    return [n for n in ast.walk(tree(path)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def length(node):
    return node.end_lineno - min([node.lineno, *(d.lineno for d in node.decorator_list)]) + 1


def docstrings(module):
    """The string constants that are docstrings (of the module, its classes and functions)."""
    owners = [module, *(n for n in ast.walk(module) if isinstance(n, (ast.ClassDef, ast.FunctionDef)))]
    return {id(o.body[0].value) for o in owners if o.body and isinstance(o.body[0], ast.Expr)}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_function_of_the_grader_is_long(path):
    long = [f"{f.name} ({length(f)} lines)" for f in functions(path) if length(f) > LONGEST_FUNCTION]
    assert not long, f"{path.name}: split {', '.join(long)} (at most {LONGEST_FUNCTION} lines)"


def test_the_batch_fits_on_a_screen():
    run = next(f for f in functions(Path(batch.__file__)) if f.name == "run")
    assert length(run) <= LONGEST_RUN, f"batch.run has {length(run)} lines: declare a phase in PHASES instead"
    assert [name for name, _ in batch.PHASES][0] == "start" and all(callable(p) for _, p in batch.PHASES)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_code_lives_in_a_long_string(path):
    module = tree(path)
    skip = docstrings(module)
    long = [
        node.lineno
        for node in ast.walk(module)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and node.value.count("\n") > LONGEST_CODE_STRING
    ]
    assert not long, f"{path.name}: strings of more than {LONGEST_CODE_STRING} lines at lines {long}: make them modules"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_only_the_command_line_exits_and_the_grader_imports_no_development_code(path):
    module = tree(path)
    names = {n.id for n in ast.walk(module) if isinstance(n, ast.Name)}
    if path.name != "cli.py":
        assert "SystemExit" not in names, f"{path.name}: raise GradingError; only cli.console turns it into an exit"
    imported = {n.module or "" for n in ast.walk(module) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(module) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m.split(".")[0] == "course_dev" for m in imported), f"{path.name} imports course_dev"


def test_the_sandbox_defaults_have_one_home():
    """The command's options and the instructor guide's table show the defaults of sandbox.Limits."""
    assert cli.parse_args(["L", "folder"]).limits == Limits()
    table = (HOME / "autograde" / "README.md").read_text(encoding="utf-8")
    for option, name, _ in cli.LIMIT_OPTIONS:
        row = re.search(rf"^\s*\| `{option} \w+` \| `?([^`|]+?)`? \|", table, re.M)
        assert row, f"autograde/README.md has no row for {option}"
        shown = row.group(1)
        assert (int(shown) if name in cli.COUNTS else parse_size(shown)) == getattr(Limits(), name), (option, shown)
