"""issue 19: which venv each nox session installs the project into, and which it runs the code with.

Recorded, not run (tests/nox_recorder.py): the judge's venv (`session.install`)
gets pinned constraints and patchjudge only; what `[gate] install` names goes
into the code's venv, whose python every command that runs the code is given.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from patchjudge import codeenv
from patchjudge.boundary import sandbox
from patchjudge.scaffold import template
from tests.attack_helpers import require_sandbox
from tests.unit.test_nox_constraints import recorded

ROOT = Path(__file__).resolve().parents[2]
# The commands that run the code under test, and so take --python.
RUNS_CODE = {"pathfilter", "freeze", "properties", "replay", "flakes", "oracle"}


# init's noxfile runs patchjudge from the session's venv, which has no console script.
FROM_VENV = ["python", "-P", "-m", "patchjudge"]


def _commands(calls: list[dict[str, Any]]) -> list[list[str]]:
    found = []
    for c in calls:
        args = c["args"]
        if c["method"] == "run" and args[:4] == FROM_VENV:
            args = ["patchjudge", *args[4:]]
        if c["method"] == "run" and args[:1] == ["patchjudge"]:
            found.append(args)
    return found


def _code_python(args: list[str]) -> str:
    return args[args.index("--python") + 1]


@pytest.fixture(scope="module")
def init_sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    project = tmp_path_factory.mktemp("project")
    (project / "eval").mkdir()
    (project / "eval" / "gate.toml").write_text('[gate]\ninstall = ["."]\n')
    (project / "noxfile.py").write_text(template("init/noxfile.py.tmpl"))
    return recorded(project / "noxfile.py")


@pytest.mark.parametrize("name", ["flakes", "oracle", "freeze", "gate-properties", "replay-run"])
def test_inits_sessions_run_the_code_with_the_codes_venv(
    init_sessions: dict[str, list[dict[str, Any]]], name: str
) -> None:
    commands = _commands(init_sessions[name])
    assert commands, init_sessions[name]
    for args in commands:
        assert args[1] in RUNS_CODE or args[1:3] == ["replay", "run"], args
        assert _code_python(args).endswith("/code/bin/python"), args


def test_inits_judge_venvs_never_get_the_project(
    init_sessions: dict[str, list[dict[str, Any]]],
) -> None:
    into_judge = [args for calls in init_sessions.values() for args in _into(calls, "/_judge/")]
    assert into_judge, init_sessions
    for args in into_judge:
        # Pins with hashes, or patchjudge itself from its pin file.
        assert "--require-hashes" in args or any(a.endswith("patchjudge.txt") for a in args), args
    # Nothing of the project goes in through nox's own installer either.
    assert not [c for calls in init_sessions.values() for c in calls if c["method"] == "install"]


def test_inits_judge_venv_is_built_once_per_nox_run_for_every_session(
    init_sessions: dict[str, list[dict[str, Any]]],
) -> None:
    # issue 19: one judge venv a nox run (each session's own venv reaches it by a .pth),
    # and beside it one lane runtime (session 12).
    builds = [
        (name, Path(c["args"][-1]).name)
        for name, calls in init_sessions.items()
        for c in calls
        if c["method"] == "run" and "venv" in c["args"][1:3] and "/_judge/" in c["args"][-1]
    ]
    assert sorted(builds) == [("pathfilter", "judge"), ("pathfilter", "lane")], builds
    # patchjudge runs from the session's venv with -P: the checkout shadows nothing.
    for name in ("gate", "fixtures", "gate-freeze", "flakes", "replay-verdict"):
        runs = [c["args"] for c in init_sessions[name] if c["method"] == "run"]
        judged = [a for a in runs if "patchjudge" in a[:4] or "patchjudge.boxbuild" in a]
        assert judged and all(a[:3] == ["python", "-P", "-m"] for a in judged), (name, judged)


def _into(calls: list[dict[str, Any]], where: str) -> list[list[str]]:
    """What a run installs into a venv whose python's path holds `where`."""
    return [
        c["args"]
        for c in calls
        if c["method"] == "run"
        and "install" in c["args"]
        and any(where in a and a.endswith("/bin/python") for a in c["args"])
    ]


