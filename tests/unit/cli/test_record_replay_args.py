"""``run --record`` and ``run --replay TAPE`` (README "Replaying a real trial offline"): a recording is a live trial,
so it is refused with a scenario or a tape; a replay is a rehearsal, so it is never a proof; giving both a scenario and
a tape is a usage error. Each is refused before anything is created."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PLUGINS = ROOT / "tests" / "e2e" / "plugins"


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", "run", "trialkit:mark", "--plugins-root", str(PLUGINS),
                           "--eval-root", str(tmp_path / "eval"), "--json", *args], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


@pytest.mark.parametrize("args,code", [
    (["--record", "--rehearsal", "{scenario}"], "record_with_rehearsal"),
    (["--record", "--replay", "{tape}"], "record_with_rehearsal"),
    (["--proof", "--model", "claude-opus-4-8", "--replay", "{tape}"], "proof_with_rehearsal"),
    (["--replay", "{missing}"], "tape_not_found"),
])
def test_a_recording_with_a_script_or_a_proof_replay_is_refused_creating_nothing(tmp_path: Path, args, code) -> None:
    (tmp_path / "t.jsonl").write_text("{}\n")
    paths = {"scenario": str(ROOT / "tests" / "e2e" / "scenarios" / "mark-happy.yaml"), "tape": str(tmp_path / "t.jsonl"),
             "missing": str(tmp_path / "none.jsonl")}
    proc = run(tmp_path, *(a.format(**paths) for a in args))
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 2 and out["code"] == code, out
    assert not (tmp_path / "eval").exists()


def test_a_scenario_and_a_tape_together_are_a_usage_error(tmp_path: Path) -> None:
    proc = run(tmp_path, "--rehearsal", "s.yaml", "--replay", "t.jsonl")
    assert proc.returncode == 64 and "give one of --rehearsal SCENARIO or --replay TAPE" in proc.stderr
