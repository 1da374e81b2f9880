"""trial-state.json as a typed TrialState: the schema's keys, a round trip, older states, misspelt fields."""
from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from live_trial.trial import state as ts
from live_trial.workdir_files import TRIAL_STATE

SCHEMA = json.loads((Path(__file__).parents[3] / "schemas" / "trial-state.schema.json").read_text())


def minimal() -> dict:
    return {"schema_version": 1, "run_id": "20261202T010000-abcd", "target": "p:s", "plugin": "p", "skill": "s",
            "cwd": "/w/cwd", "session": "lt-20261202T010000-abcd-s", "session_id": "8c1f0b9e-1111-4222-8333-444455556666",
            "phase": "created", "owner_pid": 42, "started_at": "2026-12-02T01:00:00.000Z", "nudge_count": 0,
            "gate_response_count": 0, "gate_responses": [], "stall_extended": False, "rehearsal": None}


def test_the_fields_are_the_schemas_keys_and_the_unset_ones_left_out_are_those_that_cannot_be_null():
    assert {f.name for f in fields(ts.TrialState)} == set(SCHEMA["properties"])
    required = set(SCHEMA["required"])
    not_null = {k for k, v in SCHEMA["properties"].items() if k not in required and "null" not in json.dumps(v.get("type", ""))}
    unset = ts.TrialState.from_doc({**minimal(), **{k: None for k in set(SCHEMA["properties"]) - required}})
    assert set(SCHEMA["properties"]) - set(unset.to_doc()) == not_null


def test_an_older_state_reads_back_and_is_written_again_with_the_same_keys(tmp_path):
    path = tmp_path / TRIAL_STATE
    path.write_text(json.dumps(minimal()))
    state = ts.TrialState.load(path)
    assert state.args is None and state.gate_answers is None and state.session == "lt-20261202T010000-abcd-s"
    state.save(tmp_path / "again.json")
    again = json.loads((tmp_path / "again.json").read_text())
    nullable_unset = {"socket", "config_dir", "claude_bin", "claude_version", "model", "pane_pid", "cwd_snapshot",
                      "lang", "evaluator", "notification", "closure", "containment", "evaluator_containment",
                      "mcp_fixtures"}
    assert again == {**minimal(), **{k: None for k in nullable_unset}}


def test_update_sets_fields_and_refuses_a_name_that_is_not_one():
    state = ts.TrialState.from_doc(minimal())
    state.update(phase="polling", nudge_count=2)
    assert (state.phase, state.nudge_count) == ("polling", 2)
    with pytest.raises(AttributeError, match="no field 'nudges'"):
        state.update(nudges=3)


def test_a_state_the_schema_refuses_is_not_written(tmp_path):
    from live_trial.errors import LiveTrialError

    state = ts.TrialState.from_doc(minimal())
    state.phase = "dancing"
    with pytest.raises(LiveTrialError):
        state.save(tmp_path / "s.json")
    assert not (tmp_path / "s.json").exists()