def _installs(calls: list[dict[str, Any]]) -> list[list[str]]:
    return [c["args"] for c in calls if c["method"] == "install"]


def _into_code(calls: list[dict[str, Any]]) -> list[list[str]]:
    """What went into the code's venv: `uv pip install --python <code>` or `<code> -m pip`."""
    found = []
    for call in calls:
        args = call["args"]
        if (
            call["method"] == "run"
            and "install" in args
            and any(a.endswith("/code/bin/python") for a in args)
        ):
            found.append(args)
    return found


@pytest.fixture(scope="module")
def own_sessions() -> dict[str, list[dict[str, Any]]]:
    return recorded(ROOT / "noxfile.py")


@pytest.mark.parametrize("name", ["flakes", "oracle", "freeze", "gate-properties", "replay-run"])
def test_this_repos_sessions_run_the_code_with_the_codes_venv(
    own_sessions: dict[str, list[dict[str, Any]]], name: str
) -> None:
    commands = _commands(own_sessions[name])
    assert commands, own_sessions[name]
    for args in commands:
        assert _code_python(args).endswith("/code/bin/python"), args


@pytest.mark.parametrize("name", ["freeze", "gate-pathfilter", "flakes"])
def test_this_repos_judge_gets_patchjudge_and_the_code_gets_the_project(
    own_sessions: dict[str, list[dict[str, Any]]], name: str
) -> None:
    calls = own_sessions[name]
    # The judge's venv: the lane runtime with hashes, then patchjudge's wheel, no deps.
    pins, judge = _installs(calls)
    assert "--require-hashes" in pins and str(ROOT / "constraints" / "lane.txt") in pins
    assert judge[0] == "--no-deps" and "/.nox/_wheels/" in judge[1], judge
    # The code's venv: the suite's own pins, then `[gate] install` (this tree) as a wheel.
    code_pins, project = _into_code(calls)
    assert str(ROOT / "constraints" / f"{name.removeprefix('gate-')}.txt") in code_pins
    assert "--no-deps" in project and any("/.nox/_wheels/" in a for a in project), project


def test_a_patchjudge_tree_named_from_elsewhere_is_the_judge_not_the_code(
    tmp_path: Path,
) -> None:
    # As test_nox's repositories use it: `[gate] install = [<patchjudge's source>]`
    # installs the judge; the project itself is on the ledger's pythonpath.
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "gate.toml").write_text(f'[gate]\ninstall = ["{ROOT}"]\n')
    (tmp_path / "noxfile.py").write_text((ROOT / "noxfile.py").read_text())
    calls = recorded(tmp_path / "noxfile.py")["gate-freeze"]
    assert [a[0] for a in _installs(calls)] == ["--require-hashes", "--no-deps"]
    assert len(_into_code(calls)) == 1  # the pins only: no wheel of patchjudge there


def test_inits_code_venv_is_built_once_per_nox_run_and_copied_into_each_lane(
    init_sessions: dict[str, list[dict[str, Any]]],
) -> None:
    # issue 19: one build of the code's venv per nox run; every lane gets a copy.
    builds = [
        name
        for name, calls in init_sessions.items()
        for c in calls
        if c["method"] == "run" and "venv" in c["args"][1:3] and "/_code/" in c["args"][-1]
    ]
    assert len(builds) == 1, builds
    # One path for every lane's copy (each lane removes its own after it): a lane
    # hands its suite pass on (sharefile) and the interpreter is part of its key.
    pythons = {
        name: {_code_python(a) for a in _commands(init_sessions[name])}
        for name in ("gate-freeze", "gate-properties", "flakes")
    }
    (python,) = set().union(*pythons.values())
    assert "/.nox/_code/" in python and python.endswith("/lane/code/bin/python"), pythons


