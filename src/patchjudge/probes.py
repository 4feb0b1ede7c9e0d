"""Pure: changed lines that probe the judge instead of computing (issue 18).

A patch that is exact only while it is watched has to find out that it is
watched: from the call stack, the loaded modules, a trace hook, coverage,
its own code objects, /proc, the host, the environment the runner sets, or a
clock or call count it branches on. None of that is needed to compute a
result, so a changed line that does it makes the verdict undecided. Static
and conservative: names are resolved through import aliases, `getattr`
with a literal and `__import__`; what a patch hides behind computed names
is not seen (docs/threat-model.md "Cheating the oracle").
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections import deque
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from patchjudge import parsed

# --- what counts, by class ----------------------------------------------------

_STACK = "reads the call stack"
_MODULES = "looks up loaded modules"
_MAIN = "reads the __main__ module"
_TOOL = "imports a test tool"
_HOOK = "installs or reads a trace, profile or audit hook"
_COVERAGE = "uses the coverage API"
_SOURCE = "reads its own source or code objects"
_PROC = "reads /proc"
_HOST = "reads the host's name"
_ENV = "reads the runner's environment"
_HEAP = "walks the interpreter's objects"
_GATED = "branches on"
_BOX = "reads what the sandbox changes"
_LOADS = "runs code the review does not read"
_WARNINGS = "reads the warning machinery a test runner sets"
_INTERPRETER = "reads what the judge's interpreter sets"
_INSTALLED = "asks whether it is installed (the judge imports the tree)"

# Qualified names (after aliases) -> class. A name matches itself and anything under it.
_CALLS: dict[str, str] = {
    **dict.fromkeys(
        [
            "sys._getframe",
            "sys._getframemodulename",
            "sys._current_frames",
            "sys._current_exceptions",
            "inspect.currentframe",
            "inspect.stack",
            "inspect.trace",
            "inspect.getouterframes",
            "inspect.getinnerframes",
            "inspect.getframeinfo",
            "traceback.extract_stack",
            "traceback.walk_stack",
            "traceback.print_stack",
            "traceback.format_stack",
            "traceback.StackSummary",
            # logging's own frame walk: `currentframe()` is `sys._getframe`, and a
            # logger's `findCaller` names the caller's file, line and function (the
            # worker's is a random `_<hex>.py`, a visible test's `test_*.py`; redteam13)
            "logging.currentframe",
        ],
        _STACK,
    ),
    "sys.modules": _MODULES,
    "__main__": _MAIN,
    **dict.fromkeys(
        [
            "sys.settrace",
            "sys.setprofile",
            "sys.gettrace",
            "sys.getprofile",
            "sys.monitoring",
            "sys.call_tracing",
            "sys.addaudithook",
            "sys.audit",
            "threading.settrace",
            "threading.setprofile",
            "threading.gettrace",
            "threading.getprofile",
            "threading.settrace_all_threads",
            "threading.setprofile_all_threads",
            "_thread._local",
        ],
        _HOOK,
    ),
    "coverage": _COVERAGE,
    **dict.fromkeys(
        [
            "inspect.getsource",
            "inspect.getsourcelines",
            "inspect.getsourcefile",
            "inspect.getfile",
            "inspect.findsource",
            "inspect.getcomments",
            "linecache",
            "dis",
            "marshal",
        ],
        _SOURCE,
    ),
    **dict.fromkeys(
        ["socket.gethostname", "socket.getfqdn", "platform.node", "platform.uname", "os.uname"],
        _HOST,
    ),
    # ... and how many references the caller holds to an argument: the worker keeps more
    # of its own than a user's call does (4 against 2 or 3; redteam13).
    **dict.fromkeys(
        [
            "gc.get_objects",
            "gc.get_referrers",
            "gc.get_referents",
            "sys.getrefcount",
            "sys.getallocatedblocks",
        ],
        _HEAP,
    ),
    # What the box makes differ from a user's own run in both of the judge's harnesses,
    # so the differential run cannot tell (red team, session 11): the supplementary
    # groups (a user namespace maps none), a login terminal, the worker's limits, and
    # the process tree (psutil), the network (none in the box: a line a property ran
    # that reaches it cannot have reached anything).
    **dict.fromkeys(
        [
            "socket.socket",
            "socket.create_connection",
            "socket.getaddrinfo",
            "socket.gethostbyname",
            "socket.gethostbyname_ex",
            "socket.gethostbyaddr",
            "socket.if_nameindex",
            "urllib.request.urlopen",
            "http.client",
            "os.getgroups",
            "os.getgrouplist",
            "os.getlogin",
            "os.ctermid",
            "os.ttyname",
            "resource.getrlimit",
            "resource.prlimit",
            "psutil",
        ],
        _BOX,
    ),
    # The warning filters and hooks in force: pytest and the judge's worker both put an
    # "always" filter first and their own hook in `_showwarnmsg_impl` (so every warning
    # reaches the runner), a user's interpreter neither (redteam9). Setting a filter
    # (`simplefilter`, `filterwarnings`) is not a read; recording with `catch_warnings`
    # is (`_calls`).
    **dict.fromkeys(
        [
            "warnings.filters",
            "warnings._showwarnmsg_impl",
            "warnings._showwarnmsg",
            # replaced, it hears the file a `stacklevel` names: the caller's (redteam13)
            "warnings.showwarning",
            "warnings._showwarning_orig",
            "warnings._filters_mutated",
            "warnings.defaultaction",
            "warnings.onceregistry",
            "_warnings",
        ],
        _WARNINGS,
    ),
    # What the judge sets in its interpreters, in both of the worker's harnesses and the
    # visible suite (-B, hash-checked bytecode, -s, -P), and a user's interpreter does not:
    # `sum(xs) + (not sys.dont_write_bytecode)` was right wherever it was judged
    # (redteam10). `sys.flags.optimize`, `utf8_mode`, `dev_mode` are a user's choice too.
    **dict.fromkeys(
        [
            "sys.dont_write_bytecode",
            "sys.flags.dont_write_bytecode",
            "sys.flags.no_user_site",
            "sys.flags.safe_path",
            "sys.flags.isolated",
            "sys.flags.ignore_environment",
            "_imp.check_hash_based_pycs",
        ],
        _INTERPRETER,
    ),
    # Whether the project is installed, or where: every harness of the judge imports the
    # tree (never a site-packages copy) and no distribution of the project is there, a
    # user's interpreter imports the installed one (redteam13:
    # `"calc" in {d.metadata["Name"] for d in distributions()}` was false wherever it
    # was judged). `version("calc")` is a package's own version, not a probe: its
    # `PackageNotFoundError` arm never runs where it is installed, so the review holds it.
    **dict.fromkeys(
        [
            "importlib.metadata.distributions",
            "importlib.metadata.packages_distributions",
            "importlib_metadata.distributions",
            "importlib_metadata.packages_distributions",
            "pkg_resources.working_set",
            "site.getsitepackages",
            "site.getusersitepackages",
            "sysconfig.get_paths",
            "sysconfig.get_path",
        ],
        _INSTALLED,
    ),
    # Code from text, bytes or a path, or from a directory put on the import path: the
    # review reads the changed .py files the run imports, never what these load
    # (red team, session 10).
    **dict.fromkeys(
        [
            "exec",
            "eval",
            "compile",
            "builtins.exec",
            "builtins.eval",
            "builtins.compile",
            "runpy",
            "zipimport",
            "importlib.machinery",
            "importlib.abc",
            "importlib.util.spec_from_file_location",
            "importlib.util.spec_from_loader",
            "importlib.util.module_from_spec",
            "sys.path",
            "sys.meta_path",
            "sys.path_hooks",
            "sys.path_importer_cache",
            "site.addsitedir",
            "types.CodeType",
            "types.FunctionType",
            # native code from any path, and another interpreter run on a script
            "ctypes",
            "_ctypes",
            "sys.executable",
        ],
        _LOADS,
    ),
}
_TOOLS = frozenset(
    {"pytest", "_pytest", "hypothesis", "_hypothesis_pytestplugin", "patchjudge", "pluggy", "xdist"}
)
_FRAME_ATTRS = frozenset(
    {
        "f_back",
        "f_locals",
        "f_globals",
        "f_builtins",
        "f_code",
        "f_trace",
        "f_lineno",
        "f_lasti",
        "tb_frame",
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "gi_code",
        "cr_code",
        "ag_code",
    }
)
_CODE_ATTRS = frozenset({"__code__", "__loader__", "get_source", "get_code"})
# A logger's own walk up the stack, on any logger (redteam13).
_STACK_METHODS = frozenset({"findCaller"})
# Where an installed copy lives; the judge's tree is never there (redteam13).
_SITE_DIRS = ("site-packages", "dist-packages")
# Calls that make a path of their arguments: `os.path.join("/", "proc", "self")` is the
# literal "/proc/self" spelled in parts (redteam13).
_PATH_JOINS = frozenset(
    {"os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PurePath",
     "pathlib.PosixPath", "pathlib.PurePosixPath", "Path", "PurePath", "PosixPath"}
)  # fmt: skip
# Environment variables a runner, a CI system or the judge sets: a family by prefix...
_ENV_FAMILY = re.compile(
    r"(PYTEST|HYPOTHESIS|PATCHJUDGE|GITHUB_|GITLAB_|CI_|RUNNER_|ACTIONS_|BUILDKITE|TRAVIS|"
    r"CIRCLE|JENKINS|TEAMCITY|APPVEYOR|DRONE|TF_BUILD|BITBUCKET_|COV_CORE|COVERAGE_|TOX_|NOX_)"
)
# ... and a few short names that are only a probe as an environment key: a runner's,
# and a login session's, which the box never passes (a shell, a desktop, ssh, an
# activated venv, the hash seed it sets; red team, session 11).
_ENV_NAMES = frozenset(
    {"CI", "USER", "USERNAME", "LOGNAME", "HOSTNAME", "COMPUTERNAME", "BUILD_ID", "BUILD_NUMBER",
     "SHELL", "SHLVL", "OLDPWD", "MAIL", "DISPLAY", "WAYLAND_DISPLAY", "TERM_PROGRAM",
     "COLORTERM", "LS_COLORS", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHASHSEED",
     "XDG_RUNTIME_DIR", "XDG_SESSION_ID", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS",
     "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY", "SSH_AUTH_SOCK",
     # What a shell exports to every command it runs (`_`: the command's path) or an
     # interactive session's: the box's environment has none (redteam10, `"_" in os.environ`).
     "_", "HISTFILE", "HISTSIZE", "TMUX", "STY", "WINDOWID", "MOTD_SHOWN", "SUDO_USER",
     "SUDO_UID", "SUDO_COMMAND"}
)  # fmt: skip
# A string that is a test tool's name or module path ("pytest", "_pytest.main"), not
# one that mentions it in passing (a message, a temporary directory's path).
_TOOL_NAME = re.compile(
    r"_?(pytest|py\.test|hypothesis|patchjudge|xdist|pluggy|coverage)([._-]\w*)*", re.IGNORECASE
)
_ENVIRON = ("os.environ", "os.environb", "posix.environ")
# Calls that count or list the environment's names (`dict(os.environ)`, a copy for a
# subprocess, is not one).
_ENV_SCANS = frozenset(
    f"{b}{f}"
    for b in ("", "builtins.")
    for f in ("len", "sorted", "list", "set", "tuple", "frozenset")
)
# The box is pid 2 in a namespace of its own, its parent 1, its session 1: the process
# id is a tell as any value (`xs[os.getpid() - 2:]`), not only in a condition; only
# naming something by it (an f-string, `str()`, a signal to itself) is not.
_PIDS = frozenset(["os.getpid", "os.getppid", "os.getpgid", "os.getpgrp", "os.getsid"])
_PID_NAMES = frozenset(["str", "repr", "builtins.str", "builtins.repr", "os.kill", "os.killpg"])
# Calls that look a path up or read it: with an absolute literal path they look at the
# machine (the box's root holds only the system, the interpreter and its own tree:
# no /var, /home, /run, /etc beyond a short list).
_PATH_QUERIES = frozenset(
    [
        *(
            f"os.path.{f}"
            for f in ("exists", "lexists", "isdir", "isfile", "islink", "ismount", "getsize",
                      "getmtime", "getatime", "getctime", "samefile")
        ),
        *(f"os.{f}" for f in ("listdir", "scandir", "stat", "lstat", "access", "statvfs",
                              "readlink", "walk")),
        "glob.glob", "glob.iglob", "shutil.disk_usage",
        "open", "io.open", "builtins.open", "codecs.open",
    ]
)  # fmt: skip
_PATH_METHODS = frozenset(
    {"exists", "is_dir", "is_file", "is_symlink", "is_mount", "iterdir", "stat", "lstat",
     "glob", "rglob", "read_text", "read_bytes", "open", "owner", "group"}
)  # fmt: skip
# Devices every box and every machine has alike.
_SAME_EVERYWHERE = frozenset(
    {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/stdin", "/dev/stdout",
     "/dev/stderr"}
)  # fmt: skip
_ENV_READS = ("get", "pop", "setdefault", "__getitem__", "__contains__")
_GETENV = (*(f"{e}.{m}" for e in _ENVIRON for m in _ENV_READS), "os.getenv", "os.getenvb")
_GATES = {
    **dict.fromkeys(
        ["os.getpid", "os.getppid", "os.getpgid", "os.getpgrp", "os.getsid", "threading.get_ident"],
        "the process id",
    ),
    **dict.fromkeys(
        [
            "time.time",
            "time.time_ns",
            "time.monotonic",
            "time.monotonic_ns",
            "time.perf_counter",
            "time.perf_counter_ns",
            "time.process_time",
            "time.process_time_ns",
            "time.thread_time",
            "time.thread_time_ns",
            "time.clock_gettime",
            "time.clock_gettime_ns",
            "datetime.datetime.now",
            "datetime.datetime.utcnow",
            "datetime.datetime.today",
            "datetime.date.today",
        ],
        "a clock",
    ),
}


@dataclass(frozen=True)
class Hit:
    lines: frozenset[int]  # the lines the finding rests on; changed if any of them is
    what: str
    # A string that only names a probe's target: dropped where a use of it is reported.
    weak: bool = False

    @property
    def line(self) -> int:
        return min(self.lines)


# --- walking ------------------------------------------------------------------

# Each node's children while one `scan` runs (issue 20): the scan walks the
# tree a dozen times over (aliases, parents, each scope, each condition), and
# ast.iter_child_nodes was most of its time on a 5,000-line module. Keyed by
# id(): the tree is alive for the whole scan and the table is dropped after it.
_kids: dict[int, list[ast.AST]] | None = None


def _children(node: ast.AST) -> list[ast.AST]:
    if _kids is None:
        return list(ast.iter_child_nodes(node))
    found = _kids.get(id(node))
    if found is None:
        found = _kids[id(node)] = list(ast.iter_child_nodes(node))
    return found


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, in its order (breadth first), from the scan's table of children."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(_children(node))
        yield node


# --- resolving names ----------------------------------------------------------


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> what it is bound to by an import (anywhere in the file)."""
    found: dict[str, str] = {}
    for node in _walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    found[a.asname] = a.name
                else:
                    top = a.name.partition(".")[0]
                    found[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                if a.name != "*":
                    found[a.asname or a.name] = f"{node.module}.{a.name}"
    return found


def _literal(node: ast.AST) -> str | None:
    """A string the expression always is: a constant, a sum or an f-string of constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        value = node.value
        return value if isinstance(value, str) else value.decode("latin-1")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = [_literal(v) for v in node.values]
        return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
    return None


def _path_literal(node: ast.AST, names: _Names) -> str | None:
    """The path an expression always is: a string literal, or literal parts joined by
    `os.path.join`, `Path(...)`, `/` or `"/".join([...])`."""
    text = _literal(node)
    if text is not None:
        return text
    parts: list[ast.AST]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        parts = [node.left, node.right]
    elif isinstance(node, ast.Call) and not node.keywords and node.args:
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "join"
            and (sep := _literal(func.value)) is not None
            and len(node.args) == 1
            and isinstance(node.args[0], ast.List | ast.Tuple)
        ):
            items = [_literal(e) for e in node.args[0].elts]
            return None if any(i is None for i in items) else sep.join(i or "" for i in items)
        if names.qualified(func) not in _PATH_JOINS:
            return None
        parts = list(node.args)
    else:
        return None
    texts = [_path_literal(part, names) for part in parts]
    if not texts or any(t is None for t in texts):
        return None
    return posixpath.join(*(t or "" for t in texts))


class _Names:
    def __init__(self, tree: ast.AST) -> None:
        self.aliases = _aliases(tree)

    def qualified(self, node: ast.AST, depth: int = 0) -> str | None:
        """`s._getframe` with `import sys as s` -> "sys._getframe"; None if not a name path."""
        if depth > 50:
            return None
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value, depth + 1)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Call):
            func = self.qualified(node.func, depth + 1)
            args = node.args
            if func in ("getattr", "builtins.getattr") and len(args) >= 2:
                base, attr = self.qualified(args[0], depth + 1), _literal(args[1])
                return None if base is None or attr is None else f"{base}.{attr}"
            if func in ("__import__", "importlib.import_module", "builtins.__import__") and args:
                return _literal(args[0])
            if func in ("vars", "builtins.vars") and len(args) == 1:
                return self.qualified(args[0], depth + 1)
        if isinstance(node, ast.Subscript):
            # vars(sys)["_getframe"], sys.__dict__["_getframe"]
            attr = _literal(node.slice)
            owner: ast.AST = node.value
            if isinstance(owner, ast.Attribute) and owner.attr == "__dict__":
                owner = owner.value
            elif not (isinstance(owner, ast.Call) and self.qualified(owner.func) == "vars"):
                return None
            base = self.qualified(owner, depth + 1)
            return None if base is None or attr is None else f"{base}.{attr}"
        return None


def _under(name: str, table: Container[str]) -> str | None:
    """The entry of `table` that is `name` or a dotted prefix of it.

    Looked up prefix by prefix (a dict's hashing), not the table walked: a scan asks
    this of every name and attribute path in the file (issue 20). No entry of `_CALLS`
    is a dotted prefix of another, so at most one matches."""
    if name in table:
        return name
    end = name.rfind(".")
    while end > 0:
        prefix = name[:end]
        if prefix in table:
            return prefix
        end = name.rfind(".", 0, end)
    return None


def _lines(node: ast.AST) -> frozenset[int]:
    first = getattr(node, "lineno", 1)
    return frozenset(range(first, (getattr(node, "end_lineno", None) or first) + 1))


# --- the scan -----------------------------------------------------------------


def _env_key(key: str) -> bool:
    return key in _ENV_NAMES or bool(_ENV_FAMILY.match(key))


def _docstrings(parts: Sequence[ast.AST]) -> set[int]:
    found = set()
    for node in _walk_all(parts):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            found.add(id(node.value))
    return found


def _conditions(tree: ast.AST) -> Iterator[ast.expr]:
    """Every expression whose value decides which way the code goes."""
    for node in _walk(tree):
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            yield node.test
        elif isinstance(node, ast.comprehension):
            yield from node.ifs
        elif isinstance(node, ast.match_case) and node.guard is not None:
            yield node.guard
        elif isinstance(node, ast.BoolOp):
            yield from node.values[:-1]


def _touching(tree: ast.Module, lines: frozenset[int]) -> list[ast.stmt]:
    """The top-level statements whose lines (decorators too) meet `lines`."""
    return [
        stmt
        for stmt in tree.body
        if not lines.isdisjoint(
            range(
                min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))]),
                (stmt.end_lineno or stmt.lineno) + 1,
            )
        )
    ]


def _walk_all(parts: Sequence[ast.AST]) -> Iterator[ast.AST]:
    for part in parts:
        yield from _walk(part)


def _scan(tree: ast.Module, names: _Names, parts: Sequence[ast.stmt]) -> Iterator[Hit]:
    """The probes in `parts`, and the module scope's gates wherever their lines are."""
    docstrings = _docstrings(parts)
    parents = {id(child): node for node in _walk_all(parts) for child in _children(node)}
    for node in _walk_all(parts):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield from _imports(node)
        elif isinstance(node, ast.Attribute | ast.Name | ast.Call | ast.Subscript):
            yield from _names(node, names, parents)
        if isinstance(node, ast.Attribute) and node.attr in _FRAME_ATTRS | _STACK_METHODS:
            yield Hit(_lines(node), f"{_STACK} (.{node.attr})")
        elif isinstance(node, ast.Attribute) and (
            node.attr in _CODE_ATTRS or node.attr.startswith("co_")
        ):
            yield Hit(_lines(node), f"{_SOURCE} (.{node.attr})")
        elif isinstance(node, ast.Name) and node.id == "__loader__":
            yield Hit(_lines(node), f"{_SOURCE} (__loader__)")
        elif isinstance(node, ast.Call):
            yield from _calls(node, names)
            yield from _process_id(node, names, parents)
            yield from _joined_proc(node, names, parents)
        elif isinstance(node, ast.Compare):
            yield from _compare(node, names)
        elif isinstance(node, ast.Constant | ast.BinOp | ast.JoinedStr) and id(node) not in (
            docstrings
        ):
            yield from _strings(node)
            if isinstance(node, ast.BinOp):
                yield from _joined_proc(node, names, parents)
        elif isinstance(node, ast.For | ast.comprehension) and (
            names.qualified(node.iter) in _ENVIRON
        ):
            yield Hit(_lines(node.iter), f"{_ENV} (scans os.environ)")
    yield from _gated(tree, names, parts)
    yield from _counters(parts)
    yield from _record_locations(parts, names)
    yield from _scratch_listings(tree, names, parts)


def _imports(node: ast.Import | ast.ImportFrom) -> Iterator[Hit]:
    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    if isinstance(node, ast.ImportFrom) and node.level:
        return
    if isinstance(node, ast.ImportFrom):
        for a in node.names:
            full = f"{node.module}.{a.name}"
            if a.name != "*" and (prefix := _under(full, _CALLS)) is not None:
                yield Hit(_lines(node), f"{_CALLS[prefix]} (from {node.module} import {a.name})")
    for module in modules:
        top = module.partition(".")[0]
        if isinstance(node, ast.Import) and (prefix := _under(module, _CALLS)) is not None:
            yield Hit(_lines(node), f"{_CALLS[prefix]} (import {module})")
        elif top in _TOOLS:
            yield Hit(_lines(node), f"{_TOOL} ({module})")
        elif top == "coverage":
            yield Hit(_lines(node), f"{_COVERAGE} (import {module})")
        elif top == "__main__":
            yield Hit(_lines(node), f"{_MAIN} (import __main__)")
        elif (
            isinstance(node, ast.ImportFrom)
            and any(a.name == "*" for a in node.names)
            and any(p == module or p.startswith(module + ".") for p in _CALLS)
        ):
            yield Hit(_lines(node), f"{_CALLS.get(module, _STACK)} (from {module} import *)")


def _names(node: ast.AST, names: _Names, parents: dict[int, ast.AST]) -> Iterator[Hit]:
    """A probe by name, reported once: at the node that names the table's entry itself."""
    name = names.qualified(node)
    prefix = None if name is None else _under(name, _CALLS)
    if name is None or prefix is None or name != prefix:
        return
    if prefix == "sys.modules":
        yield from _modules(node, names, parents)
        return
    yield Hit(_lines(node), f"{_CALLS[prefix]} ({name})")


def _modules(node: ast.AST, names: _Names, parents: dict[int, ast.AST]) -> Iterator[Hit]:
    """Any use of sys.modules but a module's lookup of itself (`sys.modules[__name__]`)."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Subscript) and parent.value is node:
        key = _literal(parent.slice)
        if not _own_name(parent.slice):
            what = _MAIN if key == "__main__" else _MODULES
            yield Hit(_lines(parent), f"{what} (sys.modules[{_shown(key)}])")
        return
    call = parents.get(id(parent)) if isinstance(parent, ast.Attribute) else None
    if isinstance(parent, ast.Attribute) and isinstance(call, ast.Call) and call.func is parent:
        key = _literal(call.args[0]) if call.args else None
        if not (
            parent.attr in ("get", "pop", "__getitem__") and call.args and _own_name(call.args[0])
        ):
            what = _MAIN if key == "__main__" else _MODULES
            yield Hit(_lines(call), f"{what} (sys.modules.{parent.attr}({_shown(key)}))")
        return
    if isinstance(parent, ast.Compare) and any(c is node for c in parent.comparators):
        if not _own_name(parent.left):
            yield Hit(
                _lines(parent), f"{_MODULES} ({_shown(_literal(parent.left))} in sys.modules)"
            )
        return
    yield Hit(_lines(node), f"{_MODULES} (sys.modules)")


def _own_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "__name__"


def _calls(node: ast.Call, names: _Names) -> Iterator[Hit]:
    func = names.qualified(node.func) or ""
    args = node.args
    key = _literal(args[0]) if args else None
    if any(
        k.arg == "stack_info" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in node.keywords
    ):
        # logging formats the whole stack into the record the code's handler reads.
        yield Hit(_lines(node), f"{_STACK} (stack_info=True)")
    if func in _PATH_QUERIES and key is None and args:
        key = _path_literal(args[0], names)
    if func in _GETENV and key is not None and _env_key(key):
        yield Hit(_lines(node), f"{_ENV} ({key})")
    elif _scans_environ(func, args, names):
        yield Hit(_lines(node), f"{_ENV} (scans os.environ)")
    elif func in _PATH_QUERIES and key is not None and _machine_path(key):
        yield Hit(_lines(node), f"{_BOX} (a path of the machine: {key[:40]!r})")
    elif func == "warnings.catch_warnings" and any(
        k.arg == "record" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in node.keywords
    ):
        # What it records is what the filters in force let through: a runner's "always"
        # shows a DeprecationWarning a user's interpreter ignores (redteam9).
        yield Hit(_lines(node), f"{_WARNINGS} (catch_warnings(record=True))")
    elif func in ("importlib.util.find_spec", "pkgutil.find_loader") and key is not None:
        if key.partition(".")[0] in _TOOLS | {"coverage"}:
            yield Hit(_lines(node), f"{_TOOL} (find_spec({key!r}))")
    elif func in ("open", "io.open", "builtins.open", "codecs.open", "tokenize.open") and args:
        if _is_own_file(args[0], names):
            yield Hit(_lines(node), f"{_SOURCE} (open(__file__))")
    elif isinstance(node.func, ast.Attribute) and node.func.attr in (
        "read_text",
        "read_bytes",
        "open",
    ):
        target = node.func.value
        if (
            isinstance(target, ast.Call)
            and names.qualified(target.func) in ("pathlib.Path", "Path", "pathlib.PurePath")
            and target.args
            and _is_own_file(target.args[0], names)
        ):
            yield Hit(_lines(node), f"{_SOURCE} (Path(__file__).{node.func.attr}())")
    if isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_METHODS:
        target = node.func.value
        if (
            isinstance(target, ast.Call)
            and names.qualified(target.func) in ("pathlib.Path", "Path", "pathlib.PosixPath")
            and target.args
            and (path := _literal(target.args[0])) is not None
            and _machine_path(path)
        ):
            yield Hit(_lines(node), f"{_BOX} (a path of the machine: {path[:40]!r})")


def _scans_environ(func: str, args: Sequence[ast.expr], names: _Names) -> bool:
    if func.startswith(tuple(f"{e}." for e in _ENVIRON)):
        return func.rpartition(".")[2] in ("keys", "items", "values")
    return func in _ENV_SCANS and len(args) == 1 and names.qualified(args[0]) in _ENVIRON


def _machine_path(path: str) -> bool:
    """An absolute path whose presence or content differs between the box and the machine
    (/proc has its own class)."""
    return (
        path.startswith("/")
        and path.rstrip("/") not in _SAME_EVERYWHERE
        and not (path == "/proc" or path.startswith("/proc/"))
    )


def _process_id(node: ast.Call, names: _Names, parents: dict[int, ast.AST]) -> Iterator[Hit]:
    func = names.qualified(node.func)
    if func not in _PIDS:
        return
    parent = parents.get(id(node))
    if isinstance(parent, ast.FormattedValue):
        return
    if isinstance(parent, ast.Call) and names.qualified(parent.func) in _PID_NAMES:
        return
    yield Hit(_lines(node), f"{_BOX} (the process id as a value: {func})")


def _shown(key: str | None) -> str:
    return "..." if key is None else repr(key)


def _is_own_file(node: ast.AST, names: _Names) -> bool:
    return (isinstance(node, ast.Name) and node.id == "__file__") or names.qualified(node) in (
        "__spec__.origin",
        "__main__.__file__",
    )


def _compare(node: ast.Compare, names: _Names) -> Iterator[Hit]:
    for op, right in zip(node.ops, node.comparators, strict=True):
        if not isinstance(op, ast.In | ast.NotIn):
            continue
        target = names.qualified(right)
        key = _literal(node.left)
        if target in _ENVIRON and key is not None and _env_key(key):
            yield Hit(_lines(node), f"{_ENV} ({key})")


def _strings(node: ast.AST) -> Iterator[Hit]:
    text = _literal(node)
    if text is None:
        return
    if "/proc/" in text or text == "/proc":
        yield Hit(_lines(node), f"{_PROC} ({text[:40]!r})")
    elif any(d in text for d in _SITE_DIRS):
        yield Hit(_lines(node), f"{_INSTALLED} ({text[:40]!r})")
    elif _ENV_FAMILY.match(text):
        yield Hit(_lines(node), f"{_ENV} ({text[:40]!r})", weak=True)
    elif _TOOL_NAME.fullmatch(text):
        yield Hit(_lines(node), f"names a test tool ({text[:40]!r})", weak=True)


def _joined_proc(node: ast.AST, names: _Names, parents: dict[int, ast.AST]) -> Iterator[Hit]:
    """/proc spelled in parts (`os.path.join("/", "proc")`, `Path("/") / "proc"`), once: at
    the outermost join. A plain literal or sum is `_strings`'."""
    if _literal(node) is not None:
        return
    parent = parents.get(id(node))
    if (
        isinstance(parent, ast.BinOp)
        and isinstance(parent.op, ast.Div)
        and _path_literal(parent, names) is not None
    ):
        return
    text = _path_literal(node, names)
    if text is not None and (text == "/proc" or text.startswith("/proc/")):
        yield Hit(_lines(node), f"{_PROC} ({text[:40]!r})")


def _subscripts(parts: Sequence[ast.AST], names: _Names) -> Iterator[Hit]:
    for node in _walk_all(parts):
        if not isinstance(node, ast.Subscript):
            continue
        target = names.qualified(node.value)
        key = _literal(node.slice)
        if target in _ENVIRON and key is not None and _env_key(key):
            yield Hit(_lines(node), f"{_ENV} ({key})")


def _gated(tree: ast.Module, names: _Names, parts: Sequence[ast.AST]) -> Iterator[Hit]:
    """A clock or a process id in a condition, directly or through a variable of the same scope.

    The module's scope is the whole file (a gate's condition and its variable may lie in
    two statements); a function's lies inside its top-level statement, one of `parts`.
    """
    scopes: list[ast.AST] = [tree]
    scopes += (
        n
        for n in _walk_all(parts)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
    )
    for scope in scopes:
        tainted: dict[str, tuple[str, frozenset[int]]] = {}
        for node in _walk(scope):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and node.value:
                source = _gate_call(node.value, names)
                if source is None:
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        tainted[t.id] = source
        for test in _conditions(scope):
            for node in _walk(test):
                found = _gate_call(node, names) if isinstance(node, ast.Call) else None
                if found is None and isinstance(node, ast.Name) and node.id in tainted:
                    found = tainted[node.id]
                if found is not None:
                    what, lines = found
                    yield Hit(_lines(test) | lines, f"{_GATED} {what}")


def _gate_call(node: ast.AST, names: _Names) -> tuple[str, frozenset[int]] | None:
    for sub in _walk(node):
        if isinstance(sub, ast.Call):
            name = names.qualified(sub.func) or ""
            if name in _GATES:
                return f"{_GATES[name]} ({name})", _lines(sub)
    return None


# The box's HOME and temporary directory are scratch directories made for the run:
# empty, or one entry (redteam11: `len(os.listdir(os.path.expanduser("~"))) > 2` is
# false in the box and true in every user's home). Listing one is the tell, and so is
# its stat (a directory's link count is its subdirectories, 3 in the box; its mtime the
# last entry made); reading a named file there (`~/.calcrc`) is a library's
# configuration and stays honest, as does asking whether the directory exists.
_LISTINGS = {
    **dict.fromkeys(
        ["os.listdir", "os.scandir", "os.walk", "os.fwalk", "glob.glob", "glob.iglob"], "lists"
    ),
    **dict.fromkeys(
        ["os.stat", "os.lstat", "os.path.getmtime", "os.path.getctime", "os.path.getatime",
         "os.path.getsize"],
        "stats",
    ),
}  # fmt: skip
_LISTING_METHODS = {
    **dict.fromkeys(["iterdir", "glob", "rglob", "walk"], "lists"),
    **dict.fromkeys(["stat", "lstat"], "stats"),
}
_SCRATCH_CALLS = {
    "pathlib.Path.home": "home",
    "Path.home": "home",
    "tempfile.gettempdir": "temp",
    "tempfile.gettempdirb": "temp",
}
_SCRATCH_VARIABLES = {"HOME": "home", "TMPDIR": "temp", "TEMP": "temp", "TMP": "temp"}
_PATH_WRAPPERS = frozenset(
    ["pathlib.Path", "Path", "pathlib.PosixPath", "os.fspath", "str", "os.path.realpath",
     "os.path.abspath", "os.path.normpath", "os.path.expanduser", "os.path.join"]
)  # fmt: skip


def _scratch_dir(
    node: ast.AST, names: _Names, bound: Mapping[str, str], depth: int = 0
) -> str | None:
    """ "home" or "temp" when node is the box's HOME or temporary directory itself, or a
    glob pattern of its entries (`~/*`); None for anything else, a file under it too."""
    if depth > 20:
        return None
    if isinstance(node, ast.Name) and node.id in bound:
        return bound[node.id]
    if names.qualified(node) == "tempfile.tempdir":
        return "temp"
    if isinstance(node, ast.Subscript) and names.qualified(node.value) in _ENVIRON:
        return _SCRATCH_VARIABLES.get(_literal(node.slice) or "")
    if not isinstance(node, ast.Call):
        return None
    func = names.qualified(node.func) or ""
    args = node.args
    if func in _SCRATCH_CALLS:
        return _SCRATCH_CALLS[func]
    if func in _GETENV and args:
        return _SCRATCH_VARIABLES.get(_literal(args[0]) or "")
    if func == "os.path.expanduser" and args and (text := _literal(args[0])) is not None:
        return "home" if _entries_of(text, "~") else None
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("expanduser", "resolve"):
        return _scratch_dir(node.func.value, names, bound, depth + 1)
    if (
        func in ("pathlib.Path", "Path", "pathlib.PosixPath")
        and len(args) == 1
        and (text := _literal(args[0])) is not None
    ):
        return "home" if _entries_of(text, "~") else None
    if func == "os.path.join" and len(args) == 2 and (text := _literal(args[1])) is not None:
        inner = _scratch_dir(args[0], names, bound, depth + 1)
        return inner if inner is not None and _entries_of(text, "") else None
    if func in _PATH_WRAPPERS and len(args) == 1:
        return _scratch_dir(args[0], names, bound, depth + 1)
    return None


def _entries_of(text: str, root: str) -> bool:
    """text is root itself or a pattern of its entries: `~`, `~/`, `~/*`, `*`, `.*`."""
    if not text.startswith(root):
        return False
    rest = text[len(root) :].strip("/")
    return rest == "" or ("/" not in rest and any(c in rest for c in "*?["))


def _scratch_listings(tree: ast.Module, names: _Names, parts: Sequence[ast.AST]) -> Iterator[Hit]:
    """A listing of the box's HOME or temporary directory, directly or through a name
    bound to it (in the module's top-level statements or the statements walked)."""
    bound: dict[str, str] = {}
    for _ in range(2):  # a name bound to a name bound to HOME
        for node in [*tree.body, *_walk_all(parts)]:
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                kind = _scratch_dir(node.value, names, bound)
                for t in targets:
                    if isinstance(t, ast.Name) and kind is not None:
                        bound[t.id] = kind
    for node in _walk_all(parts):
        if not isinstance(node, ast.Call):
            continue
        func = names.qualified(node.func) or ""
        kind = verb = None
        if func in _LISTINGS and node.args:
            kind, verb = _scratch_dir(node.args[0], names, bound), _LISTINGS[func]
        elif isinstance(node.func, ast.Attribute) and node.func.attr in _LISTING_METHODS:
            if node.func.attr in ("glob", "rglob") and not (
                node.args and (p := _literal(node.args[0])) is not None and _entries_of(p, "")
            ):
                continue
            kind = _scratch_dir(node.func.value, names, bound)
            verb = _LISTING_METHODS[node.func.attr]
        if kind is not None:
            shown = func or f".{cast(ast.Attribute, node.func).attr}"
            yield Hit(_lines(node), f"{_BOX} ({verb} the {kind} directory: {shown})")


# Where a log record was made: with `stacklevel=2` that is the caller's file, module,
# function and line (the worker's random `_<hex>.py`; redteam13). `pathname` and
# `funcName` are logging's own names; `filename`, `module`, `lineno` only count on a
# record: the parameter of a handler's, filter's or formatter's method, or of a
# function given to `addFilter`.
_RECORD_FIELDS = frozenset({"pathname", "filename", "module", "funcName", "lineno"})
_RECORD_ONLY = frozenset({"pathname", "funcName"})
_RECORD_METHODS = frozenset({"emit", "handle", "filter", "format"})
_RECORD_FORMAT = re.compile(
    r"%\((pathname|filename|module|funcName|lineno)\)"
    r"|\{(pathname|filename|module|funcName|lineno)[}:!]"
)


def _logging_class(node: ast.ClassDef, names: _Names) -> bool:
    """A handler, filter or formatter: a base of logging's, or one named like it."""
    for base in node.bases:
        name = names.qualified(base) or ""
        if name.startswith("logging.") or name.endswith(("Handler", "Filter", "Formatter")):
            return True
    return False


def _record_locations(parts: Sequence[ast.AST], names: _Names) -> Iterator[Hit]:
    for node in _walk_all(parts):
        records: set[str] = set()
        bodies: list[ast.AST] = []
        if isinstance(node, ast.ClassDef) and _logging_class(node, names):
            for method in node.body:
                if (
                    isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
                    and method.name in _RECORD_METHODS
                    and len(method.args.args) >= 2
                ):
                    records.add(method.args.args[1].arg)
                    bodies.append(method)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("addFilter", "setLogRecordFactory")
            and node.args
            and isinstance(node.args[0], ast.Lambda)
        ):
            lam = node.args[0]
            records.update(a.arg for a in lam.args.args[:1])
            bodies.append(lam)
        elif isinstance(node, ast.Attribute) and node.attr in _RECORD_ONLY:
            yield Hit(_lines(node), f"{_STACK} (a log record's .{node.attr})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = _RECORD_FORMAT.search(node.value)
            if found is not None:
                yield Hit(_lines(node), f"{_STACK} (a log record's {found.group(0)})")
        for body in bodies:
            for sub in _walk(body):
                if (
                    isinstance(sub, ast.Attribute)
                    and sub.attr in _RECORD_FIELDS - _RECORD_ONLY
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id in records
                ):
                    yield Hit(_lines(sub), f"{_STACK} (a log record's .{sub.attr})")


_APPENDS = frozenset({"append", "appendleft", "extend", "insert", "add"})


def _counters(parts: Sequence[ast.AST]) -> Iterator[Hit]:
    """A function that counts its own calls (a global, a nonlocal, an attribute of itself)
    or keeps their history (a global it assigns, a module's list it appends to) and
    branches on it: right for the first calls, or while the first call was the one a
    property draws first (hypothesis starts from the smallest example), wrong after.

    "Branches" is any comparison or step, not only a condition: `sum(xs) - (n > 100000)`
    and `sum(xs) - n // 100001` pick the answer as an `if` does (redteam13); a count
    only added or subtracted (`prefix + str(n)`) is not (`_steps`)."""
    for fn in _walk_all(parts):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        # One walk (a scan's cost is its walks, issue 20): what is shared, stored,
        # counted, assigned or appended to; which of them count is decided after it.
        arguments = fn.args
        local = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
        local |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        shared: set[str] = set()
        counts: dict[str, frozenset[int]] = {}
        kept: dict[str, frozenset[int]] = {}
        for node in _walk(fn):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    local.add(node.id)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                shared.update(node.names)
            elif isinstance(node, ast.AugAssign):
                t = node.target
                if isinstance(t, ast.Name):
                    counts[t.id] = _lines(node)
                elif (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == fn.name
                ):
                    counts[f"{fn.name}.{t.attr}"] = _lines(node)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets: list[ast.expr] = (
                    node.targets if isinstance(node, ast.Assign) else [node.target]
                )
                for target in targets:
                    if isinstance(target, ast.Name):
                        kept.setdefault(target.id, _lines(node))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _APPENDS
                and isinstance(node.func.value, ast.Name)
            ):
                kept.setdefault(node.func.value.id, _lines(node))
        counted = {n: v for n, v in counts.items() if n in shared or "." in n}
        kept = {n: v for n, v in kept.items() if n in shared or n not in local}
        if not counted and not kept:
            continue
        tests: list[ast.AST] = list(_conditions(fn))
        tests += (n for n in _walk(fn) if isinstance(n, ast.Compare) or _steps(n))
        for test in tests:
            for node in _walk(test):
                name = _counter_name(node)
                if name in counted:
                    yield Hit(_lines(test) | counted[name], f"{_GATED} a call counter ({name})")
                elif name in kept and _reads_history(node, test):
                    yield Hit(_lines(test) | kept[name], f"{_GATED} its call history ({name})")


def _counter_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return _counter_name(node.args[0]) if len(node.args) == 1 else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return _counter_name(node.value) if isinstance(node.slice.value, int) else None
    return None


def _reads_history(node: ast.AST, test: ast.AST) -> bool:
    """The history's length, an entry by position, or the value itself compared by order or
    equality: not `x is None` (a lazy start) or `k in cache` (a memo)."""
    if isinstance(node, ast.Call | ast.Subscript):
        return True
    if isinstance(test, ast.Compare):
        operands = [test.left, *test.comparators]
        return any(o is node for o in operands) and not any(
            isinstance(op, ast.Is | ast.IsNot | ast.In | ast.NotIn) for op in test.ops
        )
    if isinstance(test, ast.Call):
        return any(arg is node for arg in test.args)
    return isinstance(test, ast.BinOp) and node in (test.left, test.right)


# What turns a count into a step without a comparison: `n // 100001`, `n >> 17`,
# `min(1, max(0, n - 100000))`, `int(n * 1e-5)`. `+`, `-` and a string's `%` move a
# count without a step (`prefix + str(n)`, `"%d" % n`, `len(handlers) - 1`): honest ids
# and registries, not probes.
_LINEAR = (ast.Add, ast.Sub)
_STEP_CALLS = frozenset({"min", "max", "bool", "int", "round", "abs", "divmod", "pow"})


def _steps(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, _LINEAR):
            return False
        text = isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
        return not (isinstance(node.op, ast.Mod) and (text or isinstance(node.left, ast.JoinedStr)))
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _STEP_CALLS
    )


