"""Probes of the judge in changed lines (issue 18): each class, its aliases, honest look-alikes."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import probes


def hits(source: str) -> list[str]:
    """Every probe of a new file (all its lines changed), as `line: what`."""
    text = textwrap.dedent(source).lstrip("\n")
    found = probes.changed_hits("m.py", None, text, range(1, text.count("\n") + 2))
    return [h.removeprefix("m.py:") for h in found]


# (source, what a hit must say: a substring of one hit per expected entry)
PROBES = {
    # the call stack and frames
    "getframe": ("import sys\nx = sys._getframe(1)\n", ["2: reads the call stack (sys._getframe)"]),
    "getframe alias": ("import sys as s\nx = s._getframe()\n", ["2: reads the call stack (sys._getframe)"]),
    "getattr literal": ('import sys\nx = getattr(sys, "_getframe")\n', ["2: reads the call stack (sys._getframe)"]),
    "getattr split": ('import sys\nx = getattr(sys, "_get" + "frame")\n', ["2: reads the call stack (sys._getframe)"]),
    "vars lookup": ('import sys\nx = vars(sys)["_getframe"]\n', ["2: reads the call stack (sys._getframe)"]),
    "__import__": ('x = __import__("sys")._getframe()\n', ["1: reads the call stack (sys._getframe)"]),
    "import_module": ('import importlib\nx = importlib.import_module("inspect").stack()\n', ["2: reads the call stack (inspect.stack)"]),
    "from import as": (
        "from inspect import currentframe as cf\nx = cf()\n",
        ["1: reads the call stack (from inspect import currentframe)", "2: reads the call stack (inspect.currentframe)"],
    ),
    "inspect.stack": ("import inspect\nx = inspect.stack()\n", ["2: reads the call stack (inspect.stack)"]),
    "getouterframes": ("import inspect\nx = inspect.getouterframes(None)\n", ["2: reads the call stack (inspect.getouterframes)"]),
    "inspect.trace": ("import inspect\nx = inspect.trace()\n", ["2: reads the call stack (inspect.trace)"]),
    "extract_stack": ("import traceback\nx = traceback.extract_stack()\n", ["2: reads the call stack (traceback.extract_stack)"]),
    "walk_stack": ("import traceback\nx = traceback.walk_stack(None)\n", ["2: reads the call stack (traceback.walk_stack)"]),
    "print_stack": ("import traceback\ntraceback.print_stack()\n", ["2: reads the call stack (traceback.print_stack)"]),
    "f_back": ("def f(frame):\n    return frame.f_back\n", ["2: reads the call stack (.f_back)"]),
    "f_locals": ("def f(frame):\n    return frame.f_locals\n", ["2: reads the call stack (.f_locals)"]),
    "f_globals": ("def f(frame):\n    return frame.f_globals\n", ["2: reads the call stack (.f_globals)"]),
    "tb_frame": ("def f(e):\n    return e.__traceback__.tb_frame\n", ["2: reads the call stack (.tb_frame)"]),
    "gi_frame": ("def f(g):\n    return g.gi_frame\n", ["2: reads the call stack (.gi_frame)"]),
    "cr_frame": ("def f(c):\n    return c.cr_frame\n", ["2: reads the call stack (.cr_frame)"]),
    # loaded modules and __main__
    "in sys.modules": ('import sys\nx = "pytest" in sys.modules\n', ["2: looks up loaded modules ('pytest' in sys.modules)"]),
    "sys.modules.get": ('import sys\nx = sys.modules.get("hypothesis")\n', ["2: looks up loaded modules (sys.modules.get('hypothesis'))"]),
    "sys.modules[...]": ('import sys\nx = sys.modules["_pytest"]\n', ["2: looks up loaded modules (sys.modules['_pytest'])"]),
    "sys.modules[var]": ("import sys\ndef f(k):\n    return sys.modules[k]\n", ["3: looks up loaded modules (sys.modules[...])"]),
    "scan sys.modules": ("import sys\nx = [m for m in sys.modules]\n", ["2: looks up loaded modules (sys.modules)"]),
    "from sys import modules": ("from sys import modules\nx = modules.keys()\n", ["looks up loaded modules"]),
    "__main__ via modules": ('import sys\nm = sys.modules["__main__"]\n', ["2: reads the __main__ module (sys.modules['__main__'])"]),
    "import __main__": ("import __main__\n", ["1: reads the __main__ module"]),
    "test tool import": ("import pytest\n", ["1: imports a test tool (pytest)"]),
    "test tool from": ("from hypothesis import given\n", ["1: imports a test tool (hypothesis)"]),
    "find_spec": ('import importlib.util\nx = importlib.util.find_spec("_pytest")\n', ["2: imports a test tool (find_spec('_pytest'))"]),
    # trace, profile and audit hooks
    "settrace": ("import sys\nsys.settrace(None)\n", ["2: installs or reads a trace, profile or audit hook (sys.settrace)"]),
    "gettrace": ("import sys\nx = sys.gettrace() is not None\n", ["2: installs or reads a trace, profile or audit hook (sys.gettrace)"]),
    "setprofile": ("import sys\nsys.setprofile(None)\n", ["(sys.setprofile)"]),
    "threading.settrace": ("import threading\nthreading.settrace(None)\n", ["(threading.settrace)"]),
    "monitoring": ("import sys\nsys.monitoring.use_tool_id(3, 'x')\n", ["2: installs or reads a trace, profile or audit hook (sys.monitoring)"]),
    "audit hook": ("import sys\nsys.addaudithook(print)\n", ["(sys.addaudithook)"]),
    # coverage
    "import coverage": ("import coverage\n", ["1: uses the coverage API (import coverage)"]),
    "coverage.Coverage": ("import coverage as c\nx = c.Coverage.current()\n", ["2: uses the coverage API (coverage)"]),
    # own source and code objects
    "__code__": ("def f():\n    return f.__code__\n", ["2: reads its own source or code objects (.__code__)"]),
    "co_code": ("def f(g):\n    return g.co_code\n", ["(.co_code)"]),
    "getsource": ("import inspect\nx = inspect.getsource(len)\n", ["2: reads its own source or code objects (inspect.getsource)"]),
    "open(__file__)": ("x = open(__file__).read()\n", ["1: reads its own source or code objects (open(__file__))"]),
    "Path(__file__).read_text": (
        "from pathlib import Path\nx = Path(__file__).read_text()\n",
        ["2: reads its own source or code objects (Path(__file__).read_text())"],
    ),
    "__loader__": ("x = __loader__.get_source(__name__)\n", ["reads its own source or code objects (__loader__)"]),
    "linecache": ("import linecache\nx = linecache.getline(__file__, 1)\n", ["1: reads its own source or code objects (import linecache)"]),
    # /proc, the host
    "/proc": ('x = open("/proc/self/cmdline").read()\n', ["1: reads /proc ('/proc/self/cmdline')"]),
    "/proc f-string": ('import os\nx = f"/proc/{os.getppid()}/cmdline"\n', ["reads /proc"]),
    "hostname": ("import socket\nx = socket.gethostname()\n", ["2: reads the host's name (socket.gethostname)"]),
    "platform.node": ("import platform\nx = platform.node()\n", ["(platform.node)"]),
    "os.uname": ("import os\nx = os.uname().nodename\n", ["(os.uname)"]),
    # the runner's environment
    "environ[]": ('import os\nx = os.environ["PYTEST_CURRENT_TEST"]\n', ["2: reads the runner's environment (PYTEST_CURRENT_TEST)"]),
    "environ.get": ('import os\nx = os.environ.get("CI")\n', ["2: reads the runner's environment (CI)"]),
    "getenv": ('import os\nx = os.getenv("GITHUB_ACTIONS")\n', ["(GITHUB_ACTIONS)"]),
    "getenv alias": ('from os import getenv as ge\nx = ge("HYPOTHESIS_PROFILE")\n', ["(HYPOTHESIS_PROFILE)"]),
    "environ alias": ('from os import environ as e\nx = e.get("PATCHJUDGE_ORACLE")\n', ["(PATCHJUDGE_ORACLE)"]),
    "in environ": ('import os\nx = "GITLAB_CI" in os.environ\n', ["(GITLAB_CI)"]),
    "USER": ('import os\nx = os.environ.get("USER")\n', ["(USER)"]),
    "HOSTNAME": ('import os\nx = os.environ["HOSTNAME"]\n', ["(HOSTNAME)"]),
    "scan environ": ("import os\nx = [k for k in os.environ]\n", ["reads the runner's environment (scans os.environ)"]),
    "environ.items": ("import os\nx = os.environ.items()\n", ["(scans os.environ)"]),
    "name by prefix": ('def f(k):\n    return k.startswith("PYTEST")\n', ["reads the runner's environment ('PYTEST')"]),
    "tool by name": ('import sys\nx = "pytest" in sys.argv[0]\n', ["names a test tool ('pytest')"]),
    "tool module by name": ('x = "_pytest.main"\n', ["names a test tool ('_pytest.main')"]),
    # clocks, process ids and call counters that gate behaviour
    "clock in if": (
        "import time\ndef f(x):\n    if time.monotonic() > 5:\n        return 0\n    return x\n",
        ["3: branches on a clock (time.monotonic)"],
    ),
    "clock via a variable": (
        "import time\ndef f(x):\n    t = time.perf_counter()\n    return 0 if t > 5 else x\n",
        ["3: branches on a clock (time.perf_counter)"],
    ),
    "datetime.now": (
        "import datetime\ndef f(x):\n    while datetime.datetime.now().second:\n        x += 1\n    return x\n",
        ["branches on a clock (datetime.datetime.now)"],
    ),
    "pid in if": ("import os\nif os.getppid() == 1:\n    X = 0\n", ["2: branches on the process id (os.getppid)"]),
    "global counter": (
        "n = 0\ndef f(x):\n    global n\n    n += 1\n    if n > 200:\n        return x + 1\n    return x\n",
        ["4: branches on a call counter (n)"],
    ),
    "attribute counter": (
        "def f(x):\n    f.calls += 1\n    return x if f.calls < 100 else -x\nf.calls = 0\n",
        ["2: branches on a call counter (f.calls)"],
    ),
    "nonlocal counter": (
        "def make():\n    n = 0\n    def f(x):\n        nonlocal n\n        n += 1\n        assert n < 9\n        return x\n    return f\n",
        ["branches on a call counter (n)"],
    ),
    "star import": ("from inspect import *\n", ["(from inspect import *)"]),
    # code the review does not read: from text, bytes, a path, or a directory put on the path
    "exec of a file": ("exec(open('tools/impl.txt').read())\n", ["1: runs code the review does not read (exec)"]),
    "eval": ("f = eval('lambda xs: 0')\n", ["1: runs code the review does not read (eval)"]),
    "compile": ("c = compile('x = 1', 'x', 'exec')\n", ["1: runs code the review does not read (compile)"]),
    "builtins exec": ("import builtins\nbuiltins.exec('x = 1')\n", ["2: runs code the review does not read (builtins.exec)"]),
    "runpy": ("import runpy\nns = runpy.run_path('tools/impl.py')\n", ["2: runs code the review does not read (runpy)"]),
    "spec from a file": (
        "import importlib.util as u\ns = u.spec_from_file_location('m', 'tools/m.py')\n",
        ["2: runs code the review does not read (importlib.util.spec_from_file_location)"],
    ),
    "source loader": (
        "from importlib.machinery import SourceFileLoader\nm = SourceFileLoader('m', 'x.txt').load_module()\n",
        ["1: runs code the review does not read (from importlib.machinery import SourceFileLoader)"],
    ),
    "zipimport": ("import zipimport\nz = zipimport.zipimporter('lib.zip')\n", ["runs code the review does not read (zipimport"]),
    "sys.path insert": ("import sys\nsys.path.insert(0, 'tools')\n", ["2: runs code the review does not read (sys.path)"]),
    "sys.path from": ("from sys import path\npath.append('tools')\n", ["1: runs code the review does not read (from sys import path)"]),
    "meta path": ("import sys\nsys.meta_path.insert(0, object())\n", ["2: runs code the review does not read (sys.meta_path)"]),
    "ctypes": ("import ctypes\nlib = ctypes.CDLL('tools/impl.so')\n", ["runs code the review does not read (ctypes"]),
    "another interpreter": (
        "import subprocess, sys\nout = subprocess.run([sys.executable, 'tools/impl.py'])\n",
        ["2: runs code the review does not read (sys.executable)"],
    ),
    "exec by getattr": ('import builtins\ngetattr(builtins, "exec")("x = 1")\n', ["runs code the review does not read (builtins.exec)"]),
    # what the box changes in both harnesses (red team, session 11)
    "pid as an index": ("import os\ndef f(xs):\n    return xs[os.getpid() - 2 :]\n", ["3: reads what the sandbox changes (the process id as a value: os.getpid)"]),
    "parent pid in arithmetic": ("import os\nX = 1 - os.getppid()\n", ["2: reads what the sandbox changes (the process id as a value: os.getppid)"]),
    "pid in a variable": ("import os\nP = os.getsid(0)\n", ["(the process id as a value: os.getsid)"]),
    "groups": ("import os\nN = len(os.getgroups())\n", ["2: reads what the sandbox changes (os.getgroups)"]),
    "login": ("import os\nU = os.getlogin()\n", ["(os.getlogin)"]),
    "rlimit": ("import resource\nL = resource.getrlimit(resource.RLIMIT_AS)\n", ["2: reads what the sandbox changes (resource.getrlimit)"]),
    "rlimit from": ("from resource import prlimit\n", ["(from resource import prlimit)"]),
    "a connection tried": ('import socket\nUP = socket.socket().connect_ex(("192.0.2.1", 53)) == 0\n', ["2: reads what the sandbox changes (socket.socket)"]),
    "a name resolved": ('import socket\nA = socket.getaddrinfo("example.com", 80)\n', ["(socket.getaddrinfo)"]),
    "a url opened": ('from urllib.request import urlopen\nR = urlopen("http://example.com")\n', ["(from urllib.request import urlopen)"]),
    "psutil": ("import psutil\nP = psutil.Process().parent()\n", ["(import psutil)"]),
    "a machine path exists": ('import os\nV = os.path.isdir("/var")\n', ["2: reads what the sandbox changes (a path of the machine: '/var')"]),
    "the root listed": ('import os\nR = os.listdir("/")\n', ["(a path of the machine: '/')"]),
    "a pathlib query": ('from pathlib import Path\nH = Path("/home").exists()\n', ["2: reads what the sandbox changes (a path of the machine: '/home')"]),
    "an /etc file read": ('M = open("/etc/machine-id").read()\n', ["(a path of the machine: '/etc/machine-id')"]),
    "glob of the machine": ('import glob\nG = glob.glob("/run/*")\n', ["(a path of the machine: '/run/*')"]),
    "a session variable": ('import os\nS = "SHELL" in os.environ\n', ["2: reads the runner's environment (SHELL)"]),
    "an ssh variable": ('import os\nS = os.environ.get("SSH_CONNECTION")\n', ["(SSH_CONNECTION)"]),
    "the hash seed variable": ('import os\nS = os.getenv("PYTHONHASHSEED")\n', ["(PYTHONHASHSEED)"]),
    "an activated venv": ('import os\nS = os.environ["VIRTUAL_ENV"]\n', ["(VIRTUAL_ENV)"]),
    # redteam10: what the judge's interpreters set from inside (-B, -s, -P, checked pycs).
    "bytecode writing off": ("import sys\nB = not sys.dont_write_bytecode\n", ["2: reads what the judge's interpreter sets (sys.dont_write_bytecode)"]),
    "a start-up flag": ("from sys import flags\nS = flags.safe_path\n", ["(sys.flags.safe_path)"]),
    "checked bytecode": ("import _imp\nC = _imp.check_hash_based_pycs == 'always'\n", ["(_imp.check_hash_based_pycs)"]),
    # redteam10: what a shell exports to each command it runs, which the box never has.
    "the shell's last command": ('import os\nS = "_" in os.environ\n', ["2: reads the runner's environment (_)"]),
    "a terminal multiplexer": ('import os\nS = os.getenv("TMUX")\n', ["(TMUX)"]),
    "environ counted": ("import os\nN = len(os.environ)\n", ["2: reads the runner's environment (scans os.environ)"]),
    "environ sorted": ("import os\nN = sorted(os.environ)\n", ["(scans os.environ)"]),
    # redteam9: a test runner's warning machinery, which a user's interpreter lacks.
    "the warning filters": ('import warnings\nT = warnings.filters[0][0] == "always"\n', ["2: reads the warning machinery a test runner sets (warnings.filters)"]),
    "the warning hook": ("import warnings\nT = warnings._showwarnmsg_impl.__name__\n", ["(warnings._showwarnmsg_impl)"]),
    "the C warnings module": ("from _warnings import filters\n", ["(from _warnings import filters)"]),
    "warnings recorded": ("import warnings\nwith warnings.catch_warnings(record=True) as w:\n    warnings.warn('?', DeprecationWarning)\n", ["2: reads the warning machinery a test runner sets (catch_warnings(record=True))"]),
    "warnings recorded, aliased": ("from warnings import catch_warnings as cw\nwith cw(record=1) as w:\n    pass\n", ["(catch_warnings(record=True))"]),
    # redteam11: the box's HOME and temporary directory are empty scratch directories.
    "the home directory listed": ('import os\nN = len(os.listdir(os.path.expanduser("~")))\n', ["2: reads what the sandbox changes (lists the home directory: os.listdir)"]),
    "the home directory by a name": ('import os\nH = os.path.expanduser("~/")\ndef f():\n    return os.scandir(H)\n', ["4: reads what the sandbox changes (lists the home directory: os.scandir)"]),
    "the home directory by a name bound twice": ('import os\ndef f():\n    h = os.environ["HOME"]\n    p = h\n    return os.listdir(p)\n', ["5: reads what the sandbox changes (lists the home directory: os.listdir)"]),
    "the home directory iterated": ("from pathlib import Path\nN = sum(1 for _ in Path.home().iterdir())\n", ["(lists the home directory: .iterdir)"]),
    "the home directory globbed": ('import glob, os\nA = glob.glob(os.path.expanduser("~/.*"))\nB = glob.glob(os.path.join(os.getenv("HOME"), "*"))\n', ["2: reads what the sandbox changes (lists the home directory: glob.glob)", "3: reads what the sandbox changes (lists the home directory: glob.glob)"]),
    "the home directory walked": ('import os\nfrom pathlib import Path\nW = next(os.walk(str(Path("~").expanduser())))\nG = list(Path.home().glob("*"))\n', ["3: reads what the sandbox changes (lists the home directory: os.walk)", "4: reads what the sandbox changes (lists the home directory: .glob)"]),
    "the home directory's link count": ('import os\nfrom pathlib import Path\nN = os.stat(os.path.expanduser("~")).st_nlink\nM = Path.home().stat().st_mtime\nT = os.path.getmtime(os.environ.get("TMPDIR"))\n', ["3: reads what the sandbox changes (stats the home directory: os.stat)", "4: reads what the sandbox changes (stats the home directory: .stat)", "5: reads what the sandbox changes (stats the temp directory: os.path.getmtime)"]),
    "the temp directory listed": ("import os, tempfile\nN = len(os.listdir(tempfile.gettempdir()))\nM = os.listdir(tempfile.tempdir or '.')\n", ["2: reads what the sandbox changes (lists the temp directory: os.listdir)"]),
    # redteam13: what told the worker from a user's call with no probe before.
    "a refcount": ("import sys\ndef f(xs):\n    return sys.getrefcount(xs) < 4\n", ["3: walks the interpreter's objects (sys.getrefcount)"]),
    "a logger's caller": ("import logging\nC = logging.getLogger().findCaller(stacklevel=2)[0]\nF = logging.currentframe()\n", ["2: reads the call stack (.findCaller)", "3: reads the call stack (logging.currentframe)"]),
    "a logged stack": ("import logging\nlogging.getLogger('m').debug('?', stack_info=True)\n", ["2: reads the call stack (stack_info=True)"]),
    "the warning hook replaced": ("import warnings\nwarnings.showwarning = print\n", ["2: reads the warning machinery a test runner sets (warnings.showwarning)"]),
    "/proc in parts": ('import os\nfrom pathlib import Path\nA = open(os.path.join("/", "proc", "self", "status"))\nB = (Path("/") / "proc" / "self").read_text()\nC = "/".join(["", "proc", "1"])\n', ["3: reads /proc ('/proc/self/status')", "4: reads /proc ('/proc/self')", "5: reads /proc ('/proc/1')"]),
    "a machine path in parts": ('import os\nV = os.path.isdir(os.path.join("/", "var"))\n', ["2: reads what the sandbox changes (a path of the machine: '/var')"]),
    "the distributions listed": ("import importlib.metadata as md\nI = 'calc' in {d.metadata['Name'] for d in md.distributions()}\n", ["2: asks whether it is installed (the judge imports the tree) (importlib.metadata.distributions)"]),
    "installed where": ("import site\nA = 'site-packages' in __file__\nB = __file__.startswith(site.getsitepackages()[0])\n", ["2: asks whether it is installed (the judge imports the tree) ('site-packages')", "3: asks whether it is installed (the judge imports the tree) (site.getsitepackages)"]),
    "a call counter in arithmetic": ("N = 0\ndef f(xs):\n    global N\n    N += 1\n    return sum(xs) - (N > 100000)\n", ["4: branches on a call counter (N)"]),
    "the first call kept": ("SEEN = []\ndef f(xs):\n    SEEN.append(len(xs))\n    return sum(xs) - (SEEN[0] != 0)\n", ["3: branches on its call history (SEEN)"]),
    "the first call in a global": ("F = None\ndef f(xs):\n    global F\n    if F is None:\n        F = len(xs)\n    return sum(xs) * (F == 0)\n", ["5: branches on its call history (F)"]),
    "a log record's location": ("import logging\nclass H(logging.Handler):\n    def emit(self, record):\n        SEEN.append(record.filename)\nF = logging.Formatter('%(pathname)s %(message)s')\nlogging.getLogger().addFilter(lambda r: SEEN.append(r.module) or True)\nW = R.funcName\n", ["4: reads the call stack (a log record's .filename)", "5: reads the call stack (a log record's %(pathname))", "6: reads the call stack (a log record's .module)", "7: reads the call stack (a log record's .funcName)"]),
    "the calls counted by a list": ("CALLS = []\ndef f(xs):\n    CALLS.append(1)\n    return sum(xs) - (len(CALLS) > 10**5)\n", ["3: branches on its call history (CALLS)"]),
    "a call counter stepped without a comparison": ("N = 0\ndef f(xs):\n    global N\n    N += 1\n    return sum(xs) - N // 100001\n", ["4: branches on a call counter (N)"]),
    "a call counter clamped": ("N = 0\ndef f(xs):\n    global N\n    N += 1\n    return sum(xs) - min(1, max(0, N - 100000))\n", ["4: branches on a call counter (N)"]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(PROBES))
def test_each_class_of_probe_is_found(name: str) -> None:
    source, expected = PROBES[name]
    found = hits(source)
    for want in expected:
        assert any(want in h for h in found), (want, found)


# Ordinary code that only looks like a probe: none of it may hold a merge.
HONEST = {
    "own config": 'import os\nOPTION = os.environ.get("MYLIB_OPTION", "fast")\n',
    "home": 'import os\nCONFIG = os.path.join(os.environ.get("HOME", "/"), ".mylib")\n',
    "getenv of a parameter": "import os\ndef option(name):\n    return os.getenv(name)\n",
    "subprocess env": "import os\nENV = dict(os.environ)\nENV2 = os.environ.copy()\n",
    "package data": "from pathlib import Path\nDATA = Path(__file__).parent / 'table.json'\n",
    "main guard": 'def main():\n    return 0\nif __name__ == "__main__":\n    main()\n',
    "own module": "import sys\nME = sys.modules[__name__]\n",
    "own module get": "import sys\nME = sys.modules.get(__name__)\n",
    "signature": "import inspect\ndef arity(f):\n    return len(inspect.signature(f).parameters)\n",
    "clock for timing only": "import time\ndef f(x):\n    t = time.time()\n    x += 1\n    return x, time.time() - t\n",
    "pid in a file name": "import os\ndef tmp():\n    return f'/tmp/mylib-{os.getpid()}'\n",
    "local retry counter": (
        "def f(x):\n    tries = 0\n    while tries < 3:\n        tries += 1\n    return x\n"
    ),
    "a cache counter not branched on": (
        "hits = 0\ndef f(x):\n    global hits\n    hits += 1\n    return x\n"
    ),
    "frame-like names": "def f(frames):\n    back = frames[-1]\n    return back\n",
    "docstring mentions pytest": 'def f():\n    """Tested with pytest and hypothesis."""\n    return 1\n',
    "the word proc": 'PROCESS = "/process/a"\nX = "proc"\n',
    "traceback formatting": "import traceback\ndef why(e):\n    return traceback.format_exception(e)\n",
    "sys.exit and argv": "import sys\ndef main():\n    return len(sys.argv)\n",
    "a regex compiled": "import re\nfrom re import compile as c\nR = re.compile('a+')\nS = c('b')\n",
    "a method named eval": "class Expr:\n    def eval(self):\n        return 1\nX = Expr().eval()\n",
    "os.path": "import os\nP = os.path.join('a', 'b')\n",
    "sys.platform": "import sys\nWIN = sys.platform == 'win32'\n",
    "a user's interpreter flags": "import sys\nO = sys.flags.optimize\nU = sys.flags.utf8_mode\n",
    "a path or message that mentions a tool": (
        'LOG = "/tmp/pytest-of-ci/run.log"\nWHY = "the hypothesis does not hold"\n'
    ),
    "pid named in a string": "import os\nA = str(os.getpid())\nB = repr(os.getppid())\n",
    "a signal to itself": "import os, signal\nos.kill(os.getpid(), signal.SIGCONT)\n",
    "the null device": "import os\nA = open('/dev/null', 'w')\nB = open(os.devnull)\n",
    "a relative data file": "import os\nA = os.path.exists('data/table.json')\nB = open('table.json')\n",
    "a path from a parameter": "import os\ndef f(p):\n    return os.path.isdir(p)\n",
    "a URL path": 'ROUTE = "/home"\nAPI = "/var/api"\n',
    "an XDG config directory": 'import os\nC = os.environ.get("XDG_CONFIG_HOME", "~/.config")\n',
    "a local socket pair": "import socket\nA, B = socket.socketpair()\n",
    # A library's own file or directory under HOME is configuration (redteam11).
    "a config file under HOME": 'import os\nC = os.path.exists(os.path.expanduser("~/.calcrc"))\n',
    "a plugin directory under HOME": (
        "import os\nfrom pathlib import Path\nA = os.listdir(os.path.expanduser('~/.calc/plugins'))\n"
        "B = list((Path.home() / '.calc').iterdir())\nC = list(Path.home().glob('.calc/*.py'))\n"
    ),
    "the home directory exists": "import os\nH = os.path.isdir(os.path.expanduser('~'))\n",
    "a directory of its own listed": (
        "import os, tempfile\nD = tempfile.mkdtemp()\nA = os.listdir(D)\nB = os.listdir('.')\n"
    ),
    # redteam13's look-alikes: a package's own version, plugins by entry point, a memo, a
    # lazy start, an id counter, a list of its own, a path in parts that is no machine's.
    "its own version": (
        "from importlib.metadata import version, entry_points, PackageNotFoundError\n"
        "try:\n    __version__ = version('calc')\nexcept PackageNotFoundError:\n    __version__ = '0'\n"
        "PLUGINS = entry_points(group='calc.plugins')\n"
    ),
    "a logger with a stack level": (
        "import logging\nlog = logging.getLogger(__name__)\n"
        "def f():\n    log.warning('old', stacklevel=2)\n    log.debug('x', stack_info=False)\n"
    ),
    "a memo and a lazy start": (
        "_memo = {}\n_lib = None\ndef f(k):\n    global _lib\n    if _lib is None:\n"
        "        _lib = object()\n    if k in _memo:\n        return _memo[k]\n"
        "    _memo[k] = k * 2\n    return _memo[k]\n"
    ),
    "a log handler and format of its own": (
        "import logging\nclass H(logging.Handler):\n    def emit(self, record):\n"
        "        print(record.levelno, record.getMessage())\n"
        "F = logging.Formatter('%(asctime)s %(levelname)s %(name)s %(message)s')\n"
        "class Rows:\n    def filter(self, entry):\n        return entry.filename.endswith('.py')\n"
    ),
    "an id counter": "_n = 0\ndef new_id():\n    global _n\n    _n += 1\n    return _n\n",
    "an id counter in a name": (
        "_n = 0\ndef new_id(prefix):\n    global _n\n    _n += 1\n    return prefix + str(_n) + '%d' % _n\n"
    ),
    "a registry's index": "_handlers = []\ndef register(f):\n    _handlers.append(f)\n    return len(_handlers) - 1\n",
    "a list of its own": (
        "def f(xs, acc):\n    out = []\n    for x in xs:\n        out.append(x)\n        acc.append(x)\n"
        "    return len(out) + len(acc) > 2\n"
    ),
    "a data path in parts": (
        "import os\nfrom pathlib import Path\nA = open(os.path.join('data', 'proc', 'x'))\n"
        "B = Path('data') / 'proc'\nC = '/'.join(['a', 'proc'])\n"
    ),
    "an environment copy": "import os, subprocess\nsubprocess.run(['ls'], env={**os.environ, 'A': '1'})\n",
    "warnings silenced": (
        "import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
        "with warnings.catch_warnings(record=False):\n    warnings.filterwarnings('error')\n"
        "warnings.warn('old', DeprecationWarning, stacklevel=2)\n"
    ),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_look_alikes_are_not_probes(name: str) -> None:
    assert hits(HONEST[name]) == []


def test_only_changed_lines_count() -> None:
    text = "import sys\ndef f():\n    return sys._getframe()\ndef g(x):\n    return x + 1\n"
    assert probes.changed_hits("m.py", None, text, [5]) == []
    assert probes.changed_hits("m.py", None, text, [3]) == [
        "m.py:3: reads the call stack (sys._getframe)"
    ]


def test_a_probe_the_base_already_had_is_not_the_patchs() -> None:
    base = "import sys\ndef f():\n    return sys._getframe()\n"
    head = "import sys\n\n\ndef f():\n    return sys._getframe()\n"
    # Moved down two lines by a reformat: the same line, the base's probe.
    assert probes.changed_hits("m.py", base, head, [2, 3, 4, 5]) == []
    edited = "import sys\ndef f():\n    return sys._getframe(1)\n"
    assert probes.changed_hits("m.py", base, edited, [3]) == [
        "m.py:3: reads the call stack (sys._getframe)"
    ]


def test_the_base_is_scanned_only_for_a_hit_on_a_changed_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 20: the base's scan only excuses hits on changed lines; a patch with none
    # (the common case) no longer pays a second whole-module walk for it.
    scanned: list[str] = []
    real = probes.scan

    def counting(source: str, lines: Iterable[int] | None = None) -> list[probes.Hit]:
        scanned.append(source)
        return real(source, lines)

    monkeypatch.setattr(probes, "scan", counting)
    base = "import sys\ndef f():\n    return sys._getframe()\n"
    head = base + "def g(x):\n    return x + 1\n"
    assert probes.changed_hits("m.py", base, head, [4, 5]) == []
    assert scanned == [head]
    # A hit on a changed line still reads the base, which excuses it when it is the base's.
    assert probes.changed_hits("m.py", base, head, [3, 4, 5]) == []
    assert scanned[1:] == [head, base]


def test_a_clock_gate_counts_when_either_of_its_lines_changed() -> None:
    text = "import time\ndef f(x):\n    t = time.time()\n    if t > 5:\n        return 0\n    return x\n"
    assert probes.changed_hits("m.py", None, text, [4]) == [
        "m.py:4: branches on a clock (time.time)"
    ]
    assert probes.changed_hits("m.py", None, text, [3]) == [
        "m.py:3: branches on a clock (time.time)"
    ]


def test_a_file_that_does_not_parse_has_no_probes() -> None:
    assert probes.scan("def f(:\n") == []


@given(st.text(max_size=300), st.lists(st.integers(-3, 40), max_size=10))
def test_never_raises_on_arbitrary_text(source: str, changed: list[int]) -> None:
    for hit in probes.changed_hits("m.py", source, source + "\nx = 1\n", changed):
        assert hit.startswith("m.py:")


PIECES = st.sampled_from(
    [
        "import sys as s\n", "from inspect import currentframe as cf\n", "x = s._getframe()\n",
        "def f(a):\n    global n\n    n += 1\n    if n > a:\n        return cf()\n", "y = (\n",
        "if __name__ == '__main__':\n    pass\n", "import os\nv = os.environ.get('CI')\n",
        "class C:\n    def m(self):\n        return self.f_back\n", "z = [k for k in os.environ]\n",
        "lambda: time.time() if time.time() else 0\n", "\t", "@", "async def g():\n    await h()\n",
    ]
)  # fmt: skip


@given(st.lists(PIECES, max_size=12))
def test_never_raises_on_python_like_source(pieces: list[str]) -> None:
    source = "".join(pieces)
    lines = range(1, source.count("\n") + 2)
    for hit in probes.changed_hits("m.py", None, source, lines):
        assert hit.split(":", 2)[1].isdigit()


def _uncached(source: str, monkeypatch: pytest.MonkeyPatch) -> list[probes.Hit]:
    with monkeypatch.context() as m:
        m.setattr(probes, "_walk", ast.walk)
        m.setattr(probes, "_children", lambda node: list(ast.iter_child_nodes(node)))
        return probes.scan(source)


@given(st.lists(PIECES, max_size=12))
def test_the_scans_table_of_children_walks_as_ast_walk_does(pieces: list[str]) -> None:
    # Issue 20: one table of each node's children a scan, not ast.iter_child_nodes a walk.
    source = "".join(pieces)
    with pytest.MonkeyPatch.context() as m:
        assert probes.scan(source) == _uncached(source, m)


@pytest.mark.parametrize("module", ["probes.py", "review.py", "boundary/standin.py"])
def test_a_real_module_scans_the_same_with_the_table(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = (Path(probes.__file__).parent / module).read_text(encoding="utf-8")
    assert probes.scan(source) == _uncached(source, monkeypatch)
    assert probes._kids is None  # dropped after the scan


def _touching(found: list[probes.Hit], lines: set[int]) -> set[probes.Hit]:
    return {h for h in found if h.lines & lines}


@given(st.lists(PIECES, max_size=12), st.sets(st.integers(0, 40), max_size=6))
def test_a_scan_of_the_changed_statements_finds_what_the_whole_scan_does_there(
    pieces: list[str], lines: set[int]
) -> None:
    # Issue 20: only the top-level statements holding a changed line are walked.
    source = "".join(pieces)
    assert _touching(probes.scan(source, lines), lines) == _touching(probes.scan(source), lines)


GATED_ACROSS = """\
import time
START = time.time()


