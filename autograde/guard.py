"""Step 3b, the run-time integrity guard, the grader's side (the kernel's side is kernel_guard.py).

Before any student code, a setup cell reads, from a private file descriptor, the guard's code and the
lesson's test cells, and installs a Python audit hook in the kernel. Each test cell is sent to the
kernel as a comment with a fresh nonce; the hook runs the real test (hidden tests included, which so
never appear in the kernel's cell history) in a namespace of its own and reports the outcome through
a pipe, one line per record, authenticated with an HMAC key made in the kernel before any student
code ran. `analyse` reads those records: the outcome of each test (what the score comes from, never
the cell's outputs) and the flags (what the notebook changed or inspected). See kernel_guard.py for
what the hook watches and what it does about it.
"""

import ast
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path

TEST_MARKER = "# autograde test "
CHECK_MARKER = "# autograde check "
KERNEL_SOURCE = Path(__file__).with_name("kernel_guard.py")

SETUP = """\
def __autograde_setup():
    import json, os
    with os.fdopen(int(os.environ.pop("AUTOGRADE_SETUP_FD")), "rb") as handle:
        payload = json.loads(handle.read())
    fd = int(os.environ.pop("AUTOGRADE_GUARD_FD"))
    guard = {"__name__": "autograde_guard", "__builtins__": __builtins__}
    exec(compile(payload.pop("guard"), "<autograde guard>", "exec"), guard)
    guard["install"](payload, get_ipython(), fd)
__autograde_setup()
del __autograde_setup
"""


def setup_source():
    """The setup cell: everything else comes through the private file descriptor."""
    return SETUP


def test_source():
    """A test cell as the kernel sees it: a comment with a fresh nonce. Returns (source, nonce)."""
    nonce = secrets.token_hex(16)
    return f"{TEST_MARKER}{nonce}\n", nonce


def check_source():
    """A check cell (state compared with the set-up, after the last cell). Returns (source, nonce)."""
    nonce = secrets.token_hex(16)
    return f"{CHECK_MARKER}{nonce}\n", nonce


def ends_in_value(source):
    """True if a test cell's source ends in an expression (its value is nbgrader's partial credit)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return bool(tree.body) and isinstance(tree.body[-1], ast.Expr)


WATCHED = ("numpy", "torch", "attention_course", "math")


def lesson_imports(released_nbs, packages=WATCHED):
    """[(name, module, attribute or None)] bound by the released notebooks' own import statements to
    modules of the watched packages (`import numpy as np` -> ('np', 'numpy', None); `from
    attention_course import checks` -> ('checks', 'attention_course', 'checks')). In the tests, these
    names mean what the lesson imported, as it was before any student code ran."""
    found = {}
    for nb in released_nbs:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            lines = [line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))]
            try:
                tree = ast.parse("\n".join(lines))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname:
                            found[alias.asname] = (alias.asname, alias.name, None)
                        else:
                            top = alias.name.split(".")[0]
                            found[top] = (top, top, None)
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for alias in node.names:
                        if alias.name != "*":
                            name = alias.asname or alias.name
                            found[name] = (name, node.module, alias.name)
    return sorted(v for v in found.values() if v[1].split(".")[0] in packages)


def reached(sources, imports):
    """(modules, attributes) the tests reach through the lesson's imports: `torch.nn.RNNCell(...)` ->
    modules torch, torch.nn and attribute torch.nn.RNNCell. The guard loads those modules, and takes
    their state and that of the classes reached, before any student code."""
    base = {name: module if attribute is None else f"{module}.{attribute}" for name, module, attribute in imports}
    modules, attributes = {module for _, module, _ in imports}, set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            parts = []
            while isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            if isinstance(node, ast.Name) and node.id in base and parts:
                chain = [base[node.id], *reversed(parts)]
                modules.update(".".join(chain[:i]) for i in range(1, len(chain)))
                attributes.add(".".join(chain))
    return sorted(modules), sorted(attributes)


def payload(tests, imports, packages=WATCHED, helpers=("attention_course",), hidden=None):
    """What the setup cell reads: the guard's code, {nonce: test}, the lesson's imports the tests use
    and the modules they reach."""
    return json.dumps(
        {
            "guard": KERNEL_SOURCE.read_text(),
            "hidden": hidden or hidden_delimiters(),
            "tests": tests,
            "imports": [list(i) for i in imports],
            **dict(zip(("modules", "attributes"), reached([t["source"] for t in tests.values()], imports))),
            "packages": list(packages),
            "helpers": list(helpers),
        }
    )


def hidden_delimiters(config=None):
    """(begin, end): what marks the hidden part of a test cell, as nbgrader's ClearHiddenTests reads it (with the
    course's configuration, if given): the guard keeps that part's names from the notebook."""
    from nbgrader.preprocessors import ClearHiddenTests

    stock = ClearHiddenTests(config=config) if config is not None else ClearHiddenTests()
    return [stock.begin_test_delimeter, stock.end_test_delimeter]


@dataclass
class Outcome:
    """What the guard reported about one test cell."""

    ok: bool
    ename: str = ""
    evalue: str = ""
    value: float | None = None
    problems: list = field(default_factory=list)


@dataclass
class Analysis:
    flags: list
    outcomes: dict  # nonce -> Outcome


def analyse(lines, test_nonces, check_nonces):
    """Flags and test outcomes from the guard's report lines."""
    flags, outcomes, key, seen_checks = [], {}, None, set()
    if not lines:
        return Analysis(
            ["the integrity guard did not report (its channel was closed or the kernel did not start it)"], {}
        )
    for n, line in enumerate(lines):
        mac, _, body = line.partition(" ")
        try:
            data = json.loads(body)
        except ValueError:
            flags.append("a forged or damaged integrity record")
            continue
        if n == 0:
            if not isinstance(data, dict) or data.get("kind") != "hello":
                return Analysis(["the integrity guard's first record is missing"], {})
            try:
                key = bytes.fromhex(data.get("key", ""))
            except ValueError:
                return Analysis(["the integrity guard's first record is damaged"], {})
        if not hmac.compare_digest(mac, hmac.new(key, body.encode(), hashlib.sha256).hexdigest()):
            flags.append("a forged integrity record")
            continue
        kind = data.get("kind")
        if kind == "test" and data.get("nonce") in test_nonces and data["nonce"] not in outcomes:
            outcome = Outcome(
                ok=bool(data.get("ok")),
                ename=str(data.get("ename", "")),
                evalue=str(data.get("evalue", "")),
                value=data.get("value") if isinstance(data.get("value"), (int, float)) else None,
                problems=[str(p) for p in data.get("violations", [])],
            )
            outcomes[data["nonce"]] = outcome
            flags += [f"at run time: {p}" for p in data.get("violations", [])]
            flags += [f"at run time: {p} (undone before the test ran)" for p in data.get("restored", [])]
            flags += [f"at run time: {p}" for p in data.get("reported", [])]
        elif kind == "check":
            seen_checks.add(data.get("nonce"))
            flags += [f"at run time: {p}" for p in data.get("problems", [])]
        elif kind == "violation":
            flags.append(f"at run time: {data.get('what')}")
    missing = [n for n in test_nonces if n not in outcomes]
    if missing:
        flags.append(
            f"{len(missing)} of {len(test_nonces)} tests did not report (the kernel died or the guard was bypassed)"
        )
    if any(n not in seen_checks for n in check_nonces) and not missing:
        flags.append("the final integrity check did not run")
    return Analysis(sorted(set(flags), key=flags.index), outcomes)