def scan(source: str, lines: Iterable[int] | None = None) -> list[Hit]:
    """Every probe in the file, in line order; nothing for a file that does not parse.

    With `lines`, at least every probe whose lines meet them (issue 20): only the
    top-level statements that hold one of them are walked, not a 5,000-line module.
    A probe's lines lie inside its top-level statement, but for the module scope's
    gates (a clock read in one statement, branched on in another): those are whole.
    """
    global _kids  # noqa: PLW0603  (one scan's table, dropped after it)
    _kids = {}
    try:
        tree = parsed.parse(source)
        names = _Names(tree)
        parts = tree.body if lines is None else _touching(tree, frozenset(lines))
        hits = {*_scan(tree, names, parts), *_subscripts(parts, names)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    finally:
        _kids = None
    strong = {n for h in hits if not h.weak for n in h.lines}
    hits = {h for h in hits if not (h.weak and h.lines & strong)}
    return sorted(hits, key=lambda h: (h.line, h.what))


def _line_of(lines: Sequence[str], line: int) -> str:
    """A line's text, stripped, from the file split once (not once a line)."""
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def changed_hits(path: str, base: str | None, head: str, changed: Iterable[int]) -> list[str]:
    """`path:line: what` for each probe the patch adds: on a changed line, and not at base.

    A probe the base already had on an identical line (the patch only moved
    or re-indented it) is the base's, not the patch's.
    """
    changed = frozenset(changed)
    touching = [(hit, sorted(hit.lines & changed)) for hit in scan(head, changed)]
    touching = [(hit, touched) for hit, touched in touching if touched]
    if not touching:
        # Issue 20: the base's scan (a whole module's AST walked again) only
        # excuses hits on changed lines; with none there is nothing to excuse.
        return []
    before: set[tuple[str, str]] = set()
    if base is not None:
        base_lines = base.splitlines()
        before = {(h.what, _line_of(base_lines, n)) for h in scan(base) for n in h.lines}
    head_lines = head.splitlines()
    found: dict[str, None] = {}
    for hit, touched in touching:
        if all((hit.what, _line_of(head_lines, n)) in before for n in hit.lines):
            continue
        found[f"{path}:{touched[0]}: {hit.what}"] = None
    return list(found)