def test_only_the_gates_lanes_hand_results_on(
    init_sessions: dict[str, list[dict[str, Any]]],
) -> None:
    # The fixtures lane runs in the verdict's process (it hands nothing on).
    for name in ("pathfilter", "freeze", "properties", "replay"):
        (gate_lane,) = _commands(init_sessions[f"gate-{name}"])
        outs = [a for a in gate_lane if a.startswith("--share-out=")]
        assert outs == [f"--share-out={outs[0].removeprefix('--share-out=')}"], gate_lane
        assert outs[0].endswith(f"/_shared/{outs[0].split('/')[-2]}/{name}.pickle"), outs
        (alone,) = _commands(init_sessions[name])
        assert not [a for a in alone if a.startswith("--share")], alone


def _bytecode_runs(calls: list[dict[str, Any]]) -> list[int]:
    return [i for i, c in enumerate(calls) if "patchjudge.bytecode" in c["args"]]


def _installs_into(calls: list[dict[str, Any]], where: str) -> list[int]:
    return [i for i, c in enumerate(calls) if c["args"] in _into(calls, where)]


def test_inits_judge_venv_gets_its_bytecode_before_any_code_of_the_patch_runs(
    init_sessions: dict[str, list[dict[str, Any]]],
) -> None:
    # issue 19: uv writes no .pyc and the lanes write none, so without this each
    # lane process compiled pytest, hypothesis and patchjudge again.
    (first,) = [n for n, calls in init_sessions.items() if _bytecode_runs(calls)]
    calls = init_sessions[first]
    (judge,) = _bytecode_runs(calls)
    # By the judge venv's own interpreter, -P (the checkout shadows nothing), into
    # itself and the lane runtime beside it, once everything is installed there.
    args = calls[judge]["args"]
    assert "/.nox/_judge/" in args[0] and args[0].endswith("/bin/python"), args
    assert args[1:4] == ["-P", "-m", "patchjudge.bytecode"], args
    sites = [Path(a) for a in args[4:6]]
    venv = Path(args[0]).parent.parent
    assert [s.relative_to(venv.parent).parts[0] for s in sites] == ["judge", "lane"], args
    assert all(s.name == "site-packages" for s in sites), args
    assert max(_installs_into(calls, "/_judge/")) < judge
    # Kept across runs in the judge's cache, as the lanes' isolation allows, with
    # the build backends the boxed build imports (issue 19, session 12).
    flags = dict(zip(args[6::2], args[7::2], strict=True))
    assert flags.keys() == {"--cache-for", "--build", "--ledger-isolation", "--isolation"}, args
    assert flags["--build"].endswith("/constraints/build.txt"), args
    assert Path(flags["--cache-for"], "noxfile.py").is_file(), args
    # Before the project's build (the first of the patch's code to run) and install.
    built = [i for i, c in enumerate(calls) if "patchjudge.boxbuild" in c["args"]]
    assert judge < min(built + _installs_into(calls, "/_code/")), calls
    # Once per nox run: the other sessions reach the same venv through their .pth.
    assert all(not _bytecode_runs(c) for n, c in init_sessions.items() if n != first)


