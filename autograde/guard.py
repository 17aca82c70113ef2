"""Step 3b, tamper checks at run time: an integrity guard the grader injects into the kernel.

Before any student code, the grader runs SETUP in the kernel (an extra first cell the student never
sees or edits). It imports the protected packages, snapshots every protected module's namespace,
`sys.modules`, the notebook's bindings of the module aliases the tests use, the builtins and the
IPython shell's hooks, and installs a Python audit hook (which cannot be removed). Before every test
cell and at the end, the grader adds a check cell whose source is only a comment with a fresh nonce;
when IPython compiles it, the audit hook compares the state with the snapshot and reports.

Reports go to the grader through a pipe inherited by the kernel (not through the notebook's
outputs), one line each, authenticated with an HMAC key generated in the kernel before any student
code ran and held only in the hook's closure. The grader flags a submission when a check finds a
change, when the audit hook saw a protected class or function patched or the interpreter inspected
(gc, ctypes, trace hooks), or when a check that should have run did not report (the pipe closed,
the hook bypassed). The helper package's modules also return their original functions to anyone
who reads them, so rebinding `checks.expect_close` (by alias, importlib, `__dict__`, setattr or
sys.modules) is both defeated and flagged.
"""

import hashlib
import hmac
import json
import secrets

MARKER = "# autograde integrity check"

