"""The integrity guard inside the student's kernel (it runs in the sandbox, never in the grader).

The grader sends this file's source, with the lesson's test cells, through a private file descriptor;
a setup cell that runs before any student code compiles it and calls `install`. From then on:

* **The tests run here, not in the student's namespace.** The grader replaces each test cell by a
  comment with a fresh nonce (`# autograde test <nonce>`). When IPython compiles that comment, the
  Python audit hook installed here (it cannot be removed) runs the real test source, which only this
  file holds, in a namespace of its own: the student's names, but the lesson's imports (`np`,
  `checks`, `torch`, ...) as they were before any student code ran (`frozen` modules), a private copy
  of the builtins, and `import` resolved from the modules loaded at set-up. Whether the test passed
  is written to the grader through an authenticated channel (`Channel`): scores never come from
  outputs the student's code could print or forge.
* **State is checked around every test** (`State.changes`): rebound names of numpy, torch, the
  helper package, math and the builtins, patched classes, `sys.modules`, the import system, IPython's
  hooks, signal handlers, threads running student code. A change found before a test is undone (and
  reported); a change made while a test ran fails that test.
* **Reaching into the interpreter is reported** (`Hook`): frames (`sys._getframe`, `tb_frame`, ...),
  gc, ctypes, trace hooks, code objects, `/proc/*/mem`. Done while a test runs, it fails that test;
  done elsewhere, every later test fails (nothing after it can be trusted). Starting a process is
  reported, nothing more.

Only the standard library is imported here; names are bound when `install` runs, before any student
code, so that later rebinding cannot change what this code does.
"""

import ast
import builtins
import dis
import hashlib
import hmac
import json
import os
import signal
import sys
import threading
import types

TEST_MARKER = "# autograde test "
CHECK_MARKER = "# autograde check "
GUARD_FILE = "<autograde guard>"
TEST_FILE = "<autograde test "
HIDDEN = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")  # nbgrader's; the grader sends the course's (guard.payload)

# Standard-library modules that act for their caller (they return frames, or call what they are given):
# an event they raise counts as their caller's. Not here: modules that read a frame for themselves
# (collections.namedtuple, typing, enum and warnings look up their caller's module name).
PLUMBING = frozenset(
    "inspect traceback linecache functools contextlib copy types weakref operator importlib threading "
    "concurrent asyncio sched atexit subprocess os posixpath shutil pty multiprocessing signal socket "
    "selectors ctypes gc codecs io pickle copyreg".split()
)
SOFT_PLUMBING = frozenset({"traceback", "linecache"})  # format frames for their caller: reported, not fatal
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
FRAME_EVENTS = frozenset({"sys._getframe", "sys._current_frames", "sys._getframemodulename"})
INTERPRETER_EVENTS = frozenset(
    {
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys.settrace",
        "sys.setprofile",
        "sys.addaudithook",
        "code.__new__",
        "function.__new__",
        "cpython.PyInterpreterState_Clear",
        "cpython._PySys_ClearAuditHooks",
    }
)
PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.exec",
        "os.spawn",
        "pty.spawn",
        "os.kill",
        "os.killpg",
        "socket.connect",
    }
)
SEALED_ATTRIBUTES = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
VOLATILE = frozenset(
    {"exit", "quit", "get_ipython", "input", "raw_input", "display", "_", "__", "___", "__IPYTHON__"}
    | {"_ih", "_oh", "_dh", "In", "Out", "help", "breakpoint"}
)


_MRO = type.__dict__["__mro__"].__get__  # C getter: a metaclass cannot intercept it


def is_a(obj, cls):
    """isinstance without running any code of obj's class (no `__class__` property, no metaclass hook)."""
    for base in _MRO(type(obj)):
        if base is cls:
            return True
    return False


# --------------------------------------------------------------------------------------------
# the channel to the grader


class Channel:
    """One line per record, `<hmac> <json>`, written to a pipe the grader reads; the key is made here,
    before any student code, and sent in the first record."""

    def __init__(self, fd):
        self.fd, self.key, self.seq = fd, os.urandom(32), 0
        self._write, self._dumps, self._hmac, self._sha = os.write, json.dumps, hmac.new, hashlib.sha256

    def emit(self, kind, **data):
        self.seq += 1
        data["seq"], data["kind"] = self.seq, kind
        body = self._dumps(data, default=str, sort_keys=True)
        line = self._hmac(self.key, body.encode(), self._sha).hexdigest() + " " + body + "\n"
        try:
            self._write(self.fd, line.encode())
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# whose code is running


