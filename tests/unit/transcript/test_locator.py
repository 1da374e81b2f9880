"""live_trial.transcript.locator: which transcript a session writes now, following it under a new session id."""
from __future__ import annotations

import pytest

from live_trial.errors import RefusedInput
from live_trial.transcript.locator import locate_current, named_session
from live_trial.transcript.paths import locate, project_slug

OLD = "11111111-2222-4333-8444-555555555555"
NEW = "22222222-3333-4444-8555-666666666666"


def test_the_session_named_by_the_live_status_file_is_the_one_written_now():
    assert named_session(OLD, {"sessionId": NEW, "status": "idle"}) == NEW
    assert named_session(OLD, {"sessionId": OLD}) is None               # it did not move
    for doc in (None, {}, {"sessionId": ""}, {"sessionId": 5}, ["not", "a", "mapping"]):
        assert named_session(OLD, doc) is None
    assert named_session(None, {"sessionId": NEW}) is None              # nothing known to move from


def test_locate_current_follows_a_move_even_before_the_new_file_exists(tmp_path):
    cwd, config = tmp_path / "cwd", tmp_path / "config"
    cwd.mkdir()
    folder = config / "projects" / project_slug(cwd)
    folder.mkdir(parents=True)
    (folder / f"{OLD}.jsonl").write_text("")
    here = locate_current(OLD, cwd, config, None)
    assert (here.session_id, here.path, here.moved_from) == (OLD, folder / f"{OLD}.jsonl", None)
    assert locate_current(OLD, cwd, config, {"sessionId": OLD}).moved_from is None
    moved = locate_current(OLD, cwd, config, {"sessionId": NEW})
    assert (moved.session_id, moved.path, moved.moved_from) == (NEW, locate(NEW, cwd, config), OLD)
    assert not moved.path.exists()             # the CLI writes it ~0.3 s after it names the id: callers decide
    held = tmp_path / "held.jsonl"
    assert locate_current(OLD, cwd, config, None, known_path=held).path == held          # not looked up again
    assert locate_current(OLD, cwd, config, {"sessionId": NEW}, known_path=held).path == moved.path


def test_an_unsafe_session_id_named_by_the_status_file_is_refused(tmp_path):
    with pytest.raises(RefusedInput):
        locate_current(OLD, tmp_path, tmp_path, {"sessionId": "../escape"})
