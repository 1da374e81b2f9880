"""A suite case's ``replay: TAPE`` reaches its trial as ``run --replay`` does (references/suite-format.md): the plan
names the tape, and ``run --plan`` hands it to the trial as a tape, which refuses one that is not a tape (exit 2)
before anything is created."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd)


def test_a_case_replay_is_planned_and_run_as_a_replay_of_its_tape(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples" / "plugins" / "hello", tmp_path / "hello")
    (tmp_path / "tape.jsonl").write_text("{}\n")          # no tape: what the trial's input checks make of it tells
    suite = tmp_path / "suite.yaml"
    suite.write_text("skills:\n  greet:\n    cases: [{name: replayed, replay: tape.jsonl}]\n")
    made = cli("plan", "--plugin-dir", str(tmp_path / "hello"), "--suite", str(suite), "--eval-root",
               str(tmp_path / "eval"), "--out", str(tmp_path / "plan.json"), "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    (entry,) = [e for batch in json.loads(made.stdout)["live_batches"] for e in batch]
    assert entry["replay"] == str(tmp_path / "tape.jsonl") and "rehearsal" not in entry
    shutil.rmtree(tmp_path / "eval", ignore_errors=True)
    run = cli("run", "--plan", str(tmp_path / "plan.json"), "--suite", str(suite), "--json", cwd=tmp_path)
    (row,) = [t for t in json.loads(run.stdout)["trials"] if t["status"] != "NEEDS_ANSWER"]  # hello:greet-style asks
    assert run.returncode == 2 and row["status"] == "REFUSED", run.stdout
    assert "tape line 1 does not fit model-tape.schema.json" in row["summary"], row
    assert not (tmp_path / "eval").exists()
