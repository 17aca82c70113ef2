"""Execute for a grade only what the grade depends on: a dependency analysis of a submitted notebook.

`plan(cells, release)` says, for every code cell of a notebook, whether grading must execute it. The graded
cells (answers and tests) always run, and so does every cell they need, transitively, in notebook order. A cell
may be left out only if all three hold:

1. its source is the release's (normalised), so the student did not write it: a cell the student edited or
   added always runs;
2. it defines nothing a kept cell reads (names, functions, imports), and
3. it cannot change a kept cell's state: it mutates no object a kept cell reads (a cell may mutate every
   name it reads, every object reachable from them, and what the functions it calls reach), it seeds or draws
   from no global random generator that a kept cell later uses, it changes no module state (default dtypes,
   error modes, threads, matplotlib, sys, os, warnings), writes no file a kept cell may read, and it uses no
   magic, exec/eval, globals(), star import or %run. A value holding code (a lambda, a function, a partial, an
   object of a notebook class) reads what its code reads where it is called; a function keeping state between
   calls (a mutable default, a list hanging from a function or class) cannot be followed.

A cell the student wrote is held to more (STUDENT_UNFOLLOWABLE): names given as strings (getattr, dunders),
builtins, IPython's shell or a finaliser there make every cell run.

Whatever the analysis cannot decide, it keeps. The analysis is plain Python (ast, symtable): no nbgrader, no
kernel; `autograde/pruning.py` uses it in nbgrader's Autograde, `validate_hook` in Validate.

A lesson's author may mark an experiment cell `# autograde: independent` (LESSON_ANATOMY.md): the cell's use of
the global random generators is then not a reason to keep it (its definitions and mutations still are).
`check_annotations` is the authoring check of that mark.
"""

import ast
import builtins
import functools
import hashlib
import re
import symtable
from dataclasses import dataclass, field, replace

ANNOTATION = "# autograde: independent"
NOTE = (
    "[not run for the grade] No graded check reads what this cell computes, and it is the release's own code, "
    "so grading skipped it (its outputs here are not the grader's). Run it yourself to see them."
)
FLAG = "autograde"  # cell.metadata[FLAG] = {"not_run": true} on a cell left out of a graded run

# Anything here makes a cell (or a function body) impossible to follow: it always runs.
OPAQUE = re.compile(  # the builtins exec, eval, ...; a method of the same name (`model.eval()`) is an ordinary call
    r"(?<!\.)\b(exec|eval|compile|globals|locals|vars)\b|\b(__import__|setattr|delattr|__dict__|__builtins__|"
    r"builtins|importlib|get_ipython|sys\.modules|__class__|__globals__|ctypes|gc\.)\b"
)
# Anywhere in a notebook, these make names read or written out of the analysis's sight (code in strings, the
# namespace as a whole, IPython's history of outputs): then nothing is left out of that notebook.
UNFOLLOWABLE = re.compile(
    r"(?<!\.)\b(exec|eval|compile|globals|locals|vars)\b|\bdir\(\s*\)|"
    r"\b(get_ipython|__main__|__builtins__|inspect|f_globals|f_locals|f_back|sys\.modules|setattr|delattr|"
    r"__dict__|__globals__|ctypes|pickle|dill|shelve)\b"
)
# In a cell the student wrote or edited, also these: the namespace or the interpreter reached through a module, a
# name given as a string, IPython's shell, or a finaliser that runs when a name is rebound (then every cell runs).
STUDENT_UNFOLLOWABLE = re.compile(
    r"\b(builtins|user_ns|user_global_ns|run_cell|run_line_magic|run_cell_magic|InteractiveShell|import_module|"
    r"attrgetter|methodcaller|weakref|finalize|__del__|__getattr__|__getattribute__|getattr|hasattr|pkgutil|"
    r"resolve_name|pydoc|locate|timeit|Formatter|vformat|format_map)\b"
)
DUNDER = re.compile(r"__\w+__")
PLAIN_DUNDERS = set(
    "__init__ __name__ __doc__ __len__ __getitem__ __setitem__ __call__ __repr__ __str__ __iter__ __next__ "
    "__contains__ __eq__ __hash__ __enter__ __exit__".split()
)
# In a test cell (the course's own code, restored from the gradebook when grading), these may read names given as
# strings: every identifier in the cell's strings then counts as read.
NAMESPACE = {"exec", "eval", "compile", "globals", "locals", "vars", "dir()"}
HISTORY = re.compile(r"^(_+|_\d+|_i+|_i\d+|Out|In|_oh|_ih|_dh|exit|quit)$")
# Global random generators: seeding, drawing, or making a layer that draws its weights. np.random.default_rng and
# torch.Generator are generators of their own, not the global ones (a draw with generator=g still counts: simple).
RNG = re.compile(
    r"\b((np|numpy)\.random\.(?!default_rng\b|Generator\b|PCG64\b|SeedSequence\b)|(?<![\w.])random\.\w+\(|"
    r"torch\.(manual_seed|seed|initial_seed|get_rng_state|set_rng_state|rand\w*|normal|bernoulli|multinomial|"
    r"poisson)\b|manual_seed|rand(n|int|perm|om)?(_like)?\(|nn\.[A-Z]\w*\(|init\.\w+_?\(|dropout|Dropout|"
    r"(uniform|normal|random|bernoulli|exponential|geometric|cauchy|log_normal)_\(|(RNN|RNNCell|GRU|GRUCell|LSTM|"
    r"LSTMCell|Linear|Bilinear|Embedding|Conv\w*|MultiheadAttention|Transformer\w*|LayerNorm)\(|shuffle\(|sample\(|"
    r"choice\(|choices\(|permutation\(|multinomial\(|bernoulli\(|poisson\(|default_generator|distributions\.|"
    r"gumbel_softmax|\w+_dropout|rrelu|SobolEngine|quasirandom|random_split|DataLoader|\w*Sampler\b)"
)
# Modules whose functions draw from a global generator, when a name is bound to them or to one of their functions
RNG_MODULES = ("random", "numpy.random", "torch.distributions", "torch.quasirandom")
# Module state that outlives a cell: defaults, error modes, threads, printing, plotting, warnings, the process.
STATE = re.compile(
    r"\b((torch|np|numpy|mpl|matplotlib|plt|pyplot|ac|attention_course)(\.\w+)*\.(set_\w+|use_\w+|setup|seterr\w*|"
    r"rc\w*|style|ion|ioff|interactive|enable_grad|inference_mode|autograd\.set_\w+|backends(?!\.\w+\.(get|is)_\w+\())\b|"
    r"(set_default_\w+|set_num_\w+|set_printoptions|seterr|setrecursionlimit|use_deterministic_algorithms|"
    r"filterwarnings|simplefilter|set_grad_enabled)\(|(sys|os|warnings|logging|signal|atexit|threading|subprocess|"
    r"multiprocessing|socket|shutil|tempfile|pathlib)\.|_exit\(|exit\(|quit\(|input\()"
)
FILE_WRITE = re.compile(r"\b(open\(|write\w*\(|save\w*\(|dump\w*\(|to_csv|to_json|mkdir|unlink|rename|shutil)")
FILE_READ = re.compile(r"\b(open\(|read\w*\(|load\w*\(|Path\(|glob|listdir|exists|isfile)")
BUILTINS = set(dir(builtins))
STATEFUL_MODULES = {
    "random",
    "numpy.random",
    "matplotlib",
    "matplotlib.pyplot",
    "pylab",
    "sys",
    "os",
    "warnings",
    "logging",
    "IPython.display",
    "ipywidgets",
    "attention_course.widgets",
    "attention_course.plots",
}