class Trust:
    """Which code is the Python environment's (read-only in the sandbox) and which is the notebook's.

    A frame is trusted when its code's file lies under the interpreter, the environment or the helper
    package, or is this guard or a test it runs. (A notebook cannot compile code under such a name
    without the audit hook seeing it: `compile` and `code.__new__` are checked.)"""

    def __init__(self, roots, getframe=sys._getframe):
        self.roots = tuple(sorted({r.rstrip(os.sep) + os.sep for r in roots if r and r != os.sep}))
        self.getframe = getframe

    def trusted_file(self, filename):
        if type(filename) is not str:
            return False
        if filename == GUARD_FILE or filename.startswith(TEST_FILE) or filename.startswith("<frozen "):
            return True
        return filename.startswith(self.roots)

    def trusted_frame(self, frame):
        return self.trusted_file(frame.f_code.co_filename)

    def accessor(self, frame):
        """(frame, via) for the code that raised an event whose innermost Python frame is `frame`:
        plumbing frames of the standard library are skipped (they act for their caller); `via` names
        the plumbing passed through."""
        via, steps = "", 0
        while frame is not None and steps < 200:
            module = (frame.f_globals.get("__name__") or "").split(".")[0]
            if not (module in PLUMBING and self.trusted_frame(frame)):
                return frame, via
            via = via or module
            frame, steps = frame.f_back, steps + 1
        return None, via

    def stack_trusted(self, frame):
        """True when every frame from `frame` outwards is trusted (IPython running a cell)."""
        while frame is not None:
            if not self.trusted_frame(frame):
                return False
            frame = frame.f_back
        return True


def trusted_roots(helpers):
    """The interpreter, the environment's site-packages and the helper packages' folders."""
    import site
    import sysconfig

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(os.__file__)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        roots.add(sysconfig.get_paths().get(key, ""))
    try:
        roots.update(site.getsitepackages())
    except AttributeError:
        pass
    for name in helpers:
        module = sys.modules.get(name)
        roots.update(getattr(module, "__path__", []) or [])
    return {os.path.realpath(r) for r in roots if r} | {r for r in roots if r}


# --------------------------------------------------------------------------------------------
# the state the tests rely on


class Change:
    """A difference from the set-up state, with how to undo it."""

    def __init__(self, what, undo=None):
        self.what, self.undo = what, undo


def _heap_type(cls):
    return bool(type.__dict__["__flags__"].__get__(cls) & (1 << 9))


