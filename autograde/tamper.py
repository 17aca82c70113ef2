"""Step 3, tamper checks (static): flag student code that rebinds what the tests rely on.

Each rule is a small class in the declared list `RULES`; `scan(nb, protected)` runs every rule on
every node of every student code cell and returns short descriptions ("cell 7: rebinds
checks.expect_close"). This is the first line; the run-time integrity check (guard.py) catches
tampering by routes no source scan can see.
"""

import ast
import builtins

from .cells import is_test

# Names whose attributes the tests and helpers rely on; rebinding one of their attributes is flagged.
PROTECTED_MODULES = {
    "np",
    "numpy",
    "torch",
    "F",
    "nn",
    "math",
    "builtins",
    "__builtins__",
    "checks",
    "ac",
    "attention_course",
    "plots",
    "widgets",
    "data",
    "sys",
    "random",
    "importlib",
}
PROTECTED_PACKAGES = (
    "numpy",
    "torch",
    "attention_course",
    "builtins",
    "math",
    "sys",
    "importlib",
    "IPython",
    "ipykernel",
)
DYNAMIC_CALLS = {"exec", "eval", "__import__", "setattr", "delattr", "globals", "vars"}
INTROSPECTION = {
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "sys._getframe",
    "inspect.currentframe",
    "sys.addaudithook",
    "sys.settrace",
    "sys.setprofile",
    "threading.settrace",
    "sys.audit",
}
VALUE_TYPES = {"str", "int", "float", "bool", "bytes", "complex", "tuple", "list", "dict", "object"}
PRETENDING = {
    "__eq__",
    "__ne__",
    "__str__",
    "__float__",
    "__int__",
    "__index__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__abs__",
    "__sub__",
    "__rsub__",
    "__hash__",
    "__bool__",
    "__format__",
    "__repr__",
    "strip",
    "lower",
    "casefold",
    "__getattr__",
}
SHELL_HOOKS = (
    "input_transformers",
    "ast_transformers",
    "events",
    "run_cell",
    "showtraceback",
    "_showtraceback",
    "displayhook",
    "excepthook",
    "compile",
    "user_ns",
    "user_global_ns",
    "set_custom_exc",
)


def root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def dotted(node):
    """'a.b.c' for an attribute chain of names, else ''."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return ""


def bound_names(target):
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            yield from bound_names(t)
    elif isinstance(target, ast.Starred):
        yield from bound_names(target.value)


def store_targets(node):
    if isinstance(node, (ast.Assign, ast.Delete)):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


class Context:
    """What the rules know about one cell: names the tests use, module aliases bound anywhere in the
    notebook, the nodes at the top level of the cell."""

    def __init__(self, protected, aliases, top_level):
        self.protected = protected
        self.aliases = aliases
        self.top_level = top_level
        self.builtin_names = set(dir(builtins))

    def guarded_name(self, name):
        return name in self.protected and (name in self.builtin_names or name in PROTECTED_MODULES)

    def module_like(self, name):
        return name in PROTECTED_MODULES or name in self.aliases


class Rule:
    """A static rule: check(node, ctx) yields descriptions of what is wrong with this node."""

    def check(self, node, ctx):
        raise NotImplementedError


class RebindsModuleAttribute(Rule):
    """`np.allclose = ...`, `checks.expect_close = ...`, `zz.expect_close = ...` after
    `import attention_course.checks as zz`, `del torch.tanh`."""

    def check(self, node, ctx):
        for t in store_targets(node):
            if isinstance(t, (ast.Attribute, ast.Subscript)) and ctx.module_like(root_name(t)):
                yield f"rebinds {ast.unparse(t)}"


class WritesGlobalsDict(Rule):
    """`globals()['np'] = ...`, `vars(checks)['x'] = ...`, `m.__dict__['x'] = ...`, `sys.modules[...] = ...`."""

    def check(self, node, ctx):
        for t in store_targets(node):
            if not isinstance(t, ast.Subscript):
                continue
            v = t.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("globals", "vars"):
                yield f"writes to {ast.unparse(t)}"
            elif isinstance(v, ast.Attribute) and v.attr in ("__dict__", "modules", "__builtins__"):
                yield f"writes to {ast.unparse(t)}"


class RebindsTestName(Rule):
    """A top-level assignment to a builtin or module name that the tests use (`abs = ...`, `np = ...`)."""

    def check(self, node, ctx):
        if id(node) not in ctx.top_level:
            return
        for t in store_targets(node):
            for name in bound_names(t):
                if ctx.guarded_name(name.id):
                    yield f"rebinds {name.id}"


class RedefinesTestName(Rule):
    """A top-level `def`/`class` named like a builtin or module the tests use (`def float(x): ...`)."""

    def check(self, node, ctx):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and id(node) in ctx.top_level
            and ctx.guarded_name(node.name)
        ):
            yield f"redefines {node.name}"


class ImportRebindsBuiltin(Rule):
    """An import that binds the name of a builtin the tests use (`from numpy import abs`), or binds a
    module alias the tests use to another module (`import mychecks as checks`)."""

    def check(self, node, ctx):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) not in ctx.top_level:
            return
        module = getattr(node, "module", None) or ""
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound in ctx.protected and bound in ctx.builtin_names:
                yield f"import rebinds {bound}"
            elif bound in ctx.protected and bound in PROTECTED_MODULES:
                full = f"{module}.{alias.name}" if module else alias.name
                if full.split(".")[0] not in PROTECTED_PACKAGES:
                    yield f"import binds {bound} to {full}"


SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _scope_nodes(node):
    """The nodes of one scope: nested functions, classes and lambdas are not entered (comprehensions are:
    a walrus in one binds in the enclosing scope; their own targets are skipped by `_binding`)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, SCOPES):
            yield from _scope_nodes(child)