def test_inits_lane_runtime_is_installed_once_a_run_and_reached_by_the_judge_and_the_code(
    init_sessions: dict[str, list[dict[str, Any]]],
) -> None:
    # issue 19, session 12: the code's venv installed lane.txt a second time (~900
    # files, the largest part of a cold run's installs). Now one venv holds it, and
    # the judge's venv and the code's reach it by a .pth, after their own packages.
    lane_txt = [
        (name, args)
        for name, calls in init_sessions.items()
        for args in _into(calls, "/")
        if any(a.endswith("/constraints/lane.txt") for a in args)
    ]
    assert len(lane_txt) == 1, lane_txt
    name, args = lane_txt[0]
    runtime = Path(next(a for a in args if a.endswith("/bin/python"))).parent.parent
    assert runtime.name == "lane" and runtime.parent.parent.name == "_judge", args
    (site,) = runtime.glob("lib/python*/site-packages")
    reach = f"import site; site.addsitedir({str(site)!r})\n"
    judge = runtime.parent / "judge"
    code = runtime.parents[2] / "_code" / "lane" / "code"
    for venv in (judge, code):
        (pth,) = venv.glob(f"lib/python*/site-packages/{codeenv.LANE_PTH}")
        assert pth.read_text() == reach, venv
    # The code's venv reaches the runtime only: never the judge's venv.
    written = [p.read_text() for p in code.rglob("*.pth")]
    assert written == [reach], written
    assert not [a for a in _into(init_sessions[name], "/_code/") if "lane.txt" in str(a)]


def _recorded_with(tmp_path: Path, isolation: str) -> tuple[Path, dict[str, list[dict[str, Any]]]]:
    project = tmp_path / isolation
    (project / "eval").mkdir(parents=True)
    ledger = f'[gate]\ninstall = ["."]\nisolation = "{isolation}"\n'
    (project / "eval" / "gate.toml").write_text(ledger)
    (project / "noxfile.py").write_text(template("init/noxfile.py.tmpl"))
    return project, recorded(project / "noxfile.py")


def test_a_boxed_runs_lanes_take_the_one_code_venv_and_an_unboxed_runs_a_copy_each(
    tmp_path: Path,
) -> None:
    # issue 19, session 12: with isolation "sandbox" every process that runs the code
    # binds its venv read-only (tests/scenarios/test_code_venv.py), so the venv is
    # built once where every lane names it and no lane gets (or removes) a copy.
    def built(sessions: dict[str, list[dict[str, Any]]]) -> list[str]:
        return [
            c["args"][-1]
            for calls in sessions.values()
            for c in calls
            if c["method"] == "run" and "venv" in c["args"][1:3] and "/_code/" in c["args"][-1]
        ]

    boxed, sessions = _recorded_with(tmp_path, "sandbox")
    lane = boxed / ".nox" / "_code" / "lane" / "code"
    assert built(sessions) == [str(lane)]
    assert {_code_python(a) for a in _commands(sessions["gate-freeze"])} == {
        str(lane / "bin" / "python")
    }
    # Still there after every lane ran: the next lane takes it as built.
    assert (lane / "lib").is_dir()
    assert [p.name for p in (boxed / ".nox" / "_code").iterdir()] == ["lane"]
    # Unboxed ("auto" may fall back; "process" never boxes): a copy a lane, removed after it.
    for isolation in ("auto", "process"):
        unboxed, sessions = _recorded_with(tmp_path, isolation)
        (first,) = built(sessions)
        assert first == str(next((unboxed / ".nox" / "_code").glob("[0-9a-f]*/code"))), first


def test_a_box_the_isolation_session_started_spares_each_lane_its_probe(tmp_path: Path) -> None:
    # issue 19, session 12: with "sandbox" the `isolation` session starts a box
    # before any lane; every patchjudge process of the run is told so and skips
    # its own probe. Not with "auto", whose choice is each process's probe.
    require_sandbox()
    told = {sandbox.STARTED: "1"}
    _, sessions = _recorded_with(tmp_path, "sandbox")
    ours = [
        c
        for name, calls in sessions.items()
        for c in calls
        if c["method"] == "run"
        and (name.startswith("gate") or "patchjudge.boxbuild" in c["args"])
        and c["args"][:3] == ["python", "-P", "-m"]
    ]
    assert {c["args"][3] for c in ours} == {"patchjudge.boxbuild", "patchjudge"}, ours
    assert all(c.get("env") == told for c in ours), ours
    for isolation in ("auto", "process"):
        _, sessions = _recorded_with(tmp_path, isolation)
        assert not [c for calls in sessions.values() for c in calls if c.get("env")], isolation