class State:
    """A snapshot, taken before any student code, of what the tests rely on; `changes()` lists what
    differs now and `restore(changes)` puts it back."""

    def __init__(self, shell, packages, helpers, trust, attributes=()):
        self.shell, self.packages, self.helpers, self.trust = shell, tuple(packages), tuple(helpers), trust
        self.sys_modules = dict(sys.modules)  # every module loaded at set-up (for `import` in tests)
        self.modules = {
            name: (module, type(module), dict(module.__dict__))
            for name, module in list(sys.modules.items())
            if is_a(module, types.ModuleType) and name.split(".")[0] in self.packages
        }
        self.watched = {name: self._watched_names(name, values) for name, (_, _, values) in self.modules.items()}
        self.classes = self._classes(attributes)
        self.builtins = dict(builtins.__dict__)
        self.paths = (list(sys.path), list(sys.meta_path), list(sys.path_hooks))
        self.events = {e: list(cbs) for e, cbs in shell.events.callbacks.items()}
        self.transformers = self._transformer_lists()
        self.shell_attrs = set(shell.__dict__)
        self.signals = self._signals()
        self.threads = set(sys._current_frames())
        self._stores = {}  # module name -> global names its own code stores (`_library_state`)

    # --- what is watched
    def _watched_names(self, name, values):
        private = name.split(".")[0] in self.helpers
        return tuple(
            k
            for k, v in values.items()
            if (private or not k.startswith("_")) and k not in VOLATILE and not is_a(v, types.ModuleType)
        )

    def _protected(self, module_name):
        return type(module_name) is str and module_name.split(".")[0] in self.packages

    def _resolve(self, dotted):
        """The set-up value of a dotted name (`torch.nn.RNNCell`), or None."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in self.modules:
                value = self.modules[".".join(parts[:i])][0]
                for attr in parts[i:]:
                    value = self._attribute(value, attr)
                return value
        return None

    def _attribute(self, value, attr):
        """An attribute of a module (as at set-up) or of a class (from its own dict), else None."""
        if is_a(value, types.ModuleType):
            entry = self.modules.get(value.__dict__.get("__name__"))
            return entry[2].get(attr) if entry else None
        if is_a(value, type):
            return type.__dict__["__dict__"].__get__(value).get(attr)
        return None

    def _classes(self, attributes):
        """Classes the tests reach (`torch.nn.RNNCell` and its bases in the watched packages), with their
        contents: a patched method of one of them changes what a test computes."""
        found = {}
        for dotted in attributes:
            value = self._resolve(dotted)
            if is_a(value, type):
                for cls in type.__dict__["__mro__"].__get__(value):
                    if id(cls) not in found and _heap_type(cls) and self._protected(cls.__dict__.get("__module__")):
                        found[id(cls)] = (cls, dict(cls.__dict__))
        return list(found.values())

    def _transformer_lists(self):
        manager = getattr(self.shell, "input_transformer_manager", None)
        lists = {}
        for owner, attrs in (
            (self.shell, ("input_transformers_cleanup", "input_transformers_post", "ast_transformers")),
            (manager, ("cleanup_transforms", "line_transforms", "token_transformers")),
        ):
            for attr in attrs:
                value = getattr(owner, attr, None)
                if type(value) is list:
                    lists[(owner, attr)] = (value, list(value))
        return lists

    @staticmethod
    def _signals():
        handlers = {}
        for sig in signal.valid_signals():
            try:
                handlers[sig] = signal.getsignal(sig)
            except (ValueError, OSError):
                pass
        return handlers

    # --- what changed
    def changes(self):
        found = []
        for check in (
            self._module_changes,
            self._class_changes,
            self._builtin_changes,
            self._import_changes,
            self._shell_changes,
            self._signal_changes,
            self._thread_changes,
        ):
            found += check()
        return found

    def _library_wrapper(self, name, old, new):
        """The package wrapped one of its own functions (torch._dynamo wraps torch.manual_seed on import)."""
        if type(new) is not types.FunctionType or new.__dict__.get("__wrapped__") is not old:
            return False
        code = new.__code__
        top = sys.modules.get(name.split(".")[0])
        home = os.path.dirname(getattr(top, "__file__", None) or "/nonexistent/x")
        return code is not None and code.co_filename.startswith(home + os.sep)

    def _library_state(self, name, key, new):
        """The library's own lazy state (`global LOADED; LOADED = True` in torch._functorch.predispatch),
        told apart by origin: only code whose globals are the module's dict can store a global name, and
        the module's own code, in its file inside the environment, stores this one. A value the notebook
        made (its function, class, or an instance of its class) is never the library's."""
        module, _, values = self.modules[name]
        path = values.get("__file__")
        if type(path) is not str or not self.trust.trusted_file(os.path.realpath(path)):
            return False
        if name not in self._stores:
            self._stores[name] = _global_stores(values.values(), path)
        return key in self._stores[name] and not self._notebook_made(new)

    def _notebook_made(self, value):
        if type(value) is types.CodeType:
            return True
        for candidate in (value, type(value)):
            if type(candidate) is types.MethodType:
                candidate = candidate.__func__
            if type(candidate) is types.FunctionType:
                if not self.trust.trusted_file(candidate.__code__.co_filename):
                    return True
            elif is_a(candidate, type) and _heap_type(candidate):
                members = type.__dict__["__dict__"].__get__(candidate)
                if members.get("__module__") == "__main__" or any(
                    type(m) is types.FunctionType and not self.trust.trusted_file(m.__code__.co_filename)
                    for m in members.values()
                ):
                    return True
        return False

    def _module_changes(self):
        found = []
        for name, (module, cls, values) in self.modules.items():
            now = module.__dict__
            changed = []
            for key in self.watched[name]:
                old = values[key]
                if key not in now:
                    changed.append(key)
                elif now[key] is not old:
                    if self._library_wrapper(name, old, now[key]) or self._library_state(name, key, now[key]):
                        values[key] = now[key]
                    else:
                        changed.append(key)
            if changed:

                def undo(module=module, values=values, keys=tuple(changed)):
                    for key in keys:
                        module.__dict__[key] = values[key]

                shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
                found.append(Change(f"{name}: rebinds {shown}", undo))
            if type(module) is not cls:
                found.append(
                    Change(f"{name}: its module type was replaced", lambda m=module, c=cls: setattr(m, "__class__", c))
                )
            if sys.modules.get(name) is not module and name in self.sys_modules:
                found.append(
                    Change(f"sys.modules[{name!r}] replaced", lambda n=name, m=module: sys.modules.__setitem__(n, m))
                )
        return found

    def _class_changes(self):
        found = []
        for cls, before in self.classes:
            now = cls.__dict__
            changed = [k for k, v in before.items() if now.get(k, now) is not v and not k.startswith("_abc")]
            for key in [k for k in changed if k in now and self._library_wrapper(cls.__module__, before[k], now[k])]:
                before[key] = now[key]  # the library wrapped its own method (torch.optim wraps `step`)
                changed.remove(key)
            added = [k for k, v in now.items() if k not in before and callable(v) and not k.startswith("_abc")]
            if changed or added:

                def undo(cls=cls, before=before, changed=tuple(changed), added=tuple(added)):
                    for key in changed:
                        type.__setattr__(cls, key, before[key])
                    for key in added:
                        type.__delattr__(cls, key)

                keys = changed + added
                found.append(Change(f"class {cls.__module__}.{cls.__qualname__}: patches {', '.join(keys[:5])}", undo))
        return found

    def _builtin_changes(self):
        now = builtins.__dict__
        changed = [k for k, v in self.builtins.items() if k not in VOLATILE and now.get(k, now) is not v]
        if not changed:
            return []

        def undo(keys=tuple(changed)):
            for key in keys:
                builtins.__dict__[key] = self.builtins[key]

        return [Change(f"builtins: rebinds {', '.join(changed[:5])}", undo)]

    def _import_changes(self):
        found = []
        for label, current, before in zip(
            ("sys.path", "sys.meta_path", "sys.path_hooks"), (sys.path, sys.meta_path, sys.path_hooks), self.paths
        ):
            if len(current) != len(before) or any(a is not b for a, b in zip(current, before)):
                found.append(
                    Change(
                        f"{label} changed",
                        lambda current=current, before=before: current.__setitem__(slice(None), before),
                    )
                )
        return found

    def _shell_changes(self):
        found = []
        for event, callbacks in self.shell.events.callbacks.items():
            before = self.events.get(event, [])
            foreign = [cb for cb in callbacks if not any(cb is b for b in before) and not self._trusted_callable(cb)]
            if foreign:
                found.append(
                    Change(
                        f"an IPython {event} callback was registered",
                        lambda callbacks=callbacks, foreign=foreign: [callbacks.remove(cb) for cb in foreign],
                    )
                )
        for (owner, attr), (value, before) in self.transformers.items():
            current = getattr(owner, attr, None)
            if current is not value or len(value) != len(before) or any(a is not b for a, b in zip(value, before)):

                def undo(owner=owner, attr=attr, value=value, before=before):
                    value[:] = before
                    setattr(owner, attr, value)

                found.append(Change(f"IPython's {attr} changed", undo))
        for attr in set(self.shell.__dict__) - self.shell_attrs:
            if callable(self.shell.__dict__[attr]):
                found.append(
                    Change(f"IPython shell method {attr} was replaced", lambda a=attr: self.shell.__dict__.pop(a, None))
                )
        return found

    def _trusted_callable(self, cb):
        func = cb.__func__ if type(cb) is types.MethodType else cb
        return type(func) is types.FunctionType and self.trust.trusted_file(func.__code__.co_filename)

    def _signal_changes(self):
        found = []
        for sig, before in self.signals.items():
            try:
                now = signal.getsignal(sig)
            except (ValueError, OSError):
                continue
            if now is not before:
                found.append(
                    Change(f"a handler for signal {sig} was installed", lambda s=sig, b=before: signal.signal(s, b))
                )
        return found

    def _thread_changes(self):
        found = []
        for ident, frame in sys._current_frames().items():
            if ident in self.threads or ident == threading.get_ident():
                continue
            while frame is not None:
                if not self.trust.trusted_frame(frame):
                    found.append(Change("a thread started by the notebook is running"))
                    break
                frame = frame.f_back
        return found

    @staticmethod
    def restore(changes):
        for change in changes:
            if change.undo is not None:
                try:
                    change.undo()
                except Exception:  # noqa: BLE001 - reported anyway; the test decides what it means
                    pass


