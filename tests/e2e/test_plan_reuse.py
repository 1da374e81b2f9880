"""The walking-skeleton trial through the planner (README "Planning"): reused on a second plan, run again after
one byte of its SKILL.md changes.

The trial is a rehearsal (the model is scripted), and plan never reuses rehearsal verdicts — so the test first
shows that honest default, then uses ``plan --rehearsal-reuse SCENARIO`` (README "Planning many skills": try the reuse
rules offline) to let this rehearsal verdict count; that plan says so, and ``run --plan`` refuses it without
``--rehearsal`` of the same scenario. Everything else about reuse (closure digest, scenario_id,
transcript sha, re-derived overall) is exactly the live path; reuse of live-origin verdicts and tampering are
covered in tests/unit/acceptance/test_plan.py with verdicts written by the same write_trial_verdict the trial uses.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "scenarios" / "greet-happy.yaml"
RUN_TIMEOUT_S = 900


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def plan_doc(tmp: Path, *extra: str) -> dict:
    proc = cli("plan", "--plugin-dir", str(tmp / "plugins" / "hello"), "--eval-root", str(tmp / "eval-log"),
               "--max-live-trials", "50", "--json", *extra, cwd=tmp)    # every case fits: this is about reuse
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def plan(tmp: Path, *extra: str) -> dict:
    return next(s for s in plan_doc(tmp, *extra)["skills"] if s["target"] == "hello:greet")


@pytest.mark.budget(12)
def test_trial_is_reused_then_rerun_after_one_byte(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples" / "plugins", tmp_path / "plugins")
    (tmp_path / "work").mkdir()
    proc = cli("run", "hello:greet", "--plugins-root", str(tmp_path / "plugins"), "--rehearsal", str(SCENARIO),
               "--cwd", str(tmp_path / "work"), "--eval-root", str(tmp_path / "eval-log"), "--json",
               cwd=tmp_path, timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, f"run did not PASS (exit {proc.returncode}): {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    verdicts = sorted((tmp_path / "eval-log" / "hello" / "greet" / "live-trial").glob("*/verdict.json"))
    assert len(verdicts) == 1
    doc = json.loads(verdicts[0].read_text())
    assert doc["overall"]["verdict"] == "PASS" and doc["scenario_origin"] == "rehearsal"

    # the honest default: a scripted model is never evidence for reuse
    first = plan(tmp_path)
    assert first["action"] == "run" and "rehearsal verdicts are never reused" in first["reason"]

    # plan --rehearsal-reuse: the rehearsal PASS counts, and the row and the plan say so; reused on the second call
    for _ in range(2):
        again = plan(tmp_path, "--rehearsal-reuse", str(SCENARIO))
        assert again["action"] == "reuse", again["reason"]
        assert "reused only because of --rehearsal-reuse" in again["reason"]
        assert again["skill_dir_tree_sha"] == doc["skill_dir_tree_sha"]
    whole = plan_doc(tmp_path, "--rehearsal-reuse", str(SCENARIO), "--out", str(tmp_path / "plan.json"))
    assert whole["reuse_rehearsal"] is True and whole["rehearsal_scenario"] == str(SCENARIO.resolve())

    # run --plan refuses that plan without --rehearsal of the same scenario: nothing runs, nothing is written
    before = sorted(str(p) for p in (tmp_path / "eval-log").rglob("*"))
    for extra in ([], ["--rehearsal", str(ROOT / "examples" / "scenarios" / "greet-eval-fail.yaml")]):
        refused = cli("run", "--plan", str(tmp_path / "plan.json"), "--json", *extra, cwd=tmp_path)
        assert refused.returncode == 2, (refused.stdout, refused.stderr)
        assert "rehearsal_reuse_plan" in refused.stdout + refused.stderr
    assert sorted(str(p) for p in (tmp_path / "eval-log").rglob("*")) == before

    # one byte of SKILL.md changes: run again
    skill_md = tmp_path / "plugins" / "hello" / "skills" / "greet" / "SKILL.md"
    skill_md.write_bytes(skill_md.read_bytes() + b" ")
    changed = plan(tmp_path, "--rehearsal-reuse", str(SCENARIO))
    assert (changed["action"], changed["reason"]) == ("run", "behaviour closure changed since the last PASS")