def _binding(node):
    """(names, how) a node binds in its scope, by a syntax the assignment rules do not look at."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [n.id for n in bound_names(node.target)], "a for loop"
    if isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
        return [n.id for t in targets for n in bound_names(t)], "with ... as"
    if isinstance(node, ast.NamedExpr):
        return [node.target.id], "a walrus (:=)"
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name], "except ... as"
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name], "a match pattern"
    return [], ""


def _function_binding(node):
    """(names, how) a statement in a function binds (for names the function declares `global`)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in node.names], "an import in a function"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name], "a def in a function"
    targets = store_targets(node)
    if targets:
        return [n.id for t in targets for n in bound_names(t)], "an assignment in a function"
    return _binding(node)


class BindsTestNameAnyhow(Rule):
    """A notebook global named like a builtin or module the tests use, bound by any other syntax: a for
    loop, `with ... as`, a walrus, `except ... as`, a match pattern, or inside a function that declares
    it `global` (an assignment, a def, an import); and `globals().update(...)` (names it cannot know)."""

    def check(self, node, ctx):
        if isinstance(node, ast.Call) and dotted(node.func) in ("globals.update", "globals.setdefault"):
            yield "changes globals() directly"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            inner = node.func.value
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "globals":
                yield f"changes globals() directly (globals().{node.func.attr})"
        if isinstance(node, ast.Module):
            yield from self._scope(node, ctx, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            declared = {n for sub in _scope_nodes(node) if isinstance(sub, ast.Global) for n in sub.names}
            if declared:
                yield from self._scope(node, ctx, declared)

    @staticmethod
    def _scope(scope, ctx, declared):
        for sub in _scope_nodes(scope):
            if isinstance(sub, COMPREHENSIONS):
                continue
            names, how = _binding(sub) if declared is None else _function_binding(sub)
            for name in names:
                if (declared is None or name in declared) and ctx.guarded_name(name):
                    yield f"binds {name} with {how}"


class DynamicCall(Rule):
    """exec/eval/__import__/setattr/delattr, and globals()/vars() when a subscript is written in the cell."""

    def check(self, node, ctx):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in DYNAMIC_CALLS:
            if node.func.id in ("globals", "vars"):
                return  # flagged by WritesGlobalsDict when written to
            yield f"calls {node.func.id}()"


class StoresModuleInternals(Rule):
    """Writing the `__dict__`, `__builtins__`, `__class__` or `modules` attribute of a protected module."""

    def check(self, node, ctx):
        if (
            isinstance(node, ast.Attribute)
            and node.attr
            in ("__dict__", "__builtins__", "modules", "__class__", "__code__", "__defaults__", "__kwdefaults__")
            and isinstance(node.ctx, (ast.Store, ast.Del))
        ):
            yield f"rebinds {ast.unparse(node)}"


class ImportModuleByName(Rule):
    """`importlib.import_module(...)` or `sys.modules[...]` read to reach a module by name."""

    def check(self, node, ctx):
        if isinstance(node, ast.Call) and dotted(node.func).endswith("import_module"):
            yield f"imports a module by name ({ast.unparse(node)[:60]})"
        if isinstance(node, ast.Subscript) and dotted(node.value) == "sys.modules" and isinstance(node.ctx, ast.Load):
            yield f"reads {ast.unparse(node)[:60]}"


class PatchesShell(Rule):
    """Changing how IPython runs cells: input/AST transformers, event callbacks, run_cell, showtraceback."""

    def check(self, node, ctx):
        text = None
        if isinstance(node, ast.Attribute) and node.attr.startswith(SHELL_HOOKS):
            base = node.value
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "get_ipython":
                text = ast.unparse(node)
            elif isinstance(base, ast.Name) and base.id in ("ip", "shell", "_ip", "ipy"):
                text = ast.unparse(node)
        if text:
            yield f"changes the IPython shell ({text[:60]})"


class Introspection(Rule):
    """Reaching into the interpreter: gc, frames, audit and trace hooks, ctypes."""

    def check(self, node, ctx):
        if isinstance(node, ast.Call) and dotted(node.func) in INTROSPECTION:
            yield f"calls {dotted(node.func)}()"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(n.split(".")[0] == "ctypes" for n in names):
                yield "imports ctypes"


class PretendingValue(Rule):
    """A class derived from a builtin value type that overrides comparison or conversion: an answer
    object that could compare equal to any key."""

    def check(self, node, ctx):
        if not isinstance(node, ast.ClassDef):
            return
        bases = {b.id for b in node.bases if isinstance(b, ast.Name)} | {dotted(b) for b in node.bases}
        if not bases & VALUE_TYPES:
            return
        methods = {b.name for b in node.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))}
        methods |= {n.id for b in node.body if isinstance(b, ast.Assign) for t in b.targets for n in bound_names(t)}
        bad = sorted(methods & PRETENDING)
        if bad:
            yield f"class {node.name}({', '.join(sorted(bases & VALUE_TYPES))}) overrides {', '.join(bad)}"