def _global_stores(values, path):
    """Names that code defined in the file `path` (functions and methods among `values`, and the code
    nested in them) stores or deletes as globals."""
    names, seen, todo = set(), set(), []
    for value in values:
        members = type.__dict__["__dict__"].__get__(value).values() if is_a(value, type) else ()
        for item in (value, *members):
            item = getattr(item, "__func__", item) if type(item) in (classmethod, staticmethod) else item
            for _ in range(5):  # decorated (functools.wraps, lru_cache): the function it wraps
                if type(item) is types.FunctionType or item is None:
                    break
                try:
                    item = object.__getattribute__(item, "__wrapped__")
                except AttributeError:
                    item = None
            if type(item) is types.FunctionType and item.__code__.co_filename == path:
                todo.append(item.__code__)
    while todo:
        code = todo.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        todo += [c for c in code.co_consts if type(c) is types.CodeType]
        names.update(i.argval for i in dis.get_instructions(code) if i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"))
    return names


# --------------------------------------------------------------------------------------------
# the tests' namespace


def frozen_modules(state):
    """A function giving, for a module loaded at set-up, a stand-in whose attributes are the module's
    values at set-up (submodules are stand-ins too). A new set of stand-ins is made for each test."""
    cache, owners = {}, {}
    module_getattribute = types.ModuleType.__getattribute__

    class Frozen(types.ModuleType):
        def __getattribute__(self, attr):
            module, values = owners[id(self)]
            if attr in values:
                value = values[attr]
            else:
                value = getattr(module, attr)
            if is_a(value, types.ModuleType) and value.__name__ in state.modules:
                return frozen(value.__name__)
            return value

        def __repr__(self):
            return module_getattribute(self, "__repr__")()

    def frozen(name):
        if name not in cache:
            module, _, values = state.modules[name]
            proxy = Frozen(name)
            owners[id(proxy)] = (module, values)
            cache[name] = proxy
        return cache[name]

    return frozen


class Mirrored(dict):
    """A test's globals. A name the visible part of the test binds at its top level is also bound in the
    notebook's namespace at once, as when test cells ran there (a test may stand in for one of the
    notebook's functions while it runs); a function the test defines reaches the notebook as a copy
    that looks names up in the notebook, so the test's own namespace stays out of the notebook's reach."""

    def __init__(self, user_ns, visible, rebind):
        super().__init__()
        self._user_ns, self._visible, self._rebind = user_ns, visible, rebind

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, value)
        if key in self._visible:
            if type(value) is types.FunctionType and value.__code__.co_filename.startswith(TEST_FILE):
                value = self._rebind(value, self._user_ns)
            self._user_ns[key] = value

    def __delitem__(self, key):
        dict.__delitem__(self, key)
        if key in self._visible:
            self._user_ns.pop(key, None)

    def mirror(self, names):
        """A test's function assigned these `global` names: the notebook's code sees the new values."""
        for key in names:
            if key in self._visible or key in self._user_ns:
                if key in self:
                    value = dict.__getitem__(self, key)
                    if type(value) is types.FunctionType and value.__code__.co_filename.startswith(TEST_FILE):
                        value = self._rebind(value, self._user_ns)
                    self._user_ns[key] = value
                else:
                    self._user_ns.pop(key, None)


