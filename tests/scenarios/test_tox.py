"""`patchjudge init --runner tox`: the same lanes as tox environments, really run by tox."""

from __future__ import annotations

import configparser
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from patchjudge import codeenv, scaffold
from patchjudge.config import LEDGER, parse_ledger
from tests.attack_helpers import require_sandbox
from tests.helpers import cli, commit, git, verdict, write
from tests.init_helpers import flat_project, run, spec, unmapped_tracked

TOX = [sys.executable, "-m", "tox"]
LANES = ("pathfilter", "fixtures", "freeze", "properties", "replay")


def test_tox_ini_holds_every_lane_the_gate_and_flakes_and_is_protected(tmp_path, judge_wheel):
    repo = flat_project(tmp_path / "calc")
    result = cli(repo, "init", "--runner", "tox", *spec(judge_wheel))
    assert result.code == 0, result.err
    assert "tox -e gate -- --base main" in result.out
    assert not (repo / "noxfile.py").exists()
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(repo / "tox.ini")
    for env in (*LANES, "gate", "flakes"):
        assert ini.has_section(f"testenv:{env}"), env
    pre = ini["testenv"]["commands_pre"]
    assert "--require-hashes -r {tox_root}{/}constraints{/}lane.txt" in pre
    assert "constraints{/}patchjudge.txt" in pre
    # Nothing installs from anywhere but constraints/ (and the project's wheel, built in
    # the box and installed into the code's venv with no deps: issue 19).
    # The code's venv has no pip (issue 20): the environment's pip installs into it.
    for line in filter(None, (x.strip() for x in pre.splitlines())):
        if line.startswith("python -m pip ") and " install " in line:
            assert "{tox_root}{/}constraints{/}" in line, line
    assert "python -m venv --clear --without-pip {env_dir}{/}code" in pre
    into_code = "python -m pip --python {env_dir}{/}code{/}bin{/}python install -q"
    assert pre.count(into_code) == 1, pre  # the project's pins; the lane runtime by a .pth
    assert "{env_dir}{/}code{/}bin{/}python -m pip" not in pre
    # The lane runtime once, into a venv of its own, never into the environment.
    assert pre.count("constraints{/}lane.txt") == 1, pre
    assert "--python {env_dir}{/}lane{/}bin{/}python install -q --require-hashes -r" in pre
    commands = ini["testenv"]["commands"] + ini["testenv:gate"]["commands"]
    assert commands.count("--python {env_dir}{/}code{/}bin{/}python") == 2, commands
    assert ini["testenv"]["skip_install"] == "true"
    ledger = parse_ledger((repo / LEDGER).read_bytes())
    assert "tox.ini" in ledger.gate.protected
    commit(repo, "Adopt patchjudge")
    assert unmapped_tracked(repo) == []


def test_tox_ini_gives_the_lane_runtime_by_the_pth_codeenv_reads(tmp_path, judge_wheel):
    # issue 20: lane.txt is installed once a run into {env_dir}/lane, which the
    # environment and the code's venv reach by patchjudge-lane.pth; the line
    # tox.ini writes is the one patchjudge.codeenv reads as the code's site.
    repo = flat_project(tmp_path / "calc")
    assert cli(repo, "init", "--runner", "tox", *spec(judge_wheel)).code == 0
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(repo / "tox.ini")
    (line,) = [x for x in ini["testenv"]["commands_pre"].splitlines() if "-lane.pth" in x]
    env = tmp_path / "env"
    for venv in (env, env / "lane", env / "code"):
        made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
        assert made.returncode == 0, made.stderr
    argv = shlex.split(line.replace("{env_dir}", str(env)).replace("{/}", "/"))
    assert argv[0] == "python"
    done = run([str(env / "bin" / "python"), *argv[1:]], tmp_path)
    assert done.returncode == 0, done.stderr
    lane = next(env.glob("lane/lib/python*/site-packages"))
    code = codeenv.resolve(str(env / "code" / "bin" / "python"))
    assert code.site[-1] == lane, code.site
    shown = run([str(env / "bin" / "python"), "-c", "import sys; print(sys.path)"], tmp_path)
    assert str(lane) in shown.stdout, shown.stdout