def normalise(source):
    """A cell's source as compared with the release's: line ends and trailing blanks do not count."""
    if isinstance(source, list):
        source = "".join(source)
    return "\n".join(line.rstrip() for line in source.replace("\r\n", "\n").split("\n")).strip("\n")


def fingerprint(source):
    return hashlib.sha256(normalise(source).encode()).hexdigest()[:16]


@dataclass
class Facts:
    """What one code cell does, as far as the analysis can tell."""

    defs: set = field(default_factory=set)  # names it binds at the top level (or declares global and binds)
    kills: set = field(default_factory=set)  # names it rebinds before any read: earlier values are dead after it
    reads: set = field(default_factory=set)  # global names it (or a function it defines) reads
    exposed: set = field(default_factory=set)  # those it may read before it has bound them itself
    imports: dict = field(default_factory=dict)  # name -> module it is bound to
    funcs: dict = field(default_factory=dict)  # function/class name -> global names its body reads
    impure: set = field(default_factory=set)  # functions whose bodies change global state or cannot be followed
    func_roots: dict = field(default_factory=dict)  # function name -> global names whose attributes or items it sets
    roots: set = field(default_factory=set)  # names whose objects it assigns attributes or items of
    links: list = field(default_factory=list)  # per top-level statement, the names it mentions (aliasing)
    rng: bool = False  # touches a global random generator (itself)
    rng_funcs: set = field(default_factory=set)  # functions it defines whose bodies touch one
    state: str = ""  # why it changes module state or cannot be followed ('' if not)
    writes: bool = False
    file_reads: bool = False
    annotated: bool = False
    reseeds_with: str = ""  # the cell opens with `<name>.reseed(<constants>)`: the name (see _reseeders)
    unfollowable: str = ""  # why nothing of the notebook may be left out because of this cell ('' if nothing)
    by_name: bool = False  # only because it reads the namespace with names in strings (globals(), eval...)
    strings: set = field(default_factory=set)  # identifiers in the cell's strings
    carries: dict = field(default_factory=dict)  # name -> global names read by the lambdas its value holds
    holds: dict = field(default_factory=dict)  # name -> names in its value not called there (functions among them)
    makes: dict = field(default_factory=dict)  # name -> names its value calls (classes among them: an object of one)
    classes: set = field(default_factory=set)  # classes it defines
    sharing: set = field(default_factory=set)  # those with a list (dict, object) in their body, shared by every object
    called_roots: dict = field(default_factory=dict)  # function -> global names it calls a method of an attribute of
    made_roots: dict = field(default_factory=dict)  # function -> global names it calls, then a method of the result