def guarded_import(state, frozen, real_import):
    """`import` for the tests: modules loaded at set-up are taken from then, not from sys.modules now."""

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            wanted = name if fromlist else name.split(".")[0]
            if wanted in state.modules:
                return frozen(wanted)
            if wanted in state.sys_modules:
                return state.sys_modules[wanted]
        return real_import(name, globals, locals, fromlist, level)

    return __import__


MIRROR = "__autograde_mirror__"


class MirrorGlobals(ast.NodeTransformer):
    """After each statement that assigns a name declared `global` in one of the test's functions (in
    that function, and at the top level, where Python then stores such a name without the namespace's
    `__setitem__`), a call that passes the new value on to the notebook (`Mirrored.mirror`): the
    test's globals are not the notebook's, but a test that stands in for a notebook's function must
    reach the notebook's code."""

    def visit_Module(self, node):
        declared = {n for stmt in ast.walk(node) if isinstance(stmt, ast.Global) for n in stmt.names}
        if declared:
            node.body = self._mirror(node.body, declared)
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_Module  # a function's `global` statements, the same way

    visit_AsyncFunctionDef = visit_FunctionDef

    def _mirror(self, body, declared):
        out = []
        for stmt in body:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list) and not isinstance(
                    stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                ):
                    setattr(stmt, field, self._mirror(getattr(stmt, field), declared))
            for handler in getattr(stmt, "handlers", []):
                handler.body = self._mirror(handler.body, declared)
            out.append(stmt)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            stored = {
                t.id
                for target in _targets(stmt)
                for t in ast.walk(target)
                if isinstance(t, ast.Name) and t.id in declared
            }
            if stored:
                call = ast.Call(ast.Name(MIRROR, ast.Load()), [ast.Constant(tuple(sorted(stored)))], [])
                out.append(ast.copy_location(ast.Expr(call), stmt))
        return out


def _targets(stmt):
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, ast.Delete):
        return stmt.targets
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    return []


def code_names(code):
    """Global names a code object (and the code nested in it) may look up."""
    names, todo = set(), [code]
    while todo:
        code = todo.pop()
        names.update(code.co_names)
        todo += [c for c in code.co_consts if type(c) is types.CodeType]
    return names


def tree_names(*trees):
    """Every name a test's syntax trees mention (loaded, stored or declared `global`)."""
    names = set()
    for tree in trees:
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
    return names


def split_test(source, hidden=HIDDEN):
    """(code to exec, expression to evaluate or None, names bound at the top level of the visible part). The
    hidden part is what nbgrader's ClearHiddenTests removes: the lines from one holding `hidden[0]` to one
    holding `hidden[1]`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (magics): as IPython would run it
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
        tree = ast.parse(source)
    lines = source.splitlines()
    begin, end = hidden
    hidden_lines, inside = set(), False
    for number, line in enumerate(lines, 1):
        if begin in line:
            inside = True
        if inside:
            hidden_lines.add(number)
        if end in line:
            inside = False
    visible = set()
    for node in tree.body:
        if node.lineno in hidden_lines:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            visible.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            visible.update((a.asname or a.name.split(".")[0]) for a in node.names)
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    visible.add(sub.id)
    value = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        value = ast.Expression(tree.body.pop().value)
    tree = ast.fix_missing_locations(MirrorGlobals().visit(tree))
    return tree, value, visible


def plain_error(err):
    """(name, message) of an exception, without running any method the notebook could define."""
    cls = type(err)
    name = type.__dict__["__name__"].__get__(cls)
    args = BaseException.args.__get__(err)
    if all(type(a) is str or type(a) is int or type(a) is float for a in args):
        return name, BaseException.__str__(err)[:2000]
    return name, "(the message is not shown: it holds objects made by the notebook)"


def plain_value(value):
    """A test's final value, for partial credit, if it is a plain number (never a bool)."""
    if type(value) is int or type(value) is float:
        return float(value)
    return None