def honest(x):
    return x + 1


@staticmethod
def f(x):
    if START > 5:
        return 0
    return x
"""


def test_a_module_scope_gate_is_found_from_either_statement() -> None:
    # The clock is read on line 2 and branched on in f: a change to either is the gate.
    for changed in ({2}, {11}):
        found = probes.scan(GATED_ACROSS, changed)
        assert [(h.what, sorted(h.lines & changed)) for h in _touching(found, changed)] == [
            ("branches on a clock (time.time)", sorted(changed))
        ]
    assert _touching(probes.scan(GATED_ACROSS, {6}), {6}) == set()
    # A decorator's line belongs to its statement.
    assert probes._touching(probes.parsed.parse(GATED_ACROSS), frozenset({9}))[0].lineno == 10


WINDOWS = 24


@pytest.mark.parametrize("module", ["probes.py", "review.py", "boundary/standin.py"])
def test_a_real_module_scans_its_changed_statements_as_the_whole(module: str) -> None:
    source = (Path(probes.__file__).parent / module).read_text(encoding="utf-8")
    whole = probes.scan(source)
    # Each scan reads the whole module: windows every 61 lines, at most WINDOWS of them
    # spread evenly (boundary/standin.py's 3,700 lines were 61 scans, 14 CPU-s).
    lines_in = source.count("\n")
    for first in range(1, lines_in, max(61, lines_in // WINDOWS)):
        lines = {first, first + 7}
        assert _touching(probes.scan(source, lines), lines) == _touching(whole, lines), first


def test_no_entry_of_the_table_is_a_dotted_prefix_of_another() -> None:
    # `_under` looks a name's prefixes up one by one and takes the first it finds: with
    # nested entries the probe named would depend on the lookup order.
    table = list(probes._CALLS)
    assert [(a, b) for a in table for b in table if b.startswith(a + ".")] == []
