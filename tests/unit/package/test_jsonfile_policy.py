from __future__ import annotations

import json

import pytest

from live_trial.errors import RefusedInput, SchemaInvalid
from live_trial.jsonfile import read_json, write_json
from live_trial.policy import load_policy


def test_invalid_document_is_never_written(tmp_path):
    path = tmp_path / "files.json"
    path.write_text("previous\n")
    with pytest.raises(SchemaInvalid) as err:
        write_json(path, {"added": [], "extra": 1}, "side-effects.schema.json")
    assert "side-effects.schema.json" in err.value.message
    assert path.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["files.json"]  # no temp file left behind


def test_valid_document_round_trips(tmp_path):
    doc = {"added": ["a"], "changed": [], "removed": [], "copied": ["a"]}
    write_json(tmp_path / "f.json", doc, "side-effects.schema.json")
    assert read_json(tmp_path / "f.json", "side-effects.schema.json") == doc


def test_read_json_names_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(RefusedInput, match="bad.json"):
        read_json(bad, None)


def test_policy_defaults_and_env_overrides():
    p = load_policy({})
    assert (p.nudge_max, p.stall_limit_s, p.hard_cap_s, p.poll_interval_s, p.done_stable_ticks) == (2, 300, 7200, 0.5, 2)
    p = load_policy({"STALL_LIMIT": "12", "HARD_CAP": "30.5"})
    assert (p.stall_limit_s, p.hard_cap_s) == (12.0, 30.5)


@pytest.mark.parametrize("value", ["abc", "0", "-3"])
def test_policy_refuses_bad_env(value):
    with pytest.raises(RefusedInput, match="STALL_LIMIT"):
        load_policy({"STALL_LIMIT": value})


def test_policy_file_is_the_single_source():
    from live_trial.resources import read_reference

    raw = json.loads(read_reference("convergence-policy.json"))["loop_bounds"]["trial_acceptance"]
    assert load_policy({}).stall_limit_s == raw["stall_limit_s"]