# --------------------------------------------------------------------------------------------
# the guard


class Guard:
    """Runs the tests and watches the interpreter; `hook` is the audit hook."""

    def __init__(self, payload, shell, channel, state, trust):
        self.tests = dict(payload.get("tests", {}))
        self.imports = [tuple(i) for i in payload.get("imports", [])]
        self.hidden = tuple(payload.get("hidden", HIDDEN))
        self.shell, self.channel, self.state, self.trust = shell, channel, state, trust
        self.user_ns = shell.user_ns
        self.get_ipython = self.user_ns.get("get_ipython")
        self.real_import = builtins.__import__
        self.hidden_names = {}  # names bound by earlier tests' hidden parts (they stay out of the notebook)
        self.busy = False
        self.getframe = sys._getframe
        self.current = None  # violations of the test now running
        self.taint = ""  # why no later test can be trusted
        self.reported = set()
        self.test_names = set()
        for test in self.tests.values():
            try:
                self.test_names |= tree_names(ast.parse(test.get("source", "")))
            except (SyntaxError, ValueError):
                pass
        self.import_values = {}  # filled by `install`, once the state is taken

    # --- events
    def hook(self, event, args):
        if self.busy or not self._interesting(event, args):
            return
        self.busy = True
        try:
            self._event(event, args, self.getframe(1))
        finally:
            self.busy = False

    @staticmethod
    def _interesting(event, args):
        if event == "object.__getattr__":
            return len(args) > 1 and (args[1] in FRAME_ATTRIBUTES or args[1] in SEALED_ATTRIBUTES)
        if event == "open":
            path = args[0] if args else None
            return type(path) is str and (path.endswith(("/mem", ".pyc")) or path in ("/dev/mem", "/dev/kmem"))
        return (
            event == "compile"
            or event == "object.__setattr__"
            or event in FRAME_EVENTS
            or event in INTERPRETER_EVENTS
            or event in PROCESS_EVENTS
            or event == "marshal.loads"
            or event.startswith("ctypes.")
        )

    def _event(self, event, args, caller):
        if event == "compile":
            self._compile(args, caller)
        elif event == "object.__getattr__":
            if args[1] in FRAME_ATTRIBUTES:
                self._inspects(f"reads {args[1]}", caller)
            elif self._helper_function(args[0]):
                self._inspects(f"reads {args[1]} of a helper function", caller)
        elif event == "object.__setattr__":
            self._sets(args, caller)
        elif event == "open":
            if not args[0].endswith(".pyc"):
                self._inspects(f"opens {args[0]}", caller)
            elif not self.trust.trusted_file(args[0]):  # compiled code claims any file name it likes
                self._report(f"loads compiled code from {args[0]}", fatal=True)
        elif event == "marshal.loads":
            frame, via = self.trust.accessor(caller)
            if via != "importlib" and frame is not None and not self.trust.trusted_frame(frame):
                self._report("makes code objects with marshal.loads", fatal=True)
        elif event in PROCESS_EVENTS:
            frame, _ = self.trust.accessor(caller)
            if frame is not None and not self.trust.trusted_frame(frame):
                detail = ""
                if event in ("subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn") and args:
                    detail = ": " + str(args[1] if event != "os.system" and len(args) > 1 else args[0])[:60]
                what = (
                    "started a process" if event not in ("os.kill", "os.killpg", "socket.connect") else event
                ) + detail
                self._report(what, fatal=False)
        else:
            self._inspects(event, caller)

    def _helper_function(self, target):
        if type(target) is not types.FunctionType:
            return False
        module = target.__module__
        return type(module) is str and module.split(".")[0] in self.state.helpers

    def _sets(self, args, caller):
        target = args[0] if args else None
        if is_a(target, types.ModuleType):
            owner = types.ModuleType.__dict__["__dict__"].__get__(target).get("__name__")
        elif type(target) is types.FunctionType:
            owner = target.__module__
        elif is_a(target, type):
            owner = type.__dict__["__dict__"].__get__(target).get("__module__")
        else:
            return
        if self.state._protected(owner):
            frame, _ = self.trust.accessor(caller)
            if frame is not None and not self.trust.trusted_frame(frame):
                self._report(f"sets {owner}: {args[1] if len(args) > 1 else '?'}", fatal=True)

    def _inspects(self, what, caller):
        frame, via = self.trust.accessor(caller)
        if frame is None or self.trust.trusted_frame(frame):
            return
        soft = via in SOFT_PLUMBING
        self._report(what + (f" (through {via})" if via else ""), fatal=not soft)

    def _report(self, what, fatal):
        if self.current is not None:
            self.current.append((what, fatal))
            return
        if fatal and not self.taint:
            self.taint = what
        if what not in self.reported:
            self.reported.add(what)
            self.channel.emit("violation", what=what, fatal=fatal)

    def _compile(self, args, caller):
        source = args[0] if args else None
        if type(source) is bytes:
            try:
                source = source.decode()
            except UnicodeDecodeError:
                return
        filename = args[1] if len(args) > 1 else None
        if type(source) is str and source.startswith((TEST_MARKER, CHECK_MARKER)):
            if not self.trust.stack_trusted(caller):
                self._report("compiled a grader's cell from its own code", fatal=True)
                return
            nonce = source.split()[3] if len(source.split()) > 3 else ""
            if source.startswith(TEST_MARKER):
                self.run_test(nonce)
            else:
                self.check(nonce)
            return
        if self.trust.trusted_file(filename):
            frame, _ = self.trust.accessor(caller)
            if frame is not None and not self.trust.trusted_frame(frame):
                self._report(f"compiles code under the name {filename!r}", fatal=True)

    # --- checks and tests
    def check(self, nonce):
        changes = self.state.changes()
        self.state.restore(changes)
        self.channel.emit("check", nonce=nonce, problems=[c.what for c in changes] + self.shadows())

    def shadows(self):
        """The notebook's globals, at the end, that shadow a builtin the tests use or a name the lesson
        imported for them (a check helper, `np`): whatever syntax bound them, the tests never see them."""
        found = []
        for key, value in list(self.user_ns.items()):
            if type(key) is not str or key.startswith("__") or key in VOLATILE:
                continue
            if key in self.test_names and key in self.state.builtins and value is not self.state.builtins[key]:
                found.append(f"the notebook's global {key!r} shadows the builtin {key}")
            elif key in self.import_values and value is not self.import_values[key]:
                found.append(f"the notebook's global {key!r} shadows the lesson's {key}")
        return found

    def setup_values(self):
        """{name: value} of the lesson's imports (`np`, `checks`, `expect_close`) as at set-up."""
        values = {}
        for name, module, attribute in self.imports:
            if module in self.state.modules:
                entry = self.state.modules[module]
                values[name] = entry[0] if attribute is None else entry[2].get(attribute)
        return {k: v for k, v in values.items() if v is not None}

    def needed(self, used):
        """The names a test can look up: those its code uses, and those the functions of earlier tests it
        uses use, in turn."""
        needed, todo = set(), list(used)
        while todo:
            key = todo.pop()
            if key in needed:
                continue
            needed.add(key)
            value = self.hidden_names.get(key, self.user_ns.get(key))
            if type(value) is types.FunctionType and value.__code__.co_filename.startswith(TEST_FILE):
                todo += code_names(value.__code__)
        return needed

    def namespace(self, visible, used=None):
        """The test's globals: of the notebook's names only those the test needs (`needed`), never one named
        like a builtin; the lesson's imports as at set-up; private builtins. Names the visible part of the
        test binds reach the notebook at once (`Mirrored`)."""
        frozen = frozen_modules(self.state)
        own = dict(self.state.builtins)
        own["__import__"] = guarded_import(self.state, frozen, self.real_import)
        protected = {name for name, _, _ in self.imports} | {"__builtins__", "__name__", "get_ipython"}
        ns = Mirrored(self.user_ns, visible - protected, self.rebind)
        needed = self.needed(self.user_ns.keys() | self.hidden_names.keys() if used is None else used)
        notebook = [(k, v) for k, v in self.user_ns.items() if k in needed and k not in self.state.builtins]
        for key, value in [*notebook, *self.hidden_names.items()]:
            if type(value) is types.FunctionType and value.__code__.co_filename.startswith(TEST_FILE):
                value = self.rebind(value, ns)  # a function an earlier test defined: it sees this test's names
            dict.__setitem__(ns, key, value)
        for name, module, attribute in self.imports:
            if module not in self.state.modules:
                continue
            if attribute is None:
                dict.__setitem__(ns, name, frozen(module))
            else:
                value = self.state.modules[module][2].get(attribute)
                if is_a(value, types.ModuleType) and value.__name__ in self.state.modules:
                    value = frozen(value.__name__)
                if value is not None:
                    dict.__setitem__(ns, name, value)
        for key, value in (("__builtins__", own), ("__name__", "__main__"), ("get_ipython", self.get_ipython)):
            dict.__setitem__(ns, key, value)
        dict.__setitem__(ns, MIRROR, ns.mirror)
        return ns

    @staticmethod
    def rebind(function, namespace):
        copy = types.FunctionType(
            function.__code__, namespace, function.__name__, function.__defaults__, function.__closure__
        )
        copy.__kwdefaults__ = function.__kwdefaults__
        return copy

    def run_test(self, nonce):
        test = self.tests.pop(nonce, None)
        if test is None:  # IPython compiles a cell more than once (to see whether it awaits): it ran already
            return
        record = {"nonce": nonce, "grade_id": test.get("grade_id", "")}
        if self.taint:
            record.update(
                ok=False, ename="AutogradeIntegrityError", evalue=f"not run: earlier, the notebook {self.taint}"
            )
            self.channel.emit("test", **record)
            return
        before = self.state.changes()
        self.state.restore(before)
        record["restored"] = [c.what for c in before]
        name = f"{TEST_FILE}{test.get('grade_id', nonce)}>"
        try:
            tree, value_expr, visible = split_test(test["source"], self.hidden)
            code = compile(tree, name, "exec", dont_inherit=True)
            expression = compile(value_expr, name, "eval", dont_inherit=True) if value_expr is not None else None
        except (SyntaxError, ValueError) as err:
            record.update(ok=False, ename="SyntaxError", evalue=f"the test itself does not compile: {err}")
            self.channel.emit("test", **record)
            return
        ns = self.namespace(visible, tree_names(tree, value_expr))
        self.current = violations = []
        interrupted = None
        value = None
        self.busy = False
        try:
            exec(code, ns)  # noqa: S102 - the grader's own test
            if expression is not None:
                value = eval(expression, ns)  # noqa: S307
            record["ok"] = True
        except BaseException as err:  # noqa: BLE001 - every way a test can fail fails it
            record["ok"] = False
            record["ename"], record["evalue"] = plain_error(err)
            if is_a(err, KeyboardInterrupt):
                interrupted = err
        finally:
            self.busy = True
            self.current = None
        after = self.state.changes()
        self.state.restore(after)
        problems = [what for what, fatal in violations if fatal] + [c.what for c in after]
        if problems:
            record.update(
                ok=False, ename="AutogradeIntegrityError", evalue=f"while the test ran, the notebook {problems[0]}"
            )
        record["violations"] = problems
        record["reported"] = [what for what, fatal in violations if not fatal]
        if record["ok"] and value is not None:
            record["value"] = plain_value(value)
        self.keep_hidden(ns, visible)
        self.channel.emit("test", **record)
        if interrupted is not None:
            raise interrupted

    def keep_hidden(self, ns, visible):
        """Names the hidden part of the test bound stay with the guard (later tests may use them); the
        notebook never sees them."""
        for key, value in ns.items():
            if key not in visible and key not in self.user_ns and key != MIRROR:
                self.hidden_names[key] = value