def _noxfile_module(project: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """init's noxfile, written into `project` and imported; its sessions register in a
    registry of this test's own, not nox's."""
    import importlib.util

    import nox.registry

    monkeypatch.setattr(nox.registry, "_REGISTRY", {})
    # The noxfile sets VIRTUALENV_NO_SEED at import: in this xdist worker's own environment it
    # made a later test's tox build venvs with no pip (CI, where tox runs `pip freeze`).
    monkeypatch.setattr(os, "environ", dict(os.environ))

    (project / "eval").mkdir(parents=True)
    (project / "eval" / "gate.toml").write_text('[gate]\nisolation = "sandbox"\n')
    (project / "noxfile.py").write_text(template("init/noxfile.py.tmpl"))
    spec = importlib.util.spec_from_file_location("inits_noxfile", project / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "env",
    [
        {"HOME": "/home/u"},
        {"HOME": "/home/u", "XDG_CACHE_HOME": "/var/cache/u"},
        {"PATCHJUDGE_CACHE_DIR": "/srv/judge-cache"},
        {"PATCHJUDGE_CACHE_DIR": ""},
        {"PATCHJUDGE_CACHE_DIR": "relative/cache"},
        {"PATCHJUDGE_CACHE_DIR": "{project}/.cache"},
        {},
    ],
    ids=["home", "xdg", "explicit", "off", "relative", "inside the checkout", "no home"],
)
def test_inits_kept_judge_venvs_live_where_patchjudge_keeps_its_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    # The noxfile runs where patchjudge may not import, so it repeats cache.placement's
    # rules (noxcold4): the two must name the same directory, or none.
    from patchjudge import cache

    project = tmp_path / "project"
    noxfile = _noxfile_module(project, monkeypatch)
    env = {k: v.format(project=project) for k, v in env.items()}
    for name in ("HOME", "XDG_CACHE_HOME", cache.ENV):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    placed = cache.placement(env, project, "sandbox")
    expected = None if placed is None else placed / "venvs"
    assert noxfile._kept_root(["--isolation", "sandbox"]) == expected
    assert noxfile._kept_root([]) == expected  # the ledger asks for "sandbox"


def test_inits_kept_judge_venvs_are_pruned_to_the_most_recently_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each change of constraints keys a new kept venv (~32 MB): without pruning they pile up.
    noxfile = _noxfile_module(tmp_path / "project", monkeypatch)
    root = tmp_path / "venvs"
    root.mkdir()
    now = 10 * 86_400.0
    ages = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "busy": 0.5}  # days since last use
    for name, days in ages.items():
        (root / f"{name}-run").mkdir()
        (root / f"{name}-run" / "judge").write_text("venv")
        record = root / f"{name}.json"
        record.write_text(json.dumps({"dir": f"{name}-run", "entries": {}}))
        os.utime(record, (now - days * 86_400,) * 2)
    (root / "crashed-run").mkdir()  # a build that never wrote its record
    os.utime(root / "crashed-run", (now - 2 * 86_400,) * 2)
    (root / "building-run").mkdir()  # another run's build, under way
    os.utime(root / "building-run", (now - 60,) * 2)
    noxfile._prune_kept(root, now)
    # The three most recently used stay (one used within the day among them); the rest go.
    assert sorted(p.name for p in root.iterdir()) == [
        "building-run", "busy-run", "busy.json", "c-run", "c.json", "d-run", "d.json",
    ]  # fmt: skip
    # A venv used within the day is never dropped, whatever its rank.
    monkeypatch.setattr(noxfile, "KEPT_VENVS", 0)
    noxfile._prune_kept(root, now)
    assert sorted(p.name for p in root.iterdir()) == ["building-run", "busy-run", "busy.json"]