SETUP = r'''
def __autograde_guard(fd, aliases, builtin_names, packages, helpers):
    import builtins, gc, hashlib, hmac, importlib, json, os, sys, types
    for name in sorted(set(aliases.values()) | set(helpers)):
        try:
            importlib.import_module(name)
        except Exception:
            pass
    key = os.urandom(32)
    _write, _dumps, _hmac, _sha = os.write, json.dumps, hmac.new, hashlib.sha256
    _id, _type, _isinstance = id, type, isinstance
    _getattr, _sorted, _list, _dict, _set, _len, _repr, _str = getattr, sorted, list, dict, set, len, repr, str
    _module_type, _function_type = types.ModuleType, types.FunctionType
    _modules_dict, _getframe = sys.modules, sys._getframe
    _ns_get = dict.get
    _dict_items = dict.items
    seq = [0]

    def emit(kind, **data):
        seq[0] += 1
        data["seq"], data["kind"] = seq[0], kind
        body = _dumps(data, default=_str, sort_keys=True)
        line = _hmac(key, body.encode(), _sha).hexdigest() + " " + body + "\n"
        try:
            _write(fd, line.encode())
        except OSError:
            pass

    def protected(name):
        return _isinstance(name, _str) and name.split(".")[0] in packages

    ip = get_ipython()  # noqa: F821  (the kernel's shell)
    user_ns = ip.user_ns
    for pkg in helpers:                       # every module of the helper package, before any student code
        try:
            import pkgutil
            base = importlib.import_module(pkg)
            for info in pkgutil.iter_modules(base.__path__):
                importlib.import_module(f"{pkg}.{info.name}")
        except Exception:
            pass
    focus = _set(aliases.values()) | {"builtins", "math", "numpy", "numpy.linalg", "torch", "torch.nn",
                                      "torch.nn.functional", "torch.linalg"}
    modules = {n: m for n, m in _list(_modules_dict.items()) if _isinstance(m, _module_type)
               and (n in focus or n.split(".")[0] in helpers)}
    volatile = {"exit", "quit", "get_ipython", "input", "raw_input", "display", "_", "__", "___", "__IPYTHON__",
                "_ih", "_oh", "_dh", "In", "Out", "help", "breakpoint"}

    def watched_names(n, m):
        private = n.split(".")[0] in helpers
        return {k: _id(v) for k, v in _list(_dict_items(m.__dict__))
                if (private or not k.startswith("_")) and k not in volatile and not _isinstance(v, _module_type)}

    snapshot = {n: watched_names(n, m) for n, m in modules.items()}
    values = {n: {k: m.__dict__[k] for k in snapshot[n]} for n, m in modules.items()}
    homes = {}
    for n in modules:
        top = _modules_dict.get(n.split(".")[0])
        homes[n] = os.path.dirname(_getattr(top, "__file__", None) or "/nonexistent/x")

    def library_wrapper(n, old, new):
        """The package wrapped its own function (torch._dynamo wraps torch.manual_seed when imported)."""
        if _getattr(new, "__wrapped__", None) is not old:
            return False
        code = _getattr(new, "__code__", None)
        return code is not None and code.co_filename.startswith(homes[n] + os.sep)
    classes = {}  # classes the tests can reach, with their bases (type.__setattr__ is not audited)
    for n, m in modules.items():
        for v in _list(m.__dict__.values()):
            if _isinstance(v, _type) and protected(_getattr(v, "__module__", None)):
                for c in v.__mro__:
                    if protected(_getattr(c, "__module__", None)) and _id(c) not in classes:
                        classes[_id(c)] = (c, {k: _id(x) for k, x in _list(_dict_items(_dict(c.__dict__)))})
    module_ids = {n: _id(m) for n, m in modules.items()}
    alias_ids = {a: _id(_modules_dict.get(m)) for a, m in aliases.items() if _modules_dict.get(m) is not None}
    builtins_module = builtins
    shell_lists = {}
    for attr in ("input_transformers_cleanup", "input_transformers_post", "ast_transformers"):
        shell_lists[attr] = [_id(x) for x in _getattr(ip, attr, [])]
    manager = _getattr(ip, "input_transformer_manager", None)
    for attr in ("cleanup_transforms", "line_transforms", "token_transformers"):
        shell_lists["manager." + attr] = [_id(x) for x in _getattr(manager, attr, [])]
    events = {e: [_id(c) for c in cbs] for e, cbs in ip.events.callbacks.items()}
    shell_attrs = _set(ip.__dict__)
    trusted = ("IPython", "ipykernel", "matplotlib", "matplotlib_inline", "ipywidgets", "comm", "traitlets",
               "jupyter_client", "attention_course", "tornado", "zmq", "asyncio")
    originals = {n: _dict(m.__dict__) for n, m in modules.items() if n.split(".")[0] in helpers}

    class GuardedModule(_module_type):
        """Reading an attribute of a helper module gives its original value (and a rebinding is reported)."""
        def __getattribute__(self, name):
            value = _module_type.__getattribute__(self, name)
            orig = _ns_get(originals.get(_module_type.__getattribute__(self, "__name__"), {}), name, value)
            if orig is not value:
                emit("violation", what=f"reads a rebound {_module_type.__getattribute__(self, '__name__')}.{name}")
                return orig
            return value

    for n, m in modules.items():
        if n in originals:
            try:
                m.__class__ = GuardedModule
            except TypeError:
                pass

    def diff():
        problems = []
        for n, m in _list(modules.items()):
            now = m.__dict__
            before = snapshot[n]
            changed = _sorted(k for k, i in _list(_dict_items(before)) if k not in now or _id(now[k]) != i)
            changed = [k for k in changed if k not in now or not library_wrapper(n, values[n][k], now[k])]
            if changed:
                problems.append(f"{n}: rebinds {', '.join(changed[:5])}" + (" ..." if _len(changed) > 5 else ""))
            if _id(_modules_dict.get(n)) != module_ids[n] and n in _modules_dict:
                problems.append(f"sys.modules[{n!r}] replaced")
            if n in originals and _type(m) is not GuardedModule:
                problems.append(f"{n}: the integrity wrapper was removed")
        for c, before in _list(classes.values()):
            now = _dict(c.__dict__)
            changed = _sorted(k for k, i in _list(_dict_items(before)) if k not in now or _id(now[k]) != i)
            changed += _sorted(k for k in now if k not in before and not k.startswith("_abc"))
            if changed:
                problems.append(f"class {c.__module__}.{c.__qualname__}: patches {', '.join(changed[:5])}")
        for a, mid in alias_ids.items():
            if a in user_ns and _id(user_ns[a]) != mid:
                problems.append(f"the notebook's {a!r} is not the module {aliases[a]}")
        for b in builtin_names:
            if b in user_ns and user_ns[b] is not _getattr(builtins_module, b, None):
                problems.append(f"the notebook rebinds the builtin {b!r}")
        if user_ns.get("__builtins__") is not builtins_module:
            problems.append("the notebook's __builtins__ was replaced")
        if sys.gettrace() is not None or sys.getprofile() is not None:
            problems.append("a trace or profile function is set")
        for attr, ids in shell_lists.items():
            obj = manager if attr.startswith("manager.") else ip
            now = [_id(x) for x in _getattr(obj, attr.split(".")[-1], [])]
            if now != ids:
                problems.append(f"IPython's {attr} changed")
        for e, cbs in ip.events.callbacks.items():
            for cb in cbs:
                if _id(cb) not in events.get(e, ()):
                    mod = _getattr(cb, "__module__", None) or ""
                    if not mod.split(".")[0] in trusted:
                        problems.append(f"an IPython {e} callback was registered ({mod or _type(cb).__name__})")
        for attr in _set(ip.__dict__) - shell_attrs:
            if callable(ip.__dict__[attr]):
                problems.append(f"IPython shell method {attr} was replaced")
        return problems

    busy = [False]
    watched = {"object.__setattr__", "object.__delattr__"}
    inspecting = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile",
                  "ctypes.dlopen", "ctypes.dlsym", "ctypes.addressof", "ctypes.cdata", "ctypes.cdata/buffer",
                  "ctypes.string_at", "ctypes.wstring_at", "ctypes.set_errno", "sys._current_frames",
                  "cpython.PyInterpreterState_Clear", "sys.addaudithook", "subprocess.Popen", "os.system",
                  "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn", "pty.spawn", "os.kill",
                  "os.killpg", "socket.connect"}
    plumbing = ("subprocess", "os", "pty", "shutil", "multiprocessing", "concurrent", "asyncio", "threading",
                "ctypes", "gc", "socket", "selectors", "signal", "platform", "dataclasses", "typing", "functools",
                "abc", "enum", "importlib", "contextlib", "inspect", "copy", "types", "weakref", "collections")
    starts = {"subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn",
              "pty.spawn"}
    marker = "# autograde integrity check "

    def student_frames():
        """True when the first caller outside the standard plumbing is the notebook's own code."""
        f = _getframe(2)
        depth = 0
        while f is not None and depth < 30:
            name = f.f_globals.get("__name__", "") or ""
            if name.split(".")[0] not in plumbing:
                return name == "__main__"
            f = f.f_back
            depth += 1
        return False

    def hook(event, args):
        if busy[0]:
            return
        if event == "compile":
            src = args[0] if args else None
            if _isinstance(src, bytes):
                try:
                    src = src.decode()
                except Exception:
                    return
            if _isinstance(src, _str) and src.startswith(marker):
                busy[0] = True
                try:
                    nonce = src[len(marker):].split()[0]
                    emit("check", nonce=nonce, problems=diff())
                finally:
                    busy[0] = False
            return
        if event in watched:
            target = args[0]
            mod = _getattr(target, "__module__", None) if _isinstance(target, (_type, _function_type)) else None
            if protected(mod) and student_frames():
                busy[0] = True
                try:
                    emit("violation", what=f"sets {_getattr(target, '__qualname__', '?')}.{args[1]} ({mod})")
                finally:
                    busy[0] = False
            return
        if event in inspecting:
            busy[0] = True
            try:
                if student_frames():
                    detail = ""
                    if event in ("subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn"):
                        detail = ": " + _str(args[1] if event != "os.system" and _len(args) > 1 else args[0])[:60]
                    what = ("started a process" if event in starts else event) + detail
                    emit("violation", what=what)
            finally:
                busy[0] = False

    emit("hello", key=key.hex(), modules=_len(modules))
    sys.addaudithook(hook)

__autograde_guard(int({fd}), {aliases!r}, {builtin_names!r}, {packages!r}, {helpers!r})
del __autograde_guard
'''