def test_tox_resolves_flakes_and_lane_commands_without_building_anything(tmp_path, judge_wheel):
    repo = flat_project(tmp_path / "calc")
    assert cli(repo, "init", "--runner", "tox", *spec(judge_wheel)).code == 0
    listed = run([*TOX, "list", "--no-desc"], repo)
    assert listed.returncode == 0, listed.stderr
    assert set(listed.stdout.split()) == {"gate", "flakes", *LANES, "replay-run", "replay-verdict"}
    shown = run([*TOX, "config", "-e", "flakes,properties", "-k", "commands"], repo)
    assert shown.returncode == 0, shown.stderr
    assert f"patchjudge flakes --repo {repo}" in shown.stdout
    assert f"patchjudge properties --repo {repo}" in shown.stdout
    # As CI runs it (toxci): the base's tox.ini from the head's checkout judges the
    # checkout tox started in, with the judge's constraints. Before, both were tox.ini's.
    commit(repo, "Adopt patchjudge")
    judge = tmp_path / "judge"
    git(repo, "worktree", "add", "-q", "--detach", str(judge), "HEAD")
    ci = [*TOX, "-c", str(judge / "tox.ini"), "config", "-e", "gate,replay-run,replay-verdict"]
    shown = run([*ci, "-k", "commands", "commands_pre"], repo)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count(f"--repo {repo.resolve()}") == 4, shown.stdout
    assert str(judge) not in shown.stdout.replace(f"{judge}/constraints", "").replace(
        f"{judge}/.tox/", ""
    ), shown.stdout


# calc with a second public name that its visible suite does not use.
MEAN = "def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return total(xs) / len(xs)\n"


def _recipe_lines(repo, *starts):
    """The shell lines of init's GitHub recipe that start with each of `starts`, in order."""
    lines = [x.strip() for x in (repo / scaffold.GITHUB_WORKFLOW).read_text().splitlines()]
    return [next(x for x in lines if x.startswith(s)) for s in starts]


@pytest.mark.slow
def test_the_tox_recipes_gate_judges_the_head_with_the_bases_tox_ini(tmp_path, judge_wheel):
    # One tox run, as CI makes it (toxci): the GitHub recipe's own lines add the judge's
    # worktree at the merge base elsewhere and run its tox.ini from the head's checkout.
    # The patch removes `mean`, which the suite never calls, and points the head's
    # constraints at a package no index has: the base's constraints install, the head
    # is judged and built (properties finds the name gone), the verdict rejects. Judging
    # the base's tree would find nothing gone; the head's constraints would not install.
    # A benign patch accepted through tox (local tox -e gate):
    # test_tox_installs_the_project_into_the_codes_venv_never_the_judges.
    require_sandbox()  # the recipe passes --isolation sandbox
    repo = flat_project(tmp_path / "calc")
    write(repo, {"calc/__init__.py": MEAN, "pyproject.toml": PYPROJECT})
    commit(repo, "mean, packaged")
    result = cli(repo, "init", "--runner", "tox", *spec(judge_wheel))
    assert result.code == 0, result.err
    assert "boxbuild {patchjudge_repo} " in (repo / "tox.ini").read_text()
    commit(repo, "Adopt patchjudge")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "patch")
    write(repo, {"calc/__init__.py": "def total(xs):\n    return sum(xs)\n"})
    write(repo, {"constraints/project.txt": "no-such-package-toxci==1.0\n"})
    commit(repo, "agent removes a public function and repins")
    judge, gate = _recipe_lines(repo, "git worktree add --detach", "tox -c ")
    runner = tmp_path / "runner"
    runner.mkdir()
    env = {"RUNNER_TEMP": str(runner), "BASE_SHA": base}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    bad = run(["bash", "-euc", f"{judge}\n{gate} --today 2026-12-01", "recipe"], repo, env=env)
    assert bad.returncode != 0, bad.stdout[-3000:] + bad.stderr[-3000:]
    v = verdict(repo)
    assert v["verdict"] == "reject", v
    assert v["lanes"]["properties"]["status"] == "fail"
    assert "public names gone: calc.mean" in json.dumps(v["lanes"]["properties"]), v
    # The head's own suite ran and passed, under tox, in the box.
    assert v["lanes"]["freeze"]["status"] == "pass", v
    # The code's venv holds the head's build, not the base's (which pathfilter would
    # find differs from the tree): its one complaint is the head's constraints edit.
    assert v["lanes"]["pathfilter"]["reasons"] == [
        "protected path changed: constraints/project.txt (modified) matches 'constraints/**'"
    ], v
    # tox's environments are the judge's, beside its tox.ini: none in the patch's tree.
    assert (runner / "judge" / ".tox" / "gate").is_dir()
    assert not (repo / ".tox").exists()