@pytest.mark.parametrize("name", ["..", ".", "", "../sibling", "/abs", "sub/dir", ["x"], None])
def test_a_damaged_kept_venv_record_never_reaches_beyond_its_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: object
) -> None:
    # `root / ".."` has `root` as its parent: a check on `.parent` alone let a record
    # naming ".." send the prune's rmtree to the cache's own parent.
    noxfile = _noxfile_module(tmp_path / "project", monkeypatch)
    outside = tmp_path / "cache"
    root = outside / "venvs"
    (outside / "sibling").mkdir(parents=True)
    (outside / "sibling" / "keep").write_text("not the judge's")
    root.mkdir()
    (root / "venv-run").mkdir()
    record = root / "old.json"
    record.write_text(json.dumps({"dir": name, "entries": {}}))
    (root / "link-run").symlink_to(outside / "sibling")
    linked = root / "linked.json"
    linked.write_text(json.dumps({"dir": "link-run", "entries": {}}))
    now = 10 * 86_400.0
    for old in (record, linked):
        os.utime(old, (now - 5 * 86_400,) * 2)
    monkeypatch.setattr(noxfile, "KEPT_VENVS", 0)
    assert noxfile._kept_dir(root, json.loads(record.read_text())) is None
    assert noxfile._kept_dir(root, {"dir": "link-run"}) is None
    assert noxfile._kept_dir(root, {"dir": "venv-run"}) == root / "venv-run"
    noxfile._prune_kept(root, now)
    assert (outside / "sibling" / "keep").read_text() == "not the judge's"
    assert root.is_dir() and not record.exists() and not linked.exists()


def test_inits_gate_runs_the_fixtures_lane_in_the_verdicts_process(
    init_sessions: dict[str, list[dict[str, Any]]],
) -> None:
    # issue 19: the fixtures lane runs none of the code; a session and a process of its
    # own cost ~0.3 CPU-s of a cold run and isolated nothing.
    assert "gate-fixtures" not in init_sessions and "fixtures" in init_sessions
    (verdict,) = [c for c in _commands(init_sessions["gate"]) if c[1] == "verdict"]
    assert "--with-lane=fixtures" in verdict and "--only-expected" in verdict, verdict
    # The public lane session still runs it on its own.
    assert [c[1] for c in _commands(init_sessions["fixtures"])] == ["fixtures"]


@pytest.mark.parametrize("collects", [False, True], ids=["empty slice", "nodeids"])
def test_inits_gate_hands_replay_to_the_verdict_only_while_its_slice_collects_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collects: bool
) -> None:
    import nox.registry

    from tests.helpers import commit, git, write
    from tests.nox_recorder import RecordingSession

    project = tmp_path / "project"
    monkeypatch.setenv("PATCHJUDGE_CACHE_DIR", "")
    _noxfile_module(project, monkeypatch)
    ledger = '[gate]\nisolation = "sandbox"\n'
    if collects:  # the base's ledger decides, as the lane reads it
        ledger += '[replay]\nnodeids = ["tests/test_x.py::test_y"]\n'
    write(project, {"eval/gate.toml": ledger})
    git(project, "init", "-q", "-b", "main")
    commit(project, "base")
    git(project, "checkout", "-q", "-b", "patch")
    sessions = nox.registry.get()
    ran: dict[str, list[list[str]]] = {}
    for name in ("gate-replay", "gate"):
        session = RecordingSession(name, project)
        session.posargs = ["--base", "main"]
        try:
            sessions[name](session)
        finally:
            session._own.cleanup()  # its venv's stand-in
        ran[name] = _commands(session.calls)
    (verdict,) = [c for c in ran["gate"] if c[1] == "verdict"]
    here = [a for a in verdict if a.startswith("--with-lane=")]
    if collects:
        assert [c[1] for c in ran["gate-replay"]] == ["replay"], ran
        assert "--python" in ran["gate-replay"][0]
        assert here == ["--with-lane=fixtures"], verdict
    else:
        assert ran["gate-replay"] == [], ran  # no lane process, no venv built
        assert here == ["--with-lane=fixtures", "--with-lane=replay"], verdict