def _scope_reads(table, out):
    """Global names read inside the function scopes below `table` (free or declared global), recursively."""
    for child in table.get_children():
        for sym in child.get_symbols():
            if sym.is_global() and (sym.is_referenced() or sym.is_assigned()):
                out.add(sym.get_name())
        _scope_reads(child, out)
    return out


def _global_binds(table, out):
    for child in table.get_children():
        for sym in child.get_symbols():
            if sym.is_declared_global() and sym.is_assigned():
                out.add(sym.get_name())
        _global_binds(child, out)
    return out


def _root(node):
    """The name at the root of `a.b[c].d`, or None when the root is not a name (a call's result...)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _targets(stmt):
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    if isinstance(stmt, ast.Delete):
        return stmt.targets
    return []


def _code(node):
    """The code of a node without comments and without the text of its strings (what the patterns look at). The
    strings are blanked in place and given back afterwards: copying the tree first took most of the analysis's time."""
    strings = [n for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    kept = [(n.value, n.kind) for n in strings]
    for n in strings:
        n.value, n.kind = "", None
    try:
        return ast.unparse(node)
    finally:
        for n, (value, kind) in zip(strings, kept):
            n.value, n.kind = value, kind


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _safe_value(node):
    """An expression that cannot raise: constants, and tuples or lists of them."""
    return all(
        isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Load, ast.UnaryOp, ast.USub)) for n in ast.walk(node)
    )


def _kills(body):
    """Names the cell surely rebinds before it reads them or runs anything that could raise: a later reader sees
    this cell's value, whatever ran before. Only the leading plain definitions and constant assignments count."""
    kills = set()
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not stmt.decorator_list:
            defaults = [*stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]
            if all(_safe_value(d) for d in defaults):
                kills.add(stmt.name)
                continue
        if isinstance(stmt, ast.Assign) and _safe_value(stmt.value):
            if all(isinstance(t, ast.Name) for t in stmt.targets):
                kills |= {t.id for t in stmt.targets}
                continue
        break
    return kills


def _binds(stmt):
    """Names a top-level statement surely binds once it has run (no loop, no branch, no `with`)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    targets = stmt.targets if isinstance(stmt, ast.Assign) else []
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    plain = [t for t in targets if isinstance(t, (ast.Name, ast.Tuple, ast.List))]
    return {n.id for t in plain for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _loads(stmt):
    """Names a statement may read: loads, and augmented targets; a loop's or `with`'s own target is bound before
    its body reads it."""
    loads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    loads |= {n.id for a in ast.walk(stmt) if isinstance(a, ast.AugAssign) for n in ast.walk(a.target)
              if isinstance(n, ast.Name)}  # fmt: skip
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        own = {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)} - _names(stmt.iter)
        loads = (loads - own) | (_loads_of(stmt.orelse) & own)
    return loads


def _loads_of(stmts):
    return set().union(*(_loads(s) for s in stmts)) if stmts else set()


def _exposed(body, functions, reads):
    """The global names the cell may read before a statement of its own has bound them (a superset)."""
    return _exposed_in(body, functions, set()) & reads


def _exposed_in(body, functions, bound):
    """The names these statements, run in order with `bound` already bound, may read before they bind them."""
    bound, exposed = set(bound), set()
    for stmt in body:
        exposed |= _exposed_by(stmt, functions, bound)
        bound |= _binds(stmt)
    return exposed


def _stored(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node is not None else set()


def _exposed_by(stmt, functions, bound):
    """One statement's exposed names. The body of a `with`, a loop, a branch or a `try` runs in order, so a read after
    a bind in the same body is the cell's own value; what a compound statement binds counts as bound only inside it
    (a body can stop early, and `ac.student_code` goes on after a NotImplementedError)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (functions.get(stmt.name, set()) | {n for p in _parts(stmt) for n in _loads(p)}) - bound
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        heads = set().union(*(_loads(ast.Expr(item.context_expr)) for item in stmt.items)) - bound
        own = set().union(*(_stored(item.optional_vars) for item in stmt.items))
        return heads | _exposed_in(stmt.body, functions, bound | own)
    if isinstance(stmt, (ast.If, ast.While)):
        test = _loads(ast.Expr(stmt.test)) - bound
        return test | _exposed_in(stmt.body, functions, bound) | _exposed_in(stmt.orelse, functions, bound)
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        head = _loads(ast.Expr(stmt.iter)) - bound
        inside = _exposed_in(stmt.body, functions, bound | _stored(stmt.target))
        return head | inside | _exposed_in(stmt.orelse, functions, bound)
    if isinstance(stmt, ast.Try):
        parts = [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]
        types = set().union(*(_loads(ast.Expr(h.type)) for h in stmt.handlers if h.type is not None))
        return (types - bound).union(*(_exposed_in(part, functions, bound) for part in parts))
    return _loads(stmt) - bound


