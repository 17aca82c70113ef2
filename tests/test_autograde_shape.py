"""The grader's shape, measured from its source with `ast` so that it stays a newcomer can hold in their head
(issue 26): short functions, the batch's `run` on a screen, no code hidden in strings, one exception turned into
an exit status by the command line only, no import of the development package, one home for the sandbox's
defaults, no import cycle, and no step below the batch that takes the `Batch`. Short functions, no cycle and no
code in long strings hold for the other packages and the tests too (issue 30)."""

import ast
import re
from pathlib import Path

import pytest

from autograde import batch, cli
from autograde.course import HOME, PACKAGE
from autograde.sandbox import Limits, parse_size

SOURCES = sorted(PACKAGE.glob("*.py"))
PACKAGES = ("autograde", "course_dev", "attention_course")
# Every Python file of the project: the packages, the hub's configuration, the tests (their fixtures included).
EVERYWHERE = sorted(
    [*(path for package in PACKAGES for path in (HOME / package).glob("*.py")), *(HOME / "hub").glob("*.py")]
    + [path for path in (HOME / "tests").rglob("*.py") if "__pycache__" not in path.parts]
)
# The catalogs' variants are student answers (many of them templates filled per variant), not test code: the
# test code that once lived in their strings is in tests/claims/ now.
STRINGS_CHECKED = [path for path in EVERYWHERE if path.parent.name != "catalogs"]
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


def short_name(path):
    return str(path.relative_to(HOME))


@pytest.mark.parametrize("path", EVERYWHERE, ids=short_name)
def test_no_function_is_long(path):
    long = [f"{f.name} ({length(f)} lines)" for f in functions(path) if length(f) > LONGEST_FUNCTION]
    assert not long, f"{short_name(path)}: split {', '.join(long)} (at most {LONGEST_FUNCTION} lines)"


def test_the_batch_fits_on_a_screen():
    run = next(f for f in functions(Path(batch.__file__)) if f.name == "run")
    assert length(run) <= LONGEST_RUN, f"batch.run has {length(run)} lines: declare a phase in PHASES instead"
    assert [name for name, _ in batch.PHASES][0] == "start" and all(callable(p) for _, p in batch.PHASES)


@pytest.mark.parametrize("path", STRINGS_CHECKED, ids=short_name)
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
    assert not long, (
        f"{short_name(path)}: strings of more than {LONGEST_CODE_STRING} lines at lines {long}: make them modules "
        "(or fixture files, as tests/fixtures/hostile/)"
    )


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


def sibling_imports(path, package):
    """The modules of `package` that the module at `path` imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == package:
            parts = node.module.split(".")
            found |= {parts[1]} if len(parts) > 1 else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith(package + ".")}
    return found


def import_cycle(graph):
    """One cycle of the import graph {module: modules it imports}, as a list of modules, or []."""
    state = {}

    def visit(module, path):
        state[module] = "open"
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                return [*path[path.index(other) :], other]
            if other not in state:
                found = visit(other, [*path, other])
                if found:
                    return found
        state[module] = "done"
        return []

    for module in sorted(graph):
        found = [] if module in state else visit(module, [module])
        if found:
            return found
    return []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package):
    """Each package's modules import one another without a cycle, even through an import inside a function."""
    modules = {path.stem: path for path in (HOME / package).glob("*.py")}
    graph = {name: (sibling_imports(path, package) & set(modules)) - {name} for name, path in modules.items()}
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"], "the check finds a cycle"
    cycle = import_cycle(graph)
    assert not cycle, f"{package} has an import cycle: {' -> '.join(cycle)}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_step_below_the_batch_takes_the_batch(path):
    """Only batch.py holds the `Batch`: the steps below it (prepare, canary, report, ...) are given what they need,
    so that each can be read, called and tested without a batch."""
    if path.name in ("batch.py", "cli.py"):
        return
    module = tree(path)
    takes = [
        f.name
        for f in functions(path)
        if any(a.arg == "batch" for a in [*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs])
    ]
    assert not takes, f"{path.name}: {', '.join(takes)} take a batch; pass what they need"
    assert "batch" not in sibling_imports(path, "autograde"), f"{path.name} imports batch.py"
    names = {n.attr for n in ast.walk(module) if isinstance(n, ast.Attribute)} | {
        n.id for n in ast.walk(module) if isinstance(n, ast.Name)
    }
    assert "Batch" not in names, f"{path.name} uses the Batch"
