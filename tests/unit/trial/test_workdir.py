from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from live_trial import workdir_files as wf
from live_trial.acceptance.evallog import workdir_path
from live_trial.errors import RefusedInput
from live_trial.judge.sources import HARNESS_FILES
from live_trial.trial.workdir import create_workdir, new_run_id, open_workdir, session_name, skill_slug
from live_trial.workdir_files import Workdir


def test_run_ids_are_unique_and_shaped():
    now = datetime(2026, 11, 30, 10, 15, 0, tzinfo=timezone.utc)
    ids = {new_run_id(now) for _ in range(50)}
    assert all(re.fullmatch(r"20261130T101500-[0-9a-f]{4}", i) for i in ids)
    assert len(ids) > 40


def test_session_name_and_slug():
    assert session_name("20261130T101500-a1b2", "Run_Build:Skill!") == "lt-20261130T101500-a1b2-run-build-skill"
    assert skill_slug("***") == "skill"
    assert len(skill_slug("x" * 100)) == 40
    with pytest.raises(RefusedInput):
        session_name("bad;id", "s")


def test_workdir_layout(tmp_path):
    wd = create_workdir(tmp_path / "eval-log", "hello", "greet", "20261130T101500-a1b2")
    assert wd.root == (tmp_path / "eval-log/hello/greet/live-trial/20261130T101500-a1b2").resolve()
    assert wd.out.is_dir() and wd.marker == wd.out / "status.json"
    assert workdir_path(tmp_path, None, "s", "r").parts[-4:] == ("_plain", "s", "live-trial", "r")
    with pytest.raises(RefusedInput):
        create_workdir(tmp_path / "eval-log", "hello", "greet", "20261130T101500-a1b2")


def test_open_workdir_refuses_a_folder_without_task(tmp_path):
    with pytest.raises(RefusedInput, match="not a trial workdir"):
        open_workdir(tmp_path)


def test_every_entry_of_a_workdir_has_one_path(tmp_path):
    wd = Workdir.of(tmp_path / "20261130T101500-a1b2")
    assert wd.run_id == "20261130T101500-a1b2"
    rel = {name: getattr(wd, name).relative_to(wd.root).as_posix() for name in (
        "task", "out", "marker", "pane", "transcript", "subagents", "moved_from", "side_effects", "side_effects_list",
        "side_effects_copies", "git_status", "git_diff", "git_commits", "evaluation", "verdict", "trial_state",
        "poll_state", "trial_log", "report", "cwd_snapshot", "trial_lock", "cwd", "cwd_baseline", "claude_config",
        "rehearsal_watches")}
    assert rel == {
        "task": "task.md", "out": "out", "marker": "out/status.json", "pane": "pane.txt",
        "transcript": "transcript.jsonl", "subagents": "subagents", "moved_from": "moved-from",
        "side_effects": "side-effects", "side_effects_list": "side-effects/files.json",
        "side_effects_copies": "side-effects/files", "git_status": "side-effects/git-status.txt",
        "git_diff": "side-effects/git-diff.patch", "git_commits": "side-effects/git-commits.txt",
        "evaluation": "evaluation.json", "verdict": "verdict.json", "trial_state": "trial-state.json",
        "poll_state": "poll-state.json", "trial_log": "trial-log.jsonl", "report": "report.html",
        "cwd_snapshot": "cwd-snapshot.json", "trial_lock": ".trial.lock", "cwd": "cwd", "cwd_baseline": "cwd-baseline",
        "claude_config": "claude-config", "rehearsal_watches": "rehearsal-watches"}
    assert wd.nudge(2).name == "nudge-2.md" and wf.NUDGE_GLOB == "nudge-*.md"
    assert wf.MARKER_PATH == rel["marker"] and wf.SIDE_EFFECTS_LIST_PATH == rel["side_effects_list"]
    assert wf.SIDE_EFFECTS_COPIES_PATH == rel["side_effects_copies"] and wf.GIT_DIFF_PATH == rel["git_diff"]


def test_the_harness_files_are_the_ones_the_harness_writes():
    assert HARNESS_FILES == (
        "out/status.json", "task.md", "nudge-*.md", "trial-state.json", "trial-log.jsonl", "poll-state.json",
        "cwd-snapshot.json", ".trial.lock", "records-seal.json", "evaluation.json", "verdict.json",
        "claude-config/**", "rehearsal-watches/**", "report.html", "claude-debug/**", "mcp-fixtures.json",
        "delivery.json", "verdict-first.json", "improvement.json", "ticket-*.md")


def test_open_workdir_gives_the_resolved_folder_and_its_run_id(tmp_path):
    made = create_workdir(tmp_path / "eval-log", None, "s", "20261130T101500-a1b2")
    made.task.write_text("x")
    opened = open_workdir(made.root)
    assert opened == made and opened.run_id == "20261130T101500-a1b2"
