from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from live_trial.acceptance.evallog import workdir_path
from live_trial.errors import RefusedInput
from live_trial.trial.workdir import create_workdir, new_run_id, open_workdir, session_name, skill_slug


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