RULES = [
    RebindsModuleAttribute,
    WritesGlobalsDict,
    RebindsTestName,
    RedefinesTestName,
    ImportRebindsBuiltin,
    BindsTestNameAnyhow,
    DynamicCall,
    StoresModuleInternals,
    ImportModuleByName,
    PatchesShell,
    Introspection,
    PretendingValue,
]


def test_names(solution_nb):
    """Names the test cells (hidden ones included) use and the student should not rebind."""
    names = set()
    for cell in solution_nb.cells:
        if cell.cell_type == "code" and is_test(cell):
            try:
                names |= {n.id for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Name)}
            except SyntaxError:
                pass
    return names


def _tree(source):
    source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, a null byte, nested too deeply
        return None


def aliases(trees):
    """Names bound anywhere to a module of a protected package (`import attention_course.checks as zz`)."""
    found = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] in PROTECTED_PACKAGES:
                        found.add(a.asname or a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PROTECTED_PACKAGES:
                for a in node.names:
                    found.add(a.asname or a.name)
    return found


def scan(nb, protected, rules=RULES):
    """Descriptions ('cell 7: rebinds np.allclose') of student code that rebinds what grading relies on."""
    cells = [(i, c) for i, c in enumerate(nb.cells) if c.get("cell_type") == "code" and not is_test(c)]
    trees = [(i, _tree(c.get("source", ""))) for i, c in cells]
    alias_names = aliases(t for _, t in trees if t is not None) - {"abs", "float", "str", "int"}
    instances = [rule() for rule in rules]
    flags = []
    for index, tree in trees:
        if tree is None:
            continue
        top_level = set()
        for stmt in tree.body:
            for node in ast.walk(stmt) if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)) else [stmt]:
                top_level.add(id(node))
        ctx = Context(protected, alias_names, top_level)
        for node in ast.walk(tree):
            for rule in instances:
                for text in rule.check(node, ctx):
                    flags.append(f"cell {index + 1}: {text}")
    return sorted(set(flags), key=flags.index)