@pytest.mark.parametrize("isolation", ["sandbox", "auto"])
def test_only_a_boxed_gate_runs_freeze_and_properties_in_pathfilters_process(
    tmp_path: Path, isolation: str
) -> None:
    # issue 19: boxed, no process of the code reaches the judge's; a lane's own process
    # was ~0.2 CPU-s of a ~3 CPU-s cold run. "auto" may run unboxed: apart.
    _, sessions = _recorded_with(tmp_path, isolation)
    (pathfilter,) = _commands(sessions["gate-pathfilter"])
    then = [a for a in pathfilter if a.startswith("--then-lane")]
    boxed = ["--then-lane=freeze", "--then-lane=properties"]
    assert then == (boxed if isolation == "sandbox" else []), pathfilter
    # No report came back (the recorder prints nothing): each session runs its lane itself.
    assert [c[1] for c in _commands(sessions["gate-freeze"])] == ["freeze"]
    assert [c[1] for c in _commands(sessions["gate-properties"])] == ["properties"]
    # The public lane session runs pathfilter alone.
    (alone,) = _commands(sessions["pathfilter"])
    assert not [a for a in alone if a.startswith("--then-lane")], alone


@pytest.mark.parametrize(
    "printed", ["all reports", "freeze's missing", "properties' missing", "gate-freeze skipped"]
)
def test_gate_freeze_and_properties_count_the_reports_pathfilters_process_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, printed: str
) -> None:
    import nox.registry

    from tests.nox_recorder import RecordingSession

    project = tmp_path / "project"
    monkeypatch.setenv("PATCHJUDGE_CACHE_DIR", "")
    _noxfile_module(project, monkeypatch)
    reports = project / ".patchjudge"
    mine, theirs, props = "a" * 64, "b" * 64, "c" * 64
    # Printed by the tested code before the lanes' own lines: never counted.
    said = [f"report: {reports}/freeze.json sha256={'f' * 64}", "patchjudge pathfilter: pass"]
    said.append(f"report: {reports}/pathfilter.json sha256={mine}")
    if printed != "freeze's missing":
        said.append(f"report: {reports}/freeze.json sha256={theirs}")
    if printed != "properties' missing":
        said.append(f"report: {reports}/properties.json sha256={props}")

    class Printing(RecordingSession):
        def run(self, *args: Any, **kwargs: Any) -> str:
            super().run(*args, **kwargs)
            return "\n".join(said) + "\n" if "pathfilter" in args else ""

    sessions = nox.registry.get()
    ran: dict[str, list[list[str]]] = {}
    names = ["gate-pathfilter", "gate-freeze", "gate-properties", "gate"]
    for name in names if printed != "gate-freeze skipped" else names[::2] + names[3:]:
        session = Printing(name, project)
        session.posargs = ["--base", "main"]
        try:
            sessions[name](session)
        finally:
            session._own.cleanup()  # its venv's stand-in
        ran[name] = _commands(session.calls)
    (verdict,) = ran["gate"]
    expect = sorted(a for a in verdict if a.startswith("--expect="))
    every = [f"--expect=freeze={theirs}", f"--expect=pathfilter={mine}"]
    every.append(f"--expect=properties={props}")
    if printed == "all reports":
        # No process: the lanes ran in pathfilter's.
        assert ran["gate-freeze"] == ran["gate-properties"] == [], ran
        assert expect == every, verdict
    elif printed == "gate-freeze skipped":
        # The lane's session hands its digest on: skipped (nox counts that a success),
        # the lane is missing to the verdict, never a pass.
        assert ran["gate-properties"] == [], ran
        assert expect == [every[1], every[2]], verdict
    else:
        # Not the three lines asked for, last and in order: none counts, and the freeze
        # and properties lanes run in processes of their own (pathfilter is missing).
        assert [c[1] for c in ran["gate-freeze"]] == ["freeze"], ran
        assert [c[1] for c in ran["gate-properties"]] == ["properties"], ran
        assert expect == [], verdict
