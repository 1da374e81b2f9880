"""The walking-skeleton trial through the planner (README "Planning"): reused on a second plan, run again after
one byte of its SKILL.md changes.

The trial is a rehearsal (the model is scripted), and plan never reuses rehearsal verdicts — so the test first
shows that honest default, then uses the planner's hidden, test-only ``--reuse-rehearsal --scenario`` switch to let
this rehearsal verdict stand in for a live one. Everything else about reuse (closure digest, scenario_id,
transcript sha, re-derived overall) is exactly the live path; reuse of live-origin verdicts and tampering are
covered in tests/unit/test_plan.py with verdicts written by the same write_trial_verdict the trial uses.
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


def plan(tmp: Path, *extra: str) -> dict:
    proc = cli("plan", "--plugin-dir", str(tmp / "plugins" / "hello"), "--eval-root", str(tmp / "eval-log"),
               "--json", *extra, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    return next(s for s in doc["skills"] if s["target"] == "hello:greet")


@pytest.mark.budget(8)
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

    # test-only: let the rehearsal verdict stand in for a live one; reused on the second plan call
    for _ in range(2):
        again = plan(tmp_path, "--reuse-rehearsal", "--scenario", str(SCENARIO))
        assert again["action"] == "reuse", again["reason"]
        assert again["skill_dir_tree_sha"] == doc["skill_dir_tree_sha"]

    # one byte of SKILL.md changes: run again
    skill_md = tmp_path / "plugins" / "hello" / "skills" / "greet" / "SKILL.md"
    skill_md.write_bytes(skill_md.read_bytes() + b" ")
    changed = plan(tmp_path, "--reuse-rehearsal", "--scenario", str(SCENARIO))
    assert (changed["action"], changed["reason"]) == ("run", "behaviour closure changed since the last PASS")