def _tox(repo, *args, boxed):
    """tox in the repo, inside a box with no user namespaces when `boxed` (bwrap cannot start)."""
    argv = [*TOX, *args]
    if boxed:
        require_sandbox()
        bwrap = shutil.which("bwrap")
        assert bwrap is not None
        argv = [bwrap, "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--", *argv]
    return run(argv, repo, timeout=300)


def test_tox_with_sandbox_and_no_user_namespaces_stops_before_any_env(tmp_path, judge_wheel):
    # issue 19: as the nox `isolation` session does, toxfile.py (tox's inline
    # plugin) starts bwrap once before tox builds anything.
    repo = flat_project(tmp_path / "calc")
    assert cli(repo, "init", "--runner", "tox", *spec(judge_wheel)).code == 0
    assert "toxfile.py" in parse_ledger((repo / LEDGER).read_bytes()).gate.protected
    commit(repo, "Adopt patchjudge")
    result = _tox(repo, "-e", "gate", "--", "--base", "main", "--isolation", "sandbox", boxed=True)
    assert result.returncode != 0
    said = [line for line in result.stderr.splitlines() if "isolation 'sandbox' but" in line]
    said += [line for line in result.stdout.splitlines() if "isolation 'sandbox' but" in line]
    assert len(said) == 1, result.stdout + result.stderr
    assert "--isolation: isolation 'sandbox' but bwrap cannot start a sandbox here" in said[0]
    assert "no environment was built" in said[0]
    assert not (repo / ".tox").exists() or not any((repo / ".tox").glob("*/pyvenv.cfg"))


def test_tox_lists_and_runs_where_a_sandbox_starts(tmp_path, judge_wheel):
    """The honest look-alike: the check passes where bubblewrap works, and listing never asks."""
    require_sandbox()
    repo = flat_project(tmp_path / "calc")
    assert cli(repo, "init", "--runner", "tox", *spec(judge_wheel)).code == 0
    commit(repo, "Adopt patchjudge")
    listed = _tox(repo, "list", "--no-desc", "--", "--isolation", "sandbox", boxed=True)
    assert listed.returncode == 0, listed.stderr
    # With the base a gate names: the plugin also holds the judge's settings here to the
    # merge base's, and without a base it cannot (session 13).
    notest = ("run", "-e", "gate", "--notest", "--", "--base", "main", "--isolation", "sandbox")
    built = _tox(repo, *notest, boxed=False)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (repo / ".tox" / "gate").is_dir()


PYPROJECT = """\
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1"

[tool.setuptools]
packages = ["calc"]
"""


@pytest.mark.slow
def test_tox_installs_the_project_into_the_codes_venv_never_the_judges(tmp_path, judge_wheel):
    # issue 19: the project's wheel is built in the box and goes into {env_dir}/code,
    # which the lanes are given as --python; the judge's environment never has it.
    wheel = judge_wheel
    repo = flat_project(tmp_path / "calc")
    write(repo, {"pyproject.toml": PYPROJECT})
    commit(repo, "packaged")
    result = cli(repo, "init", "--runner", "tox", *spec(wheel))
    assert result.code == 0, result.err
    with (repo / "eval" / "gate.toml").open("a") as fh:
        fh.write('\n[review]\nunexercised = "report"\n')
    commit(repo, "Adopt patchjudge")
    git(repo, "checkout", "-q", "-b", "patch")
    write(repo, {"calc/__init__.py": "def total(xs):\n    return sum(list(xs))\n"})
    commit(repo, "trivial")
    good = run([*TOX, "-e", "gate", "--", "--base", "main", "--today", "2026-12-01"], repo)
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr[-3000:]
    assert verdict(repo)["verdict"] == "accept_for_review"
    env = repo / ".tox" / "gate"
    judges = {p.name.split("-")[0] for p in env.glob("lib/python*/site-packages/*.dist-info")}
    codes = {p.name.split("-")[0] for p in env.glob("code/lib/python*/site-packages/*.dist-info")}
    assert "patchjudge" in judges and "calc" not in judges, judges
    assert "calc" in codes and "patchjudge" not in codes, codes
    # The lane runtime once, in a venv of its own that both reach by a .pth (issue 20).
    lane = {p.name.split("-")[0] for p in env.glob("lane/lib/python*/site-packages/*.dist-info")}
    assert "pytest" in lane and not {"pytest", "hypothesis"} & (judges | codes), (judges, codes)
