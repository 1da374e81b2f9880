"""The path a person's own login takes, end to end: ``run`` without ``--rehearsal`` (README "Running a real trial"),
``plan`` reusing its PASS, and ``doctor`` saying whether a real trial can start.

Every test here is live-path-on-a-stand-in: the model's service is the rehearsal server serving the service's own
message ids (tests/e2e/live_support.py), reached only through the person's ANTHROPIC_BASE_URL and key (or OAuth
token), and the Claude Code config is the person's CLAUDE_CONFIG_DIR as a first ``claude`` run leaves it. The harness
is told nothing else: it takes the trial for a real one, and its evaluator runs as ``claude -p`` in that same config.
One stand-in serves every test of a worker (``live-path.yaml``: the happy path, a 404 for an unknown model, another
model for claude-opus-4-8).
"""
from __future__ import annotations

import json
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


@pytest.mark.budget(10)
def test_an_untrusted_folder_is_refused_before_anything_starts_with_the_fix(tmp_path, service):
    config = first_run_config(tmp_path / "me", trusted=[tmp_path / "elsewhere"])
    before = len(service.requests)
    proc = run_cmd(tmp_path, *MARK, *FAST, env=persons_env(service, config))
    out = final_json(proc)
    assert proc.returncode == 2 and out["code"] == "folder_not_trusted", out
    assert "Yes, I trust this folder" in out["message"] and str(tmp_path / "eval") in out["message"], out
    assert any(line.startswith("trust: MISSING") for line in out["doctor"]), out
    assert not (tmp_path / "eval").exists() and since(service, before) == []


@pytest.mark.budget(10)
def test_a_key_the_cli_never_approved_is_refused_before_the_cli_would_stop_to_ask(tmp_path, service):
    """2.1.197 and 2.1.332 stop at start on "Do you want to use this API key?" (default No) for a key not in
    customApiKeyResponses.approved; without this check the trial was BLOCKED blocking_screen after booting."""
    config = first_run_config(tmp_path / "me", trusted=[tmp_path], key=OTHER_KEY)
    before = len(service.requests)
    proc = run_cmd(tmp_path, *MARK, *FAST, env=persons_env(service, config, key=USER_KEY))
    out = final_json(proc)
    assert proc.returncode == 2 and out["code"] == "live_login", out
    assert "not approved" in out["message"] and "answer Yes" in out["message"], out
    assert not (tmp_path / "eval").exists() and since(service, before) == []


@pytest.mark.budget(10)
def test_no_key_and_no_login_is_refused_with_the_login_fix_and_doctor_says_so(tmp_path, service):
    config = first_run_config(tmp_path / "me", trusted=[tmp_path], key=None)
    env = persons_env(service, config, key=None)
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
    proc = live_cli("doctor", "--eval-root", str(tmp_path / "eval"), "--json", cwd=tmp_path,
                    env=persons_env(service, config, key=None, oauth_token="sk-ant-oat01-" + "t" * 90))
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["status"] == "READY", doc
    assert "oauth_token" in next(ln["text"] for ln in doc["lines"] if ln["name"] == "login"), doc


@pytest.mark.budget(15)
def test_an_unknown_model_is_blocked_model_unknown_with_the_services_answer_as_the_cause(tmp_path, service):
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
    config = first_run_config(tmp_path / "me", trusted=[tmp_path])
    proc = run_cmd(tmp_path, *MARK, *FAST, "--proof", "--model", "claude-opus-4-8", env=persons_env(service, config))
    out = final_json(proc)
    assert proc.returncode == 1 and out["status"] == "FAIL", out
    doc = verdict(tmp_path)
    assert doc["proof"] is True and (doc["launch"], doc["completion"], doc["goal_result"]) == ("PASS",) * 3
    assert "claude-sonnet-4-5" in doc["actual_model"], doc["actual_model"]
    assert any(r.startswith("proof:") and "claude-sonnet-4-5" in r for r in doc["overall"]["reasons"]), doc["overall"]
