"""The path a person's own login takes, end to end: ``run`` without ``--rehearsal`` (README "Running a real trial"),
``plan`` reusing its PASS, and ``doctor`` saying whether a real trial can start.

Every test here is live-path-on-a-stand-in: the model's service is the rehearsal server serving the service's own
message ids (tests/e2e/live_support.py), reached only through the person's ANTHROPIC_BASE_URL and key (or OAuth
token), and the Claude Code config is the person's CLAUDE_CONFIG_DIR as a first ``claude`` run leaves it. The harness
is told nothing else: it takes the trial for a real one, and its evaluator runs as ``claude -p`` in that same config.
One stand-in serves every test of a worker (``live-path.yaml``: the happy path, a 404 for an unknown model, another
model for claude-sonnet-4-5).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.live_support import OTHER_KEY, USER_KEY, first_run_config, persons_env, stand_in
from tests.e2e.run_support import FAST, PLUGINS, ROOT, final_json, run_cmd, workdirs

pytestmark = pytest.mark.e2e
MARK = ["trialkit:mark", "--plugins-root", str(PLUGINS)]


@pytest.fixture(scope="module")
def service():
    server = stand_in()
    yield server
    server.stop()


def verdict(tmp_path: Path) -> dict:
    (wd,) = workdirs(tmp_path)
    return json.loads((wd / "verdict.json").read_text())


def since(service, before: int) -> list[dict]:
    """The stand-in's requests after the first ``before`` (side queries included)."""
    return service.requests[before:]


def live_cli(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**env, "PYTHONPATH": str(ROOT)})