def _function(node, source):
    """(global names the definition and its body read, impure?, touches a global random generator?, global names
    whose objects it assigns attributes or items of). Such an assignment makes the function impure only on a
    module, a function or a class (`survey` decides, knowing them); on data it is what "may change" follows at every
    call."""
    text = _code(node)
    table = symtable.symtable(ast.unparse(node), "def", "exec")
    reads = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    reads = (_scope_reads(table, reads) | _global_binds(table, set())) - {node.name}
    alias = _local_aliases(node)
    stores = [t for n in ast.walk(node) for t in _targets(n) if isinstance(t, (ast.Attribute, ast.Subscript))]
    roots = {alias.get(_root(t), _root(t)) for t in stores}
    impure = bool(OPAQUE.search(text) or STATE.search(text) or FILE_WRITE.search(text) or _global_binds(table, set()))
    impure = impure or None in roots or any(isinstance(n, ast.Global) for n in ast.walk(node))
    impure = impure or _keeps_state(node)
    # `Trace.log.append(x)`, `f.seen.add(x)`, `log = Trace.log; log.append(x)`, `Trace().log.append(x)`: a method
    # called on what hangs from a global may change it
    called, made = set(), set()
    for method in (n.func for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
        receiver, through_call = method.value, False
        while isinstance(receiver, (ast.Attribute, ast.Subscript, ast.Call)):
            through_call = through_call or isinstance(receiver, ast.Call)
            receiver = receiver.func if isinstance(receiver, ast.Call) else receiver.value
        root = receiver.id if isinstance(receiver, ast.Name) else None
        if through_call:
            made.add(root)  # `Trace().log.append`: the state of Trace if it is a class (survey decides)
        elif root in alias or not isinstance(method.value, ast.Name):
            called.add(alias.get(root, root))
    mine = reads | {node.name}
    return reads, impure, bool(RNG.search(text)), roots & mine, (called - {None}) & mine, (made - {None}) & mine


def _local_aliases(node):
    """{local name: the global name at the root of what it was bound to} for `log = Trace.log` in a body."""
    alias = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Name, ast.Attribute, ast.Subscript)):
            for target in n.targets:
                if isinstance(target, ast.Name) and _root(n.value) not in (None, target.id):
                    alias[target.id] = _root(n.value)
    return alias


def _keeps_state(node):
    """A function or class that may keep what it saw from one call to the next: a list as a default, a cache
    decorator, a list in a class's body."""
    defaults = [d for n in ast.walk(node) if isinstance(n, ast.arguments)
                for d in [*n.defaults, *(k for k in n.kw_defaults if k is not None)]]  # fmt: skip
    decorators = [ast.unparse(d) for n in ast.walk(node) if hasattr(n, "decorator_list") for d in n.decorator_list]
    return (
        any(_kept_between_calls(d) for d in defaults)
        or any(re.search(r"cache|memo", d) for d in decorators)
        or _changes_class_level_lists(node)
    )


def _shared_in_body(node):
    """The names a class's body binds to a list, a dict or an object: one for every object of the class."""
    shared = {t.id for s in node.body if isinstance(s, ast.Assign) and _kept_between_calls(s.value)
              for t in s.targets if isinstance(t, ast.Name)}  # fmt: skip
    return shared | {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                     and s.value is not None and _kept_between_calls(s.value)}  # fmt: skip


def _changes_class_level_lists(node):
    """A class whose methods change a list (dict, object) of the class's own body through `self.` or `cls.`: every
    object of the class shares it."""
    if not isinstance(node, ast.ClassDef):
        return False
    shared = _shared_in_body(node)
    touched = [n.func.value for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    touched += [t.value for n in ast.walk(node) for t in _targets(n) if isinstance(t, (ast.Subscript, ast.Attribute))]
    return any(isinstance(t, ast.Attribute) and t.attr in shared and isinstance(t.value, ast.Name) for t in touched)


def _kept_between_calls(default):
    """A default value that a function may change and see again at its next call (a list, a dict, an object)."""
    return isinstance(default, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.Call))


def _parts(stmt):
    """The parts of a top-level statement that run when the cell runs: a def's body does not run, a class body does."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [*stmt.decorator_list, *stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]
    if isinstance(stmt, ast.ClassDef):
        parts = [*stmt.bases, *stmt.keywords, *stmt.decorator_list]
        return parts + [s for s in stmt.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [stmt]


def _executed_text(stmt):
    return " ".join(_code(p) for p in _parts(stmt))


def facts(source):
    """The Facts of one code cell's source: a copy of the ones remembered for that source, so that `plan` may adjust a
    test cell's. A grading worker or a Validate server analyses the same release cells for every student."""
    return replace(_facts(normalise(source)))


@functools.lru_cache(maxsize=4096)
def _facts(source):
    try:
        return _analysed(source)
    except (RecursionError, MemoryError):  # Python compiles deeper code than ast.unparse and symtable can walk
        why = "code nested too deeply to analyse"
        return Facts(state=why, unfollowable=why)