def seal_process():
    """The kernel cannot be traced or have its memory read by another process of the same user."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def check_origins(state, trust):
    """Modules of the watched packages must come from the environment, not from the notebook's folder."""
    wrong = []
    for name, (module, _, _) in state.modules.items():
        path = getattr(module, "__file__", None)
        if (
            type(path) is str
            and os.path.isabs(path)
            and not trust.trusted_file(path)
            and not trust.trusted_file(os.path.realpath(path))
        ):
            wrong.append(f"{name} from {path}")
    return wrong


def install(payload, shell, fd):
    """Set up the guard before any student code runs; returns the Guard (the audit hook holds it)."""
    import importlib
    import pkgutil

    channel = Channel(fd)
    for name in payload.get("modules", []):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a lesson without that package still runs
            pass
    helpers = payload.get("helpers", ["attention_course"])
    for pkg in helpers:
        try:
            base = importlib.import_module(pkg)
        except Exception:  # noqa: BLE001
            continue
        names = getattr(base, "KERNEL_MODULES", None) or [info.name for info in pkgutil.iter_modules(base.__path__)]
        for name in names:
            try:
                importlib.import_module(f"{pkg}.{name}")
            except Exception:  # noqa: BLE001 - one module that fails to load leaves the others watched
                pass
    checks = sys.modules.get("attention_course.checks")
    torch = sys.modules.get("torch")
    if checks is not None and torch is not None and hasattr(checks, "plain"):
        checks.plain(torch.zeros(1))  # binds the genuine tensor type into the sealed checks
    trust = Trust(trusted_roots(helpers))
    home = os.path.realpath(os.getcwd())
    sys.path[:] = [
        p
        for p in sys.path
        if p and os.path.realpath(p) != home and trust.trusted_file(os.path.realpath(p) + os.sep + "x")
    ]
    packages = payload.get("packages", ["numpy", "torch", "attention_course", "math"])
    state = State(shell, packages, helpers, trust, payload.get("attributes", []))
    guard = Guard(payload, shell, channel, state, trust)
    guard.import_values = guard.setup_values()
    channel.emit("hello", key=channel.key.hex(), modules=len(state.modules), tests=len(guard.tests))
    wrong = check_origins(state, trust)
    if wrong:
        guard._report(f"imports {'; '.join(wrong[:3])}, not the environment's", fatal=True)
    seal_process()
    sys.addaudithook(guard.hook)
    return guard