@pytest.mark.budget(20)
def test_a_live_trial_passes_with_the_evaluator_in_the_persons_config_and_plan_reuses_it(tmp_path, service):
    """live-path-on-a-stand-in: a PASS end to end, judged by `claude -p` in the person's config, then reused by plan."""
    config = first_run_config(tmp_path / "me" / ".claude", trusted=[tmp_path])
    env = persons_env(service, config)
    before = len(service.requests)
    proc = run_cmd(tmp_path, *MARK, *FAST, env=env)
    out = final_json(proc)
    assert proc.returncode == 0 and out["status"] == "PASS", (out, proc.stderr[-2000:])
    doc = verdict(tmp_path)
    assert (doc["scenario_origin"], doc["tier"], doc["overall"]["verdict"]) == ("live", "live", "PASS"), doc["overall"]
    assert doc["actual_model"] and not any("rehearsal" in n or "scripted" in n for n in doc["notes"]), doc["notes"]
    (wd,) = workdirs(tmp_path)
    assert not (wd / "claude-config").exists()          # the person's own config, no isolated one
    # the evaluator was `claude -p` in the person's config: its session is there, and it reached the same service
    evaluation = json.loads((wd / "evaluation.json").read_text())
    assert list(config.glob(f"projects/*/{evaluation['session_id']}.jsonl")), sorted(config.rglob("*.jsonl"))
    assert [r["rule"] for r in since(service, before) if not r["side_query"]] == [
        "skill-call", "write-marker", "done", "evaluator"]

    # plan reuses that PASS: its closure, scenario and transcript are unchanged
    proc = live_cli("plan", "--plugin-dir", str(PLUGINS / "trialkit"), "--eval-root", str(tmp_path / "eval"),
                    "--json", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    row = next(s for s in json.loads(proc.stdout)["skills"] if s["target"] == "trialkit:mark")
    assert row["action"] == "reuse", row
    assert row["skill_dir_tree_sha"] == doc["skill_dir_tree_sha"]


@pytest.mark.budget(15)
def test_a_copy_of_a_git_repository_under_the_trusted_eval_root_runs_to_a_pass(tmp_path, service):
    """live-path-on-a-stand-in: the person trusts the folder holding the eval root and runs ``--cwd`` on a git
    repository. 2.1.332 asks whether to trust the trial's copy (a git work tree does not inherit a parent's trust
    there), 2.1.197 does not (references/transcript-jsonl.md "Folder trust"); either way the trial runs to a PASS,
    and when the question was answered for that copy the verdict says so (README "Running a real trial")."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("a repository of the person's\n")
    git = ["git", "-C", str(repo), "-c", "user.email=a@example.com", "-c", "user.name=A"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    config = first_run_config(tmp_path / "me" / ".claude", trusted=[tmp_path])
    proc = run_cmd(tmp_path, *MARK, *FAST, "--cwd", str(repo), env=persons_env(service, config))
    out = final_json(proc)
    assert proc.returncode == 0 and out["status"] == "PASS", (out, proc.stderr[-2000:])
    doc = verdict(tmp_path)
    (wd,) = workdirs(tmp_path)
    asked = [n for n in doc["notes"] if n.startswith("folder trust: ")]
    projects = json.loads((config / ".claude.json").read_text())["projects"]
    copy = next((p for p in projects if p.startswith(str(wd))), None)
    if asked:           # the CLI asked about the copy and recorded the answer for exactly that folder
        assert copy is not None and projects[copy]["hasTrustDialogAccepted"] is True, projects
        assert copy in asked[0] and "Yes, I trust this folder" in asked[0]
    else:               # it never asked: the trusted parent covered the copy
        assert copy is None or projects[copy].get("hasTrustDialogAccepted") is not True, projects


@pytest.mark.budget(10)
def test_an_untrusted_folder_is_refused_before_anything_starts_with_the_fix(tmp_path, service):
    """live-path-on-a-stand-in: an eval root outside every trusted folder: refused, nothing made, no request sent."""
    config = first_run_config(tmp_path / "me", trusted=[tmp_path / "elsewhere"])
    before = len(service.requests)
    proc = run_cmd(tmp_path, *MARK, *FAST, env=persons_env(service, config))
    out = final_json(proc)
    assert proc.returncode == 2 and out["code"] == "folder_not_trusted", out
    assert "Yes, I trust this folder" in out["message"] and str(tmp_path / "eval") in out["message"], out
    assert any(line.startswith("trust: MISSING") for line in out["doctor"]), out
    assert not (tmp_path / "eval").exists() and since(service, before) == []


@pytest.mark.budget(5)
def test_a_config_whose_first_run_set_up_is_not_finished_is_refused_before_anything_starts(tmp_path, service):
    """live-path-on-a-stand-in: the person's config, trusted and with the key approved, but its first run was left
    before the set-up ended: the CLI would start its set-up again (its welcome screen), so run refuses (live_config)
    with the fix and the doctor's lines; nothing is made and no request reaches the service."""
    config = first_run_config(tmp_path / "me", trusted=[tmp_path], finished=False)
    before = len(service.requests)
    proc = run_cmd(tmp_path, *MARK, *FAST, env=persons_env(service, config))
    out = final_json(proc)
    assert proc.returncode == 2 and out["code"] == "live_config", out
    assert "the first-run set-up is not finished" in out["message"], out
    assert "run `claude` once in a terminal and finish what it shows" in out["message"], out
    assert any(line.startswith("config: MISSING") for line in out["doctor"]), out
    assert out["doctor"][-1] == "DOCTOR: NOT READY (1 missing: config)", out
    assert not (tmp_path / "eval").exists() and since(service, before) == []


@pytest.mark.budget(10)
def test_a_key_the_cli_never_approved_is_refused_before_the_cli_would_stop_to_ask(tmp_path, service):
    """live-path-on-a-stand-in: 2.1.197 and 2.1.332 stop at start on "Do you want to use this API key?" (default
    No) for a key not in customApiKeyResponses.approved; without this check the trial was BLOCKED blocking_screen
    after booting."""
    config = first_run_config(tmp_path / "me", trusted=[tmp_path], key=OTHER_KEY)
    before = len(service.requests)
    proc = run_cmd(tmp_path, *MARK, *FAST, env=persons_env(service, config, key=USER_KEY))
    out = final_json(proc)
    assert proc.returncode == 2 and out["code"] == "live_login", out
    assert "not approved" in out["message"] and "answer Yes" in out["message"], out
    assert not (tmp_path / "eval").exists() and since(service, before) == []


@pytest.mark.budget(10)
def test_no_key_and_no_login_is_refused_with_the_login_fix_and_doctor_says_so(tmp_path, service):
    """live-path-on-a-stand-in: no key, no login. Both CLIs show no login screen then (onboarding done): the
    session would answer "Not logged in · Please run /login" (BLOCKED model_auth); run refuses it first."""
    config = first_run_config(tmp_path / "me", trusted=[tmp_path], key=None)
    env = persons_env(service, config, key=None)
    before = {p: p.read_bytes() for p in config.rglob("*") if p.is_file()}
    proc = run_cmd(tmp_path, *MARK, *FAST, env=env)
    out = final_json(proc)
    assert proc.returncode == 2 and out["code"] == "live_login", out
    assert "not logged in" in out["message"] and "claude auth login" in out["message"], out
    assert not (tmp_path / "eval").exists()
    # the same answer from doctor, one line each, exit 1; then an OAuth token is a login, and doctor is ready
    proc = live_cli("doctor", "--eval-root", str(tmp_path / "eval"), env=env, cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1 and lines[-1] == "DOCTOR: NOT READY (1 missing: login)", proc.stdout
    assert [ln.split(":")[0] for ln in lines[:-1]] == ["claude", "config", "login", "trust", "tmux", "sandbox"]
    # the refused run and the doctor asked the CLI on a copy: the person's config is as it was, byte for byte
    assert {p: p.read_bytes() for p in config.rglob("*") if p.is_file()} == before
    proc = live_cli("doctor", "--eval-root", str(tmp_path / "eval"), "--json", cwd=tmp_path,
                    env=persons_env(service, config, key=None, oauth_token="sk-ant-oat01-" + "t" * 90))
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["status"] == "READY", doc
    assert "oauth_token" in next(ln["text"] for ln in doc["lines"] if ln["name"] == "login"), doc


@pytest.mark.budget(15)
def test_an_unknown_model_is_blocked_model_unknown_with_the_services_answer_as_the_cause(tmp_path, service):
    """live-path-on-a-stand-in: an unknown --model: the service's 404 reaches the verdict as its cause."""
    config = first_run_config(tmp_path / "me", trusted=[tmp_path])
    proc = run_cmd(tmp_path, *MARK, *FAST, "--model", "claude-nonexistent-9", env=persons_env(service, config))
    out = final_json(proc)
    assert proc.returncode == 3 and out["stop_reason"] == "model_unknown", out
    doc = verdict(tmp_path)
    assert doc["overall"]["verdict"] == "BLOCKED" and doc["requested_model"] == "claude-nonexistent-9"
    cause = " ".join(doc["overall"]["reasons"])
    assert "claude-nonexistent-9" in cause and "It may not exist" in cause, cause


@pytest.mark.budget(20)
def test_a_proof_whose_transcript_names_another_model_fails_by_the_model_gate(tmp_path, service):
    """live-path-on-a-stand-in: a proof trial answered by another model than the one requested: FAIL by the
    machine's model gate, though the evaluator said PASS."""
    config = first_run_config(tmp_path / "me", trusted=[tmp_path])
    proc = run_cmd(tmp_path, *MARK, *FAST, "--proof", "--model", "claude-sonnet-4-5", env=persons_env(service, config))
    out = final_json(proc)
    assert proc.returncode == 1 and out["status"] == "FAIL", out
    doc = verdict(tmp_path)
    assert doc["proof"] is True and (doc["launch"], doc["completion"], doc["goal_result"]) == ("PASS",) * 3
    assert "claude-haiku-4-5" in doc["actual_model"], doc["actual_model"]
    assert any(r.startswith("proof:") and "claude-haiku-4-5" in r for r in doc["overall"]["reasons"]), doc["overall"]


def readme_recipe() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- real-trial:start -->", 1)[1].split("<!-- real-trial:end -->", 1)[0]
    return block.split("```bash\n", 1)[1].rsplit("```", 1)[0]


def on_the_stand_in(block: str, url: str, key: str) -> str:
    """The README's recipe as this test runs it: the key is the test's, the endpoint the stand-in's (exported after
    the key), and two lines are done before the block runs: ``make setup`` (the suite's set-up did it; .venv and
    claude-pin are linked into the folder) and the first interactive ``claude`` (its outcome, the config a first run
    leaves, is written by :func:`first_run_config`: offline, claude's first run stops at "Unable to connect to
    Anthropic services", references/transcript-jsonl.md "The live path"). Every other line runs as written."""
    out, done = [], {"setup": False, "key": False, "claude": False}
    for line in block.splitlines():
        command = line.split("#", 1)[0].strip()
        if command == "make setup":
            done["setup"] = True
        elif command.startswith("export ANTHROPIC_API_KEY="):
            out += [f"export ANTHROPIC_API_KEY={key}", f"export ANTHROPIC_BASE_URL={url}"]
            done["key"] = True
        elif command == "claude":
            done["claude"] = True
        else:
            out.append(line)
    assert all(done.values()), f"the README's recipe changed: update this test ({done})"
    return "\n".join(out) + "\n"


@pytest.mark.budget(25)
def test_the_readme_recipe_for_a_real_trial_runs_to_a_pass(tmp_path, service):
    """live-path-on-a-stand-in: the README recipe of "Running a real trial" as written (see on_the_stand_in)."""
    for name in (".venv", "claude-pin"):
        (tmp_path / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "examples" / "plugins", tmp_path / "examples" / "plugins")
    config = first_run_config(tmp_path / "me" / ".claude", trusted=[tmp_path])
    script = on_the_stand_in(readme_recipe(), service.url, USER_KEY)
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                          env=persons_env(None, config, key=None))
    out = proc.stdout
    assert proc.returncode == 0, (script, out[-3000:], proc.stderr[-3000:])
    assert "DOCTOR: READY (a live trial can start)" in out, out
    (doc_path,) = (tmp_path / "eval-log" / "hello" / "greet" / "live-trial").glob("*/verdict.json")
    doc = json.loads(doc_path.read_text())
    assert (doc["overall"]["verdict"], doc["scenario_origin"], doc["requested_model"]) == (
        "PASS", "live", "claude-opus-4-8"), doc["overall"]
    # a real trial is billed: its cost is the API list price estimate, the evaluator's reported cost in it
    usage = doc["usage"]
    assert usage["billed"] is True and usage["unpriced_models"] == [] and usage["session"]["responses"] >= 1
    assert usage["cost_usd"] == usage["estimate_usd"] > usage["evaluator"]["cli_total_cost_usd"] > 0
    assert re.search(r"hello:greet.*reuse", out), out
