"""The CI recipes: valid YAML, the three-job graph, and only nox sessions the judge defines."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from patchjudge import scaffold

# The lanes collect this suite in a venv pinned by constraints/lane.txt, which
# has no PyYAML: a skip there, not a collection error that fails every patch.
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = resources.files("patchjudge") / "templates" / "ci"
# Noxfiles a recipe may meet: this project's, and the one `patchjudge init` writes.
NOXFILES = [
    p
    for p in (ROOT / "noxfile.py", ROOT / "src/patchjudge/templates/init/noxfile.py.tmpl")
    if p.exists()
]
NOX_CALL = re.compile(r"\s*nox (?P<args>.*?)(?: -- |$)")


def load(name: str, replay_required: bool = True, runner: str = "nox") -> dict[str, Any]:
    """The recipe as init writes it (`replay_required`: the ledger's [replay] required)."""
    doc = yaml.safe_load(scaffold.ci_recipe(f"ci/{name}", runner, replay_required))
    assert isinstance(doc, dict)
    return doc


def github(runner: str = "nox") -> dict[str, Any]:
    return load("github-workflow.yml", runner=runner)


def gitlab(replay_required: bool = True, runner: str = "nox") -> dict[str, Any]:
    return load("gitlab-ci.yml", replay_required, runner)


def gh_scripts(job: dict[str, Any]) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def gl_jobs(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in doc.items() if k.startswith("patchjudge:")}


def gl_scripts(doc: dict[str, Any], name: str) -> list[str]:
    job = gl_jobs(doc)[name]
    template = doc[job["extends"]]
    return [*template.get("before_script", []), *job["script"]]


def nox_calls(scripts: list[str]) -> list[str]:
    """The options of every nox command line, up to its `--`."""
    calls = []
    for script in scripts:
        for line in script.splitlines():
            m = NOX_CALL.match(line)
            if m:
                calls.append(m.group("args").strip())
    return calls


def sessions_called(scripts: list[str]) -> list[str]:
    return [re.search(r"-s (\S+)", call).group(1) for call in nox_calls(scripts)]  # type: ignore[union-attr]


@pytest.fixture(scope="module", params=NOXFILES, ids=lambda p: p.name)
def defined_sessions(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> set[str]:
    nox = shutil.which("nox", path=str(Path(sys.executable).parent)) or "nox"
    noxfile = tmp_path_factory.mktemp("nox") / "noxfile.py"
    noxfile.write_text(request.param.read_text())
    (noxfile.parent / "eval").mkdir()  # some noxfiles read the ledger at import
    listed = subprocess.run(
        [nox, "-f", str(noxfile), "--list"], capture_output=True, text=True, check=True
    ).stdout
    return set(re.findall(r"^[*-] (\S+)", listed, re.MULTILINE))


# --- GitHub Actions --------------------------------------------------------------


def test_github_job_graph() -> None:
    jobs = github()["jobs"]
    assert set(jobs) == {"local", "trusted-host", "verdict"}
    assert "needs" not in jobs["local"]
    assert jobs["trusted-host"]["needs"] == "local"
    assert set(jobs["verdict"]["needs"]) == {"local", "trusted-host"}
    # A skipped required check reads as green: the verdict runs whatever came before.
    assert jobs["verdict"]["if"] == "${{ always() }}"


def test_github_runs_on_pull_requests_with_a_read_only_token() -> None:
    doc = github()
    assert "pull_request" in doc[True]  # YAML 1.1 reads the key `on` as true
    assert doc["permissions"] == {"contents": "read"}
    jobs = doc["jobs"]
    assert jobs["trusted-host"]["permissions"] == {"contents": "read"}
    for job in jobs.values():
        assert job.get("permissions", {"contents": "read"}) == {"contents": "read"}


def test_github_trusted_host_is_a_separate_runner() -> None:
    jobs = github()["jobs"]
    assert jobs["trusted-host"]["runs-on"] != jobs["local"]["runs-on"]
    assert "vars.PATCHJUDGE_TRUSTED_RUNNER" in jobs["trusted-host"]["runs-on"]


def test_github_checks_out_the_head_without_credentials() -> None:
    for name, job in github()["jobs"].items():
        checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
        assert len(checkouts) == 1, name
        assert checkouts[0]["with"] == {
            "ref": "${{ env.HEAD_SHA }}",
            "fetch-depth": 0,
            "persist-credentials": False,
        }


def artifacts(job: dict[str, Any], action: str) -> list[str]:
    return [
        s["with"]["name"]
        for s in job["steps"]
        if s.get("uses", "").startswith(f"actions/{action}-artifact@")
    ]


def test_github_artifacts_flow_slice_out_receipt_back() -> None:
    jobs = github()["jobs"]
    assert artifacts(jobs["local"], "upload") == ["patchjudge-reports", "patchjudge-slice"]
    # Only the slice reaches the trusted host; only its receipt comes back.
    assert artifacts(jobs["trusted-host"], "download") == ["patchjudge-slice"]
    assert artifacts(jobs["trusted-host"], "upload") == ["patchjudge-receipt"]
    assert artifacts(jobs["verdict"], "download") == ["patchjudge-reports", "patchjudge-receipt"]
    slice_upload = next(
        s for s in jobs["local"]["steps"] if s.get("with", {}).get("name") == "patchjudge-slice"
    )
    assert slice_upload["with"]["path"] == ".patchjudge/replay-slice.txt"


def test_github_jobs_call_their_sessions() -> None:
    jobs = github()["jobs"]
    assert sessions_called(gh_scripts(jobs["local"])) == ["gate"]
    assert sessions_called(gh_scripts(jobs["trusted-host"])) == ["replay-run"]
    assert sessions_called(gh_scripts(jobs["verdict"])) == ["replay-verdict"]
    run = " ".join(gh_scripts(jobs["trusted-host"])[-1].split())
    assert '--slice "$RUNNER_TEMP/slice/replay-slice.txt"' in run
    assert "--receipt" in gh_scripts(jobs["verdict"])[-1]


def test_github_shell_parses() -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    for job in github()["jobs"].values():
        for script in gh_scripts(job):
            plain = re.sub(r"\$\{\{.*?\}\}", "x", script)
            subprocess.run([bash, "-n", "-c", plain], check=True)


# --- GitLab CI -----------------------------------------------------------------


def test_gitlab_stages_and_needs() -> None:
    doc = gitlab()
    jobs = gl_jobs(doc)
    assert doc["stages"] == ["patchjudge-local", "patchjudge-trusted", "patchjudge-verdict"]
    assert [j["stage"] for j in jobs.values()] == doc["stages"]
    needs = {name: [n["job"] for n in job.get("needs", [])] for name, job in jobs.items()}
    assert needs == {
        "patchjudge:local": [],
        "patchjudge:trusted-host": ["patchjudge:local"],
        "patchjudge:verdict": ["patchjudge:local", "patchjudge:trusted-host"],
    }
    assert all(n["artifacts"] for job in jobs.values() for n in job.get("needs", []))
    assert jobs["patchjudge:verdict"]["rules"][0]["when"] == "always"


def test_gitlab_trusted_host_is_a_separate_runner_and_takes_only_the_slice() -> None:
    doc = gitlab()
    jobs = gl_jobs(doc)
    trusted = jobs["patchjudge:trusted-host"]
    assert trusted["tags"] == ["patchjudge-trusted"]
    assert "tags" not in jobs["patchjudge:local"]
    script = trusted["script"]
    assert script.index("rm -rf .patchjudge") < next(
        i for i, line in enumerate(script) if "replay-run" in line
    )
    # The receipt travels in a directory of its own, not inside .patchjudge/.
    assert trusted["artifacts"]["paths"] == ["receipt/receipt.json"]
    assert "receipt/receipt.json" in " ".join(jobs["patchjudge:verdict"]["script"])


@pytest.mark.parametrize("runner", ["nox", "tox"])
def test_gitlab_passes_the_receipt_by_an_absolute_path(runner: str, tmp_path: Path) -> None:
    # nox and tox both run their commands in the judge's worktree (the noxfile's or
    # tox.ini's folder): a relative --receipt was looked up there and never found.
    project = tmp_path / "project"
    (project / "receipt").mkdir(parents=True)
    (project / "receipt" / "receipt.json").write_text("{}")
    script = gl_scripts(gitlab(runner=runner), "patchjudge:verdict")
    call = next(i for i, line in enumerate(script) if "replay-verdict" in line)
    shell = "\n".join(
        ["BASE_SHA=b", *[s for s in script[:call] if "receipt" in s or s.startswith("set --")]]
    )
    done = subprocess.run(
        ["sh", "-ec", shell + '\nprintf "%s\\n" "$@"'], cwd=project, capture_output=True, text=True,
        env={"CI_PROJECT_DIR": str(project), "PATH": "/usr/bin:/bin"}, check=True,
    )  # fmt: skip
    args = done.stdout.splitlines()
    receipt = Path(args[args.index("--receipt") + 1])
    assert receipt.is_absolute() and receipt.is_file(), args


def test_gitlab_jobs_call_the_same_sessions_as_github() -> None:
    doc = gitlab()
    gh = github()["jobs"]
    pairs = {"local": "patchjudge:local", "trusted-host": "patchjudge:trusted-host"}
    pairs["verdict"] = "patchjudge:verdict"
    for gh_name, gl_name in pairs.items():
        assert sessions_called(gl_scripts(doc, gl_name)) == sessions_called(gh_scripts(gh[gh_name]))


def test_gitlab_shell_parses() -> None:
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh")
    doc = gitlab()
    for name in gl_jobs(doc):
        subprocess.run([sh, "-n", "-c", "\n".join(gl_scripts(doc, name))], check=True)


# --- both ------------------------------------------------------------------------


def all_scripts(runner: str = "nox") -> list[tuple[str, list[str]]]:
    doc = gitlab(runner=runner)
    found = [(f"github:{n}", gh_scripts(j)) for n, j in github(runner)["jobs"].items()]
    return found + [(f"gitlab:{n}", gl_scripts(doc, n)) for n in gl_jobs(doc)]


def test_every_session_called_is_defined(defined_sessions: set[str]) -> None:
    for where, scripts in all_scripts():
        for session in sessions_called(scripts):
            assert session in defined_sessions, f"{where} calls nox -s {session}"


def test_every_nox_call_uses_the_noxfile_of_the_merge_base() -> None:
    for where, scripts in all_scripts():
        text = "\n".join(scripts)
        calls = nox_calls(scripts)
        assert calls, where
        for call in calls:
            assert re.match(r'-f "\$(RUNNER_TEMP/judge|JUDGE)/noxfile\.py" -s \S+$', call), (
                where,
                call,
            )
        # The judge's worktree is made from the merge base before nox is first called.
        made = text.index('"$(git merge-base "$BASE_SHA" HEAD)"')
        assert made < text.index("nox -f"), where
        assert "git worktree add --detach" in text[:made]


def test_every_job_installs_bubblewrap_and_runs_sandboxed() -> None:
    """No job runs the patch's code bare: bwrap first, then --isolation sandbox on every call."""
    for where, scripts in all_scripts():
        text = "\n".join(scripts)
        install = text.find("apt-get install -y bubblewrap")
        assert install >= 0, where
        calls = [line for line in text.splitlines() if re.match(r"\s*(- )?nox ", line)]
        assert calls, where
        assert all(text.find(line) > install for line in calls), where
        args = text[install:]
        assert args.count("--isolation sandbox") >= len(calls), where


def test_github_lifts_the_apparmor_user_namespace_restriction() -> None:
    for name, job in github()["jobs"].items():
        text = "\n".join(gh_scripts(job))
        assert "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in text, name


# --- issue 19: recipes that run on a fresh runner ----------------------------------


def test_gitlab_without_required_replay_has_no_job_that_waits_for_a_runner() -> None:
    doc = gitlab(replay_required=False)
    jobs = gl_jobs(doc)
    assert set(jobs) == {"patchjudge:local", "patchjudge:verdict"}
    assert "tags" in doc[".patchjudge:trusted-host"]  # kept, hidden: one dot to turn it on
    assert not any("tags" in job for job in jobs.values())
    (trusted,) = [n for n in jobs["patchjudge:verdict"]["needs"] if "trusted" in n["job"]]
    assert trusted == {"job": "patchjudge:trusted-host", "artifacts": True, "optional": True}


def test_gitlab_with_required_replay_runs_the_trusted_host() -> None:
    jobs = gl_jobs(gitlab(replay_required=True))
    assert jobs["patchjudge:trusted-host"]["tags"] == ["patchjudge-trusted"]
    assert ".patchjudge:trusted-host" not in gitlab(replay_required=True)


def _ledger_step(tmp_path: Path, ledger: str) -> str:
    """Run the GitHub local job's ledger step as the runner would; what it put in $GITHUB_OUTPUT."""
    (step,) = [s for s in github()["jobs"]["local"]["steps"] if s.get("id") == "ledger"]
    (tmp_path / "judge" / "eval").mkdir(parents=True)
    (tmp_path / "judge" / "eval" / "gate.toml").write_text(ledger)
    output = tmp_path / "output"
    env = {"PATH": str(Path(sys.executable).parent), "RUNNER_TEMP": str(tmp_path)}
    env["GITHUB_OUTPUT"] = str(output)
    script = step["run"].replace("python ", f"{sys.executable} ", 1)
    bash = shutil.which("bash")
    assert bash is not None
    subprocess.run([bash, "-e", "-c", script], check=True, env=env)
    return output.read_text()


@pytest.mark.parametrize(
    ("ledger", "required"),
    [
        ("[replay]\nrequired = true\n", "true"),
        ("[replay]\nrequired = false\n", "false"),
        ('[gate]\nbase = "main"\n', "false"),  # left out: the default
    ],
)
def test_github_trusted_host_runs_only_when_the_base_ledger_requires_replay(
    tmp_path: Path, ledger: str, required: str
) -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    jobs = github()["jobs"]
    assert jobs["local"]["outputs"] == {
        "replay_required": "${{ steps.ledger.outputs.replay_required }}"
    }
    assert jobs["trusted-host"]["if"] == "${{ needs.local.outputs.replay_required == 'true' }}"
    assert _ledger_step(tmp_path, ledger) == f"replay_required={required}\n"


def _verdict_of(doc: dict[str, Any]) -> str:
    if "env" in doc:
        return str(doc["env"]["VERDICT_OF"])
    return str(doc[".patchjudge"]["variables"]["VERDICT_OF"])


@pytest.mark.parametrize("recipe", ["github", "gitlab"])
@pytest.mark.parametrize(
    "case",
    [
        (None, 1, "", "patchjudge: no verdict in .patchjudge/verdict.json (FileNotFoundError):"),
        (
            "{not json",
            1,
            "",
            "patchjudge: no verdict in .patchjudge/verdict.json (JSONDecodeError):",
        ),
        ('{"schema": 1}', 1, "", "patchjudge: no verdict in .patchjudge/verdict.json (KeyError):"),
        ('{"verdict": "undecided"}', 0, "undecided\n", ""),
    ],
)
def test_a_missing_verdict_is_a_failed_gate_in_one_line(
    tmp_path: Path, recipe: str, case: tuple[str | None, int, str, str]
) -> None:
    written, code, out, err = case
    doc = github() if recipe == "github" else gitlab()
    if written is not None:
        (tmp_path / ".patchjudge").mkdir()
        (tmp_path / ".patchjudge" / "verdict.json").write_text(written)
    done = subprocess.run(
        [sys.executable, "-c", _verdict_of(doc)], cwd=tmp_path, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (code, out)
    assert done.stderr.startswith(err) and done.stderr.count("\n") == (1 if err else 0)
    if err:
        assert done.stderr.rstrip().endswith("a failed gate")


def test_every_verdict_read_goes_through_the_one_line_reader() -> None:
    for where, scripts in all_scripts():
        text = "\n".join(scripts)
        assert "json.load" not in text, where
    assert 'verdict=$(python -c "$VERDICT_OF")' in "\n".join(gh_scripts(github()["jobs"]["local"]))
    assert 'verdict=$(python -c "$VERDICT_OF")' in gl_scripts(gitlab(), "patchjudge:local")


# --- the seed key (issue 18) -------------------------------------------------------

SEED_KEY = "${{ secrets.PATCHJUDGE_SEED_KEY }}"


def test_github_passes_the_seed_key_from_a_secret_to_every_nox_step() -> None:
    # The gate, the trusted host and the verdict: a report of another seed is stale.
    for job in github()["jobs"].values():
        for step in job["steps"]:
            if "nox -f" in step.get("run", ""):
                assert step.get("env", {}).get("PATCHJUDGE_SEED_KEY") == SEED_KEY, step
    # Only there: no other step, job or the workflow's env holds it.
    text = scaffold.ci_recipe("ci/github-workflow.yml", "nox", True)
    nox_steps = sum("nox -f" in s for j in github()["jobs"].values() for s in gh_scripts(j))
    assert text.count(SEED_KEY) == nox_steps
    assert "PATCHJUDGE_SEED_KEY" not in github().get("env", {})


def test_gitlab_takes_the_seed_key_from_a_masked_variable() -> None:
    text = scaffold.ci_recipe("ci/gitlab-ci.yml", "nox", True)
    assert "PATCHJUDGE_SEED_KEY" in text and "masked" in text
    # Never written into the recipe as a value: GitLab gives the variable to the jobs.
    for job in gl_jobs(gitlab()).values():
        assert "PATCHJUDGE_SEED_KEY" not in job.get("variables", {})


def test_every_job_that_installs_nox_installs_uv_pinned_as_the_judge_is_tested_with() -> None:
    """issue 19: without uv, nox builds every venv with virtualenv and pip (tens of
    seconds each); init's noxfile takes uv where it is beside nox."""
    pins = (ROOT / "constraints" / "dev.txt").read_text()
    (tested,) = re.findall(r"^uv==(\S+) ", pins, re.MULTILINE)
    for where, scripts in all_scripts():
        installs = [line for s in scripts for line in s.splitlines() if "pip install" in line]
        assert installs, where
        for line in installs:
            assert line.strip().endswith('"nox==$NOX_VERSION" "uv==$UV_VERSION"'), (where, line)
    assert github()["env"]["UV_VERSION"] == tested
    assert gitlab()[".patchjudge"]["variables"]["UV_VERSION"] == tested


# --- A tox team's recipes (issue 19, toxci) ------------------------------------------

TOX_CALL = re.compile(r"\s*(?:- )?tox (?P<args>.*?)(?: -- |$)")


def tox_calls(scripts: list[str]) -> list[str]:
    """The options of every tox command line, up to its `--`."""
    return [
        m.group("args") for s in scripts for line in s.splitlines() if (m := TOX_CALL.match(line))
    ]


@pytest.mark.parametrize("name", ["github-workflow.yml", "gitlab-ci.yml"])
def test_the_tox_recipes_name_no_nox_and_install_tox_as_the_judge_is_tested_with(name) -> None:
    # Before toxci, a tox team's recipe installed nox and ran `nox -f .../noxfile.py`.
    text = scaffold.ci_recipe(f"ci/{name}", "tox", True)
    assert "nox" not in text.lower()
    (tested,) = re.findall(r"^tox==(\S+) ", (ROOT / "constraints" / "dev.txt").read_text(), re.M)
    doc = load(name, runner="tox")
    env = doc["env"] if "jobs" in doc else doc[".patchjudge"]["variables"]
    assert env["TOX_VERSION"] == tested
    installs = [line for line in text.splitlines() if "pip install" in line]
    assert installs
    assert all(line.strip().endswith('pip install "tox==$TOX_VERSION"') for line in installs)


def test_every_tox_call_runs_the_tox_ini_of_the_judges_worktree() -> None:
    # tox -c: the merge base's tox.ini, from the worktree the job adds, run from the
    # head's checkout (which toxfile.py names {patchjudge_repo}, the checkout judged).
    for where, scripts in all_scripts("tox"):
        (judge,) = {
            m.group(1)
            for s in scripts
            for m in re.finditer(r'git worktree add --detach "([^"]+)"', s)
        }  # fmt: skip
        calls = tox_calls(scripts)
        assert calls, where
        for call in calls:
            assert call.startswith(f'-c "{judge}/tox.ini" -e '), (where, call)


def test_every_tox_env_a_recipe_calls_is_in_the_tox_ini_init_writes() -> None:
    import configparser

    called = {
        re.search(r"-e (\S+)", call).group(1)  # type: ignore[union-attr]
        for _, scripts in all_scripts("tox")
        for call in tox_calls(scripts)
    }  # fmt: skip
    assert called == {"gate", "replay-run", "replay-verdict"}
    for files in (["tests/test_a.py"], ["pyproject.toml", "calc/__init__.py", "tests/test_a.py"]):
        ini = configparser.ConfigParser(interpolation=None)
        ini.read_string(scaffold.render_tox(scaffold.detect(files)))
        assert {f"testenv:{env}" for env in called} <= set(ini.sections()), files
        text = scaffold.render_tox(scaffold.detect(files))
        # The judge (constraints/, the ledger) is tox.ini's folder; what is judged and
        # built is the checkout tox runs in: never the other way round.
        assert "--repo {tox_root}" not in text and "boxbuild {tox_root}" not in text
        assert text.count("--repo {patchjudge_repo}") == 5
        assert ("boxbuild {patchjudge_repo} " in text) == ("pyproject.toml" in files)
        for line in text.splitlines():
            if "constraints" in line and not line.startswith("#"):
                assert "{patchjudge_repo}{/}constraints" not in line, line