def setup_source(
    fd,
    aliases,
    builtin_names,
    packages=("numpy", "torch", "attention_course", "math", "builtins"),
    helpers=("attention_course",),
):
    """The guard's setup cell for the kernel."""
    fd = fd if isinstance(fd, str) else str(int(fd))
    return (
        SETUP.replace("{fd}", fd)
        .replace("{aliases!r}", repr(dict(aliases)))
        .replace("{builtin_names!r}", repr(sorted(builtin_names)))
        .replace("{packages!r}", repr(tuple(packages)))
        .replace("{helpers!r}", repr(tuple(helpers)))
    )


def check_source():
    """A check cell: only a comment, so that nothing in it can be rebound. Returns (source, nonce)."""
    nonce = secrets.token_hex(8)
    return f"{MARKER} {nonce}\n", nonce


def analyse(lines, nonces):
    """Flags from the guard's report lines, given the nonces of the check cells that ran."""
    flags, key, seen = [], None, set()
    if not lines:
        return ["the integrity guard did not report (its channel was closed or the kernel did not start it)"]
    for n, line in enumerate(lines):
        mac, _, body = line.partition(" ")
        try:
            data = json.loads(body)
        except ValueError:
            flags.append("a forged or damaged integrity record")
            continue
        if n == 0:
            if data.get("kind") != "hello":
                flags.append("the integrity guard's first record is missing")
                continue
            key = bytes.fromhex(data.get("key", ""))
        if key is None or not hmac.compare_digest(mac, hmac.new(key, body.encode(), hashlib.sha256).hexdigest()):
            flags.append("a forged integrity record")
            continue
        if data.get("kind") == "check":
            seen.add(data.get("nonce"))
            flags += [f"at run time: {p}" for p in data.get("problems", [])]
        elif data.get("kind") == "violation":
            flags.append(f"at run time: {data.get('what')}")
    missing = [n for n in nonces if n not in seen]
    if missing:
        flags.append(
            f"{len(missing)} of {len(nonces)} integrity checks did not run (the guard was bypassed or the kernel died)"
        )
    return sorted(set(flags), key=flags.index)
