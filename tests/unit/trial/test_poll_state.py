"""poll's state file as a typed PollState: written byte for byte as the dict poll wrote before it, and read back
unchanged (load -> save), older files included."""
from __future__ import annotations

import json
from pathlib import Path

from live_trial.clock import iso_z
from live_trial.jsonfile import read_json, write_json
from live_trial.policy import load_policy
from live_trial.trial.poll_state import SCHEMA, PollConfig, PollState

T0 = 1_800_000_000.0
SESSION = "lt-20261130T120000-ab12-poll"
SID = "11111111-2222-4333-8444-555555555555"


def cfg(tmp_path: Path) -> PollConfig:
    return PollConfig(marker=tmp_path / "out" / "status.json", session=SESSION, session_id=SID, cwd=None,
                      config_dir=None, state_file=tmp_path / "poll-state.json", policy=load_policy({}))


def every_key(tmp_path: Path) -> dict:
    """A state file as a poll that saw a move, a background task and a gate leaves it (keys in its order)."""
    t = iso_z(T0)
    return {"version": 1, "session": SESSION, "session_id": SID, "marker": str(tmp_path / "out" / "status.json"),
            "started_at": t, "updated_at": iso_z(T0 + 9), "calls": 2, "ticks": 14, "transcript_path": "/p/new.jsonl",
            "transcript_offset": 2048, "last_change_at": iso_z(T0 + 8), "last_screen_hash": "sha256:" + "c" * 64,
            "last_state": "GATE", "done_streak": 0, "done_since": None, "gate_streak": 2, "last_gate_id": "toolu_1",
            "warned": {"hard_cap": True},
            "exits": [{"exit": "TICK_BUDGET", "at": iso_z(T0 + 4), "reason": "7 ticks in this call", "state": "BUSY_TOOL",
                       "ticks": 7}, {"exit": "GATE", "at": iso_z(T0 + 9), "reason": "ask_user_question",
                                     "state": "GATE", "ticks": 14}],
            "moves": [{"from_session_id": SID, "to_session_id": "22222222-3333-4444-8555-666666666666",
                       "from_path": "/p/old.jsonl", "to_path": "/p/new.jsonl", "at": iso_z(T0 + 2)}],
            "move_pending": {"to_session_id": "33333333-4444-4555-8666-777777777777", "since": iso_z(T0 + 3)},
            "background_outputs": {"/tmp/claude/tasks/b1.output": 120},
            "last_gate_keys": ["toolu_1", "screen:ask_user_question:Which colour?"]}


def test_a_fresh_state_is_written_as_the_dict_poll_wrote(tmp_path):
    marker = tmp_path / "out" / "status.json"
    t = iso_z(T0)
    before = {"version": 1, "session": SESSION, "session_id": SID, "marker": str(marker), "started_at": t,
              "updated_at": t, "calls": 1, "ticks": 0, "transcript_path": None, "transcript_offset": 0,
              "last_change_at": t, "last_screen_hash": None, "last_state": None, "done_streak": 0, "done_since": None,
              "gate_streak": 0, "last_gate_id": None, "warned": {"hard_cap": False}, "exits": [], "moves": [],
              "move_pending": None, "background_outputs": {}}
    write_json(tmp_path / "before.json", before, SCHEMA)
    PollState.fresh(cfg(tmp_path), marker, T0).save(tmp_path / "after.json")
    assert (tmp_path / "after.json").read_bytes() == (tmp_path / "before.json").read_bytes()


def test_load_then_save_is_byte_identical(tmp_path):
    write_json(tmp_path / "a.json", every_key(tmp_path), SCHEMA)
    state = PollState.from_doc(read_json(tmp_path / "a.json", SCHEMA))
    state.save(tmp_path / "b.json")
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "a.json").read_bytes()
    assert state.moves[0].to_path == "/p/new.jsonl" and state.move_pending.since == iso_z(T0 + 3)
    assert state.exits[-1].exit == "GATE" and state.last_gate_keys[1].startswith("screen:")


def test_a_new_call_counts_itself_and_needs_fresh_gate_observations(tmp_path):
    c = cfg(tmp_path)
    write_json(Path(c.state_file), every_key(tmp_path), SCHEMA)
    state = PollState.load(c.state_file, c, tmp_path / "out" / "status.json", T0 + 60)
    expected = {**every_key(tmp_path), "calls": 3, "gate_streak": 0}
    assert json.dumps(state.to_doc()) == json.dumps(expected)
    assert state.call.max_ticks is None and state.call.ticks == 0


def test_a_state_file_of_an_older_poll_keeps_its_keys_and_gains_new_ones_at_the_end(tmp_path):
    """Before moves, background outputs and the DONE streak's start existed, a state file lacked them: it is written
    back without them until each is first set, then with it after the others, as poll always added them."""
    c = cfg(tmp_path)
    doc = every_key(tmp_path)
    for key in ("done_since", "moves", "move_pending", "background_outputs", "last_gate_keys"):
        del doc[key]
    write_json(Path(c.state_file), doc, SCHEMA)
    state = PollState.load(c.state_file, c, tmp_path / "out" / "status.json", T0 + 60)
    assert list(state.to_doc()) == list(doc) + ["moves"]          # the load itself starts the list of moves
    later = state.changed(done_since=iso_z(T0 + 61)).changed(last_gate_keys=("toolu_2",))
    assert list(later.to_doc())[-3:] == ["moves", "done_since", "last_gate_keys"]
    assert "move_pending" not in later.to_doc() and "background_outputs" not in later.to_doc()


def test_the_exit_history_keeps_the_newest_200(tmp_path):
    state = PollState.fresh(cfg(tmp_path), tmp_path / "out" / "status.json", T0)
    for n in range(205):
        state = state.changed(ticks=n).ended("TICK_BUDGET", f"{n}", iso_z(T0 + n))
    doc = state.to_doc()
    assert len(doc["exits"]) == 200 and doc["exits"][0]["reason"] == "5" and doc["updated_at"] == iso_z(T0 + 204)