def _analysed(source):
    f = Facts(annotated=any(line.strip() == ANNOTATION for line in source.split("\n")))
    try:
        tree = ast.parse(source)
        table = symtable.symtable(source, "cell", "exec")
    except (SyntaxError, ValueError):
        f.state = f.unfollowable = "code that does not parse as Python (a magic, a shell command, %run)"
        return f
    symbols = table.get_symbols()
    f.defs = {s.get_name() for s in symbols if s.is_assigned() or s.is_imported()} | _global_binds(table, set())
    f.reads = _scope_reads(table, {s.get_name() for s in symbols if s.is_referenced()})
    f.defs |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
    f.kills = _kills(tree.body)
    code = _code(tree)
    f.writes, f.file_reads = bool(FILE_WRITE.search(code)), bool(FILE_READ.search(code))
    for stmt in tree.body:
        _statement(f, stmt, source)
    f.exposed = _exposed(tree.body, f.funcs, f.reads)
    f.reseeds_with = _reseed_call(tree.body[0]) if tree.body else ""
    found = {m[0].replace(" ", "") for m in UNFOLLOWABLE.finditer(code)}
    history = sorted(n for n in f.exposed if HISTORY.match(n))
    if found or history or "star import" in f.state:
        f.unfollowable = f"`{sorted(found)[0]}`" if found else f"IPython's history ({history[0]})" if history else "*"
        f.by_name = found <= NAMESPACE and not history and "star import" not in f.state
        f.state = f.state or f"uses {f.unfollowable}"
        f.strings = {w for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                     for w in re.findall(r"[A-Za-z_]\w*", n.value)}  # fmt: skip
    return f


def _carried(f, stmt):
    """A value that holds code (a lambda, a generator expression, a function, an object of a class, a partial) reads
    names when it is called, not when it is made: the names it is stored under (a name, or the root of `box.f`) carry
    what that code reads (`survey` keeps the functions and classes)."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or stmt.value is None:
        return
    value, targets = stmt.value, _targets(stmt)
    holders = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    holders |= {_root(t) for t in targets if isinstance(t, (ast.Attribute, ast.Subscript))} - {None}
    lazy, consumed = set(), {id(a) for n in ast.walk(value) if isinstance(n, ast.Call) for a in n.args}
    if isinstance(stmt, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in stmt.targets):
        consumed.add(id(value))  # `a, b = (f(x) for x in xs)` unpacks it at once
    for node in ast.walk(value):  # a generator handed to a call (`sum(x for x in xs)`) is used up there
        if isinstance(node, ast.Lambda) or isinstance(node, ast.GeneratorExp) and id(node) not in consumed:
            lazy |= _scope_reads(symtable.symtable(ast.unparse(node), "lazy", "exec"), set())
    called = {n.func.id for n in ast.walk(value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} - called
    for name in holders:
        f.carries.setdefault(name, set()).update(lazy)
        f.holds.setdefault(name, set()).update(names)
        f.makes.setdefault(name, set()).update(called)
    if isinstance(stmt, ast.Assign) and isinstance(value, (ast.Name, ast.Attribute)) and RNG.search(_code(value) + "."):
        f.rng_funcs |= holders  # `gen = torch.default_generator`, `npr = np.random`: a generator under another name


def _reseed_call(stmt):
    """`name` when the statement is `name.reseed(<constants>)`, else ''."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "reseed"):
        return ""
    constant = all(isinstance(a, ast.Constant) for a in [*call.args, *(k.value for k in call.keywords)])
    return call.func.value.id if constant and isinstance(call.func.value, ast.Name) else ""


def _reseeders(table, imports):
    """The names bound to the course's package whose `reseed(n)`, opening a cell, seeds every global random generator
    afresh: then what ran before that cell cannot change what it or a later cell draws. None when any cell sets
    attributes of an imported module (a student could make `reseed`, or `torch.manual_seed` under it, do nothing);
    a name some cell rebinds is left out."""
    package = {n for n, module in imports.items() if module == "attention_course"}
    if any(set(imports) & (f.roots | set().union(*f.func_roots.values())) for f in table.values()):
        return set()
    return package - {n for f in table.values() for n in f.defs - set(f.imports)}


def _statement(f, stmt, source):
    """What one top-level statement adds to the cell's Facts."""
    f.links.append(_names(stmt))
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            if alias.name == "*":
                f.state = "uses a star import"
            base = stmt.module if isinstance(stmt, ast.ImportFrom) else None
            module = f"{base}.{alias.name}" if base else alias.name
            f.imports[alias.asname or alias.name.split(".")[0]] = module if alias.asname or base else alias.name
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        reads, impure, rng, f.func_roots[stmt.name], f.called_roots[stmt.name], made = _function(stmt, source)
        f.made_roots[stmt.name] = made
        f.funcs[stmt.name] = reads
        if isinstance(stmt, ast.ClassDef):
            f.classes.add(stmt.name)
            if _shared_in_body(stmt):
                f.sharing.add(stmt.name)
        if impure:
            f.impure.add(stmt.name)
        if rng:
            f.rng_funcs.add(stmt.name)
    _carried(f, stmt)
    text = _executed_text(stmt)
    f.rng = f.rng or bool(RNG.search(text))
    if not f.state and (STATE.search(text) or OPAQUE.search(text)):
        f.state = f"changes module state or cannot be followed: {(STATE.search(text) or OPAQUE.search(text))[0]}"
    if isinstance(stmt, ast.Global):
        f.state = f.state or "declares a global"
    for node in ast.walk(stmt) if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else ():
        for target in _targets(node):
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                root = _root(target)
                if root is None:
                    f.state = f.state or "assigns through an expression"
                else:
                    f.roots.add(root)


