"""What the harness writes carries the screen's and the transcript's text: files are 0600 and the folders it makes
0700; the step commands that write into a trial folder (``verdict``, ``collect``) refuse a folder ``run`` did not
make and a workdir that is a symlink; text that is not UTF-8 from a transcript is escaped, never raised."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from live_trial.cli.main import main
from live_trial.jsonfile import append_jsonl, write_json, write_text_atomic
from live_trial.notices import notify as nt
from live_trial.transcript.reader import copy_transcript
from live_trial.trial.changes import record_side_effects, snapshot_cwd
from live_trial.trial.journal import Journal
from live_trial.trial.workdir import create_workdir
from tests.unit.fakes import write_state


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_a_trial_s_folders_and_logs_are_private(tmp_path):
    wd = create_workdir(tmp_path / "eval-log", "hello", "greet", "20261130T101500-abcd")
    for folder in (tmp_path / "eval-log", wd.root.parent, wd.root, wd.out):
        assert mode(folder) == 0o700, folder
    journal = Journal()
    journal.wd = wd
    journal.log("send", "delivered", tail=["the screen's last lines"])
    assert mode(wd.trial_log) == 0o600
    record = nt.notify(tmp_path / "eval-log", "done", "greet", "1 file written", "en", env={})
    assert record["webhook"]["status"] == "not_configured"
    assert mode(tmp_path / "eval-log" / nt.NOTIFICATIONS_FILE) == 0o600


def test_writes_are_private_and_an_old_public_log_is_tightened(tmp_path):
    write_json(tmp_path / "a" / "b.json", {"x": 1}, None)
    write_text_atomic(tmp_path / "c" / "d.txt", "text")
    log = tmp_path / "old.jsonl"
    log.write_text("{}\n")
    os.chmod(log, 0o644)
    append_jsonl(log, {"y": 2})
    assert [mode(p) for p in (tmp_path / "a" / "b.json", tmp_path / "c" / "d.txt", log)] == [0o600] * 3
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "c")] == [0o700] * 2
    assert log.read_text().splitlines() == ["{}", '{"y": 2}']


def test_collected_copies_are_private(tmp_path):
    cwd, wd = tmp_path / "cwd", tmp_path / "wd"
    cwd.mkdir()
    wd.mkdir()
    before = snapshot_cwd(cwd)
    (cwd / "made.txt").write_text("the skill's file")
    os.chmod(cwd / "made.txt", 0o644)
    record_side_effects(wd, cwd, before, exclude=[wd])
    copy = wd / "side-effects" / "files" / "made.txt"
    assert copy.read_text() == "the skill's file" and mode(copy) == 0o600
    assert mode(wd / "side-effects") == 0o700 and mode(wd / "side-effects" / "files") == 0o700
    (cwd / "t.jsonl").write_text('{"type":"mode"}\n')
    copy_transcript(cwd / "t.jsonl", wd / "subagents" / "t.jsonl")
    assert mode(wd / "subagents" / "t.jsonl") == 0o600 and mode(wd / "subagents") == 0o700


def _collect(workdir: Path) -> list[str]:
    return ["collect", "--workdir", str(workdir), "--session", "lt-20261130T101500-abcd-greet",
            "--session-id", "11111111-1111-4111-8111-111111111111"]


def test_collect_refuses_a_folder_run_did_not_make(tmp_path, capsys):
    folder = tmp_path / "somewhere"
    folder.mkdir()
    (folder / "task.md").write_text("a task")
    before = sorted(p.name for p in folder.iterdir())
    assert main(_collect(folder)) == 2
    assert "not a trial workdir (no trial-state.json)" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == before


def test_collect_refuses_a_symlinked_workdir(tmp_path, capsys):
    wd = create_workdir(tmp_path / "eval-log", "hello", "greet", "20261130T101500-abcd")
    (wd.root / "task.md").write_text("a task")
    write_state(wd.root, "hello", "greet")
    link = tmp_path / "link"
    link.symlink_to(wd.root, target_is_directory=True)
    assert main(_collect(link)) == 2
    assert "the workdir is a symlink" in capsys.readouterr().err


def test_evaluate_and_report_write_only_into_a_trial_folder_itself(tmp_path, capsys):
    """evaluate wrote evaluation.json into any folder, and evaluate and report followed a symlinked workdir."""
    folder = tmp_path / "somewhere"
    (folder / "out").mkdir(parents=True)
    (folder / "transcript.jsonl").write_text("")
    argv = ["evaluate", "--workdir", str(folder), "--target", "hello:greet", "--plugins-root", "examples/plugins",
            "--claude-bin", "/bin/false"]
    assert main(argv) == 2
    assert "not a trial workdir (no trial-state.json)" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == ["out", "transcript.jsonl"]
    wd = create_workdir(tmp_path / "eval-log", "hello", "greet", "20261130T101500-abcd")
    write_state(wd.root, "hello", "greet")
    link = tmp_path / "link"
    link.symlink_to(wd.root, target_is_directory=True)
    before = sorted(p.name for p in wd.root.iterdir())
    for args in (["evaluate", "--workdir", str(link), "--target", "hello:greet", "--claude-bin", "/bin/false"],
                 ["report", str(link)]):
        assert main(args) == 2
        assert "the workdir is a symlink" in capsys.readouterr().err
    assert sorted(p.name for p in wd.root.iterdir()) == before


def test_a_lone_surrogate_in_a_transcript_never_breaks_status_json(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"user","uuid":"u1","timestamp":"2026-11-30T10:00:00.000Z","origin":{"kind":"human"},'
                    '"message":{"role":"user","content":"go"}}\n'
                    '{"type":"assistant","uuid":"u2","parentUuid":"u1","timestamp":"2026-11-30T10:00:01.000Z",'
                    '"message":{"model":"m","role":"assistant","stop_reason":"end_turn",'
                    '"content":[{"type":"text","text":"bad \\ud800 end"}]}}\n')
    proc = subprocess.run([sys.executable, "-m", "live_trial", "status", "--transcript", str(path), "--json"],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["state"] == "IDLE_TURN_COMPLETE" and doc["last_assistant_text"] == "bad \\ud800 end"


def test_evaluate_writes_evaluation_json_from_a_transcript_with_a_lone_surrogate(tmp_path):
    from types import SimpleNamespace

    from live_trial.judge import evaluator as ev

    wd = tmp_path / "run"
    (wd / "out").mkdir(parents=True)
    (wd / "transcript.jsonl").write_text(
        '{"type":"assistant","uuid":"22222222-2222-4222-8222-222222222222","message":{"role":"assistant",'
        '"content":[{"type":"text","text":"caf\\udce9"}]}}\n')

    def fake(argv, prompt, cwd, env, timeout_s):
        assert "caf\\udce9" in prompt
        doc = {"type": "result", "is_error": False, "structured_output":
               {"verdict": "FAIL", "blockers": ["nothing in out/"], "evidence": [], "checks": []}}
        return ev.ProcessResult(0, json.dumps(doc), "", False, 0.1)
    target = SimpleNamespace(qualified="hello:greet", frontmatter={"description": "d"}, skill_md=None)
    doc = ev.evaluate(wd, target, "/bin/claude-fake", {}, produced=None, runner=fake)
    assert doc["goal_result"] == "FAIL"
    assert json.loads((wd / "evaluation.json").read_text())["attempts"][0]["request"] == doc["attempts"][0]["request"]


@pytest.mark.parametrize("text", ["lone \ud800 surrogate", "escaped \udcff byte"])
def test_json_writes_escape_text_that_is_not_utf8(tmp_path, text):
    write_json(tmp_path / "x.json", {"t": text}, None)
    append_jsonl(tmp_path / "x.jsonl", {"t": text})
    assert json.loads((tmp_path / "x.json").read_text())["t"] == text
    assert json.loads((tmp_path / "x.jsonl").read_text())["t"] == text