# --- the plan ------------------------------------------------------------------------------------------------


def _meta(cell):
    meta = (cell.get("metadata") or {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
    return meta if isinstance(meta, dict) else {}


def is_graded(cell):
    """An answer cell or a test cell: what the grade is made of (always run)."""
    meta = _meta(cell)
    return bool(meta.get("solution") or meta.get("grade"))


def _is_test(cell):
    meta = _meta(cell)
    return bool(meta.get("grade") and not meta.get("solution"))


class _Groups:
    """Names that may refer to the same objects (union-find): `b = [a]` links a and b."""

    def __init__(self):
        self.parent = {}

    def find(self, name):
        self.parent.setdefault(name, name)
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def link(self, names):
        names = list(names)
        for other in names[1:]:
            self.parent[self.find(other)] = self.find(names[0])


@dataclass
class Notebook:
    """Facts about all of a notebook's code cells, and what names stand for across it."""

    facts: dict  # code cell index -> Facts
    imports: dict  # name -> module, over every cell
    funcs: dict  # function name -> the global names its bodies read, closed over the functions they call
    impure: set
    rng_funcs: set
    data: set  # names that hold data (not modules, not only functions)
    groups: _Groups
    reseeders: set = field(default_factory=set)  # names of the package whose `reseed` a cell may trust (_reseeders)


def _closure(funcs):
    closed = {name: set(reads) for name, reads in funcs.items()}
    changed = True
    while changed:
        changed = False
        for reads in closed.values():
            more = set().union(*(closed[r] for r in reads if r in closed)) - reads
            if more:
                reads |= more
                changed = True
    return closed


def survey(cells, written=frozenset()):
    """The Notebook facts of a list of cells (`written`: the indices of the cells the student wrote or edited)."""
    table = {i: facts(c.get("source", "")) for i, c in enumerate(cells) if c.get("cell_type") == "code"}
    imports, funcs, impure, rng_funcs, bound = {}, {}, set(), set(), set()
    for f in table.values():
        imports.update(f.imports)
        for name, reads in f.funcs.items():
            funcs.setdefault(name, set()).update(reads)
        impure |= f.impure
        rng_funcs |= f.rng_funcs
        bound |= f.defs - set(f.funcs) - set(f.imports)
    # setting attributes or items of a module, a function or a class is a change of state "may change" cannot follow,
    # and so is calling a method of what hangs from a function or a class (`Trace.log.append`)
    unfollowed = set(imports) | set(funcs)
    impure |= {name for f in table.values() for name, roots in f.func_roots.items() if roots & unfollowed}
    code, classes = set(funcs), set().union(*(f.classes for f in table.values()))
    sharing = set().union(*(f.sharing for f in table.values()))
    impure |= {name for f in table.values() for name, roots in f.called_roots.items() if roots & code}
    impure |= {name for f in table.values() for name, roots in f.made_roots.items() if roots & sharing}
    for f in table.values():  # a name whose value holds code: what that code reads counts where the name is read
        for name in set(f.carries) | set(f.holds) | set(f.makes):
            carried = f.carries.get(name, set()) | (f.holds.get(name, set()) & code)
            carried |= f.makes.get(name, set()) & classes
            if carried:
                funcs.setdefault(name, set()).update(carried)
    rng_funcs |= {n for n, module in imports.items()
                  if module in RNG_MODULES or module.startswith(tuple(m + "." for m in RNG_MODULES))
                  or RNG.search(module + "(")}  # fmt: skip
    funcs = _closure(funcs)
    impure |= {n for n, reads in funcs.items() if reads & impure}
    rng_funcs |= {n for n, reads in funcs.items() if reads & rng_funcs}
    data = bound | {n for f in table.values() for n in f.reads} - set(imports) - (set(funcs) - bound)
    data -= BUILTINS
    nb = Notebook(table, imports, funcs, impure, rng_funcs, data, _Groups(), _reseeders(table, imports))
    for i, f in table.items():
        for names in f.links:  # in a student's cell, what goes with a module with state may be changed through it
            hooks = _module_tokens(nb, names) if i in written else set()  # (`widgets.on_new_explorer(seen.append)`)
            nb.groups.link((_expand(nb, names) & data) | hooks)
    return nb


def _module_tokens(nb, names):
    """A name in the alias groups for each module with state these names reach."""
    return {f"<{m}>" for m in _stateful(nb, _expand(nb, names))}


def _expand(nb, names):
    """Names, with the global names read by the functions among them."""
    return set(names).union(*(nb.funcs.get(n, set()) for n in names))


def _stateful(nb, names):
    """The modules with state of their own (pyplot, random, sys...) that these names are bound to, or to a part of:
    by module, not by name (`plt` and `pp` may be the same pyplot)."""
    return {m for n in names for m in STATEFUL_MODULES
            if nb.imports.get(n, "") == m or nb.imports.get(n, "").startswith(m + ".")}  # fmt: skip


@dataclass
class Plan:
    run: dict  # code cell index -> why grading executes it
    skip: list  # code cell indices grading leaves out

    def summary(self):
        return f"{len(self.skip)} of {len(self.run) + len(self.skip)} code cells left out"


def _must_run(cell, f, nb, release):
    """Why this cell runs whatever the others do, or ''."""
    if is_graded(cell):
        return "a graded cell (answer or tests)"
    if release is None:
        return "no release to compare with"
    if fingerprint(cell.get("source", "")) not in release:
        return "the student edited or added it"
    if f.state:
        return f.state
    if f.roots & set(nb.imports):
        return "assigns to a module's attributes"
    calls = f.reads & nb.impure
    if calls:
        return f"calls {sorted(calls)[0]}, whose effects the analysis cannot follow"
    if not normalise(cell.get("source", "")):
        return ""
    return ""


def _needed(f, nb, needed, rng_needed, files_needed, modules_needed):
    """Why a later kept cell needs this cell, or ''."""
    defined = f.defs & needed
    if defined:
        return f"defines {sorted(defined)[0]}, which a kept cell reads"
    touched = (_expand(nb, f.exposed) & nb.data) | _module_tokens(nb, f.reads)  # a module imported again is the same
    reached = {nb.groups.find(n) for n in needed & nb.data}
    changed = sorted(n for n in touched if nb.groups.find(n) in reached)
    if changed:
        return f"may change {changed[0]}, which a kept cell reads"
    modules = _stateful(nb, _expand(nb, f.exposed)) & modules_needed
    if modules:
        return f"uses {sorted(modules)[0]}, a module with state that a kept cell reads"
    if rng_needed and not f.annotated and (f.rng or f.reads & nb.rng_funcs):
        return "uses a global random generator that a later kept cell uses"
    if files_needed and f.writes:
        return "may write a file that a later kept cell reads"
    return ""


def plan(cells, release):
    """Which code cells grading executes (Plan.run, with why) and which it leaves out (Plan.skip).

    cells: the notebook's cells (nbformat nodes or dicts); release: the fingerprints of the release's code cells
    (`release_fingerprints`), or None when no release is known (then every cell runs)."""
    written = (
        set()
        if release is None
        else {
            i
            for i, c in enumerate(cells)
            if c.get("cell_type") == "code" and fingerprint(c.get("source", "")) not in release
        }
    )
    nb = survey(cells, written)
    for i, f in nb.facts.items():
        if f.by_name and _is_test(cells[i]):
            f.unfollowable, f.exposed, f.reads = "", f.exposed | f.strings, f.reads | f.strings
    for i, f in nb.facts.items():  # a test cell is the course's (nbgrader puts it back, hidden tests and all)
        if i in written and not f.unfollowable and not _is_test(cells[i]):
            f.unfollowable = _student_unfollowable(normalise(cells[i].get("source", "")))
    blocked = next(((i, f.unfollowable) for i, f in nb.facts.items() if f.unfollowable), None)
    if blocked:  # when in doubt, execute: every cell
        why = f"cell {blocked[0]} uses {blocked[1]}, which the analysis cannot follow: every cell runs"
        return Plan({i: why for i in nb.facts}, [])
    run, skip = {}, []
    needed, rng_needed, files_needed, modules_needed = set(), False, False, set()
    for i in sorted(nb.facts, reverse=True):
        f = nb.facts[i]
        why = _must_run(cells[i], f, nb, release) or _needed(f, nb, needed, rng_needed, files_needed, modules_needed)
        if not why:
            skip.append(i)
            continue
        run[i] = why
        reads = _expand(nb, f.exposed)
        needed = (needed - f.kills) | reads
        modules_needed |= _stateful(nb, reads | _expand(nb, f.reads))
        reseeds = f.reseeds_with in nb.reseeders
        rng_needed = not reseeds and (rng_needed or f.rng or bool(reads & nb.rng_funcs))
        files_needed = files_needed or f.file_reads
    return Plan(run, sorted(skip))


@functools.lru_cache(maxsize=1024)
def _student_unfollowable(source):
    """Why a cell the student wrote reaches what the analysis cannot follow (STUDENT_UNFOLLOWABLE, a dunder name in
    code or in a string), or ''."""
    try:
        tree = ast.parse(source)  # it parsed for facts()
        found = STUDENT_UNFOLLOWABLE.search(_code(tree))
    except (RecursionError, MemoryError):
        return "code nested too deeply to analyse"
    if found:
        return f"`{found[0]}`"
    for node in ast.walk(tree):
        format_call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
        if format_call and not isinstance(node.func.value, ast.Constant):  # "{0.__globals__}" built at run time
            return "`.format` of a string made at run time"
        if isinstance(node, ast.Attribute) and DUNDER.fullmatch(node.attr) and node.attr not in PLAIN_DUNDERS:
            return f"`{node.attr}`"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("__del__", "__getattr__"):
            return f"`{node.name}`"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and DUNDER.search(node.value):
            return f"`{DUNDER.search(node.value)[0]}` in a string"
    return ""


def release_fingerprints(release_nb):
    """The fingerprints of a release notebook's code cells (what a student did not write)."""
    return {fingerprint(c.get("source", "")) for c in release_nb["cells"] if c.get("cell_type") == "code"}


# --- marking a notebook ---------------------------------------------------------------------------------------

SKIP_TAG = "skip-execution"  # the tag nbclient's NotebookClient (so nbgrader's Execute) does not execute


def _tags(cell):
    metadata = cell.setdefault("metadata", {})
    tags = metadata.get("tags")
    return tags if isinstance(tags, list) else []


def unmark(cell):
    """No cell skips execution because of what the submission says: the tag and the flag come from here only."""
    metadata = cell.get("metadata")
    if not isinstance(metadata, dict):
        return
    if SKIP_TAG in _tags(cell):
        metadata["tags"] = [t for t in _tags(cell) if t != SKIP_TAG]
    metadata.pop(FLAG, None)


def mark(cell, why=""):
    """A cell grading leaves out: nbclient skips it, and its outputs become the note (no stale output is shown as
    the grader's)."""
    node = type(cell)  # nbformat's NotebookNode (attribute access) or a plain dict, as the notebook has them
    cell["metadata"]["tags"] = [*_tags(cell), SKIP_TAG]
    cell["metadata"][FLAG] = node(not_run=True)
    cell["outputs"] = [node(output_type="stream", name="stdout", text=NOTE + "\n")]
    cell["execution_count"] = None


def apply(nb, release):
    """Mark the cells of `nb` that grading leaves out (release: fingerprints, or None: none). Returns the Plan."""
    for cell in nb["cells"]:
        unmark(cell)
    try:
        result = plan(nb["cells"], release)
    except Exception as err:  # noqa: BLE001 - odd code the analysis trips on must cost neither a grade nor a run
        why = f"the analysis failed ({type(err).__name__}): every cell runs"
        result = Plan({i: why for i, c in enumerate(nb["cells"]) if c.get("cell_type") == "code"}, [])
    for index in result.skip:
        mark(nb["cells"][index])
    return result


def read_fingerprints(path):
    """The fingerprints of every release code cell of the course, from `notebooks/.release_cells.json` (made by
    `make release`), or None when the file is missing or unreadable (then nothing is left out)."""
    import json

    try:
        with open(path, encoding="utf-8") as file:
            return {fp for cells in json.load(file).values() for fp in cells}
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def validate_hook(fingerprints_path):
    """nbclient's `on_notebook_start` hook for nbgrader's Validate (NBGRADER_VALIDATING=1): the notebook is pruned
    against the course's release fingerprints before it runs. Set in nbgrader_config.py as
    `c.Execute.on_notebook_start`; it does nothing in any other run (nbgrader's autograde has PruneCells)."""
    import os

    def on_notebook_start(notebook=None, **_):
        if notebook is None or os.environ.get("NBGRADER_VALIDATING") != "1":
            return
        if os.environ.get("AUTOGRADE_FULL") == "1":
            for cell in notebook["cells"]:
                unmark(cell)
            return
        apply(notebook, read_fingerprints(fingerprints_path))

    return on_notebook_start


def check_annotations(cells, release):
    """The authoring check of `# autograde: independent` (LESSON_ANATOMY.md): problems, one line each. The mark
    belongs on a plain code cell (not an answer or a test) that the analysis would keep only because of the global
    random generators, and that it leaves out with the mark: anything else means the mark is wrong or dead. (That
    leaving it out changes no grade is what tests/test_prune_equivalence.py proves on every catalog variant.)"""
    problems = []
    marked = [i for i, c in enumerate(cells) if c.get("cell_type") == "code" and facts(c.get("source", "")).annotated]
    with_mark = plan(cells, release)
    for i in marked:
        unmarked = [dict(c) for c in cells]
        unmarked[i] = {**cells[i], "source": normalise(cells[i].get("source", "")).replace(ANNOTATION, "# (mark off)")}
        fps = set(release) | {fingerprint(unmarked[i]["source"])}
        without = plan(unmarked, fps)
        if is_graded(cells[i]):
            problems.append(f"cell {i}: {ANNOTATION} on a graded cell (answers and tests always run)")
        elif i not in with_mark.skip:
            problems.append(f"cell {i}: {ANNOTATION} but the cell still runs ({with_mark.run[i]}): remove the mark")
        elif i in without.skip:
            problems.append(f"cell {i}: {ANNOTATION} is not needed (the cell is left out without it): remove the mark")
        elif "random generator" not in without.run.get(i, ""):
            problems.append(f"cell {i}: {ANNOTATION} lifts more than the random generators ({without.run.get(i)})")
    return problems
