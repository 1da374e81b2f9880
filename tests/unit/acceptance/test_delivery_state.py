"""delivery.json holds seed 001's artifact_delivery state machine (README "Use it from Claude Code"): the schema spells
the transitions, the harness reads them from there, an event not allowed from the current state is refused (exit 2)
and the file stays byte for byte as it was; nothing after the choice runs before it."""
from __future__ import annotations

import json

import pytest

from live_trial.acceptance import delivery_state as ds
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json, write_json
from tests.unit.fakes import write_state

#: seed 001 frontmatter, artifact_delivery.state_machine.transitions (light|standard|detailed spelled out)
SEED = [("artifact_created", "minimum_guard_pass", "minimal_guard_passed"),
        ("minimal_guard_passed", "present_actual_artifact", "artifact_presented"),
        ("artifact_presented", "record_user_choice", "user_choice_recorded"),
        ("user_choice_recorded", "accept-as-is", "handoff_complete"),
        ("user_choice_recorded", "light", "semantic_evaluator_started"),
        ("user_choice_recorded", "standard", "semantic_evaluator_started"),
        ("user_choice_recorded", "detailed", "semantic_evaluator_started"),
        ("semantic_evaluator_started", "improvement_complete", "handoff_complete")]
EVENTS = sorted({e for _, e, _ in SEED})


def test_the_schema_spells_the_seeds_transitions_and_the_artifacts_creation():
    table = ds.transitions()
    assert {(f, e): t for f, e, t in SEED} == {k: v for k, v in table.items() if k[0] is not None}
    assert [(k, v) for k, v in table.items() if k[0] is None] == [((None, "create_artifact"), "artifact_created")]


@pytest.fixture
def workdir(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    write_state(wd, "hello", "greet")
    (wd / "verdict.json").write_text('{"a": 1}\n')
    return wd


def walk(delivery, *events):
    for event in events:
        delivery = ds.advance(delivery, event, **({"choice": "standard"} if event == "record_user_choice" else {}))
    return delivery


@pytest.mark.parametrize("state_events", [(), ("minimum_guard_pass",), ("minimum_guard_pass", "present_actual_artifact"),
                                          ("minimum_guard_pass", "present_actual_artifact", "record_user_choice"),
                                          ("minimum_guard_pass", "present_actual_artifact", "record_user_choice",
                                           "standard")])
def test_every_event_not_allowed_from_a_state_is_refused_and_nothing_changes(workdir, state_events):
    delivery = walk(ds.create(workdir, overall="DEGRADED", lang="en"), *state_events)
    allowed = ds.events_from(delivery.state)
    before = delivery.path.read_bytes()
    for event in EVENTS:
        if event in allowed and (delivery.state != "user_choice_recorded" or event == "standard"):
            continue
        with pytest.raises(RefusedInput) as caught:
            ds.advance(delivery, event)
        assert caught.value.code == "bad_transition"
        assert delivery.path.read_bytes() == before


def test_the_history_records_each_step_and_the_file_fits_its_schema(workdir):
    d = walk(ds.create(workdir, overall="DEGRADED", lang="en"), "minimum_guard_pass", "present_actual_artifact",
             "record_user_choice", "standard", "improvement_complete")
    doc = read_json(d.path, ds.SCHEMA)
    assert [(h["from"], h["event"], h["to"]) for h in doc["history"]] == [
        (None, "create_artifact", "artifact_created"), *[(f, e, t) for f, e, t in SEED if e in (
            "minimum_guard_pass", "present_actual_artifact", "record_user_choice", "standard",
            "improvement_complete")]]
    assert doc["state"] == "handoff_complete" and doc["choice"] == "standard"


def test_the_schema_refuses_a_history_step_the_seed_does_not_have(workdir):
    d = ds.create(workdir, overall="DEGRADED", lang="en")
    doc = json.loads(d.path.read_text())
    doc["history"].append({"from": "artifact_created", "event": "standard", "to": "semantic_evaluator_started",
                           "at": "2026-12-01T00:00:00Z"})
    with pytest.raises(Exception):
        write_json(d.path, doc, ds.SCHEMA)


def test_post_choice_steps_are_refused_before_the_choice_and_after_accept_as_is(workdir):
    assert ds.require_choice(workdir, "evaluate") is None          # not under the contract: no refusal
    state = json.loads((workdir / "trial-state.json").read_text())
    write_json(workdir / "trial-state.json", {**state, "delivery": True}, "trial-state.schema.json")
    with pytest.raises(RefusedInput) as caught:
        ds.require_choice(workdir, "evaluate")                    # no artifact yet
    assert caught.value.code == "no_choice_recorded"
    d = ds.create(workdir, overall="DEGRADED", lang="en")
    for event in ("minimum_guard_pass", "present_actual_artifact", "record_user_choice"):
        with pytest.raises(RefusedInput, match="only after the person's choice"):
            ds.require_choice(workdir, "evaluate")
        d = walk(d, event)
    accepted = ds.advance(ds.update(d, choice="accept-as-is"), "accept-as-is")
    with pytest.raises(RefusedInput) as caught:
        ds.require_choice(workdir, "evaluate")
    assert caught.value.code == "accepted_as_is" and accepted.state == "handoff_complete"


def test_the_event_after_the_choice_is_the_choice(workdir):
    d = walk(ds.create(workdir, overall="DEGRADED", lang="en"), "minimum_guard_pass", "present_actual_artifact",
             "record_user_choice")
    with pytest.raises(RefusedInput, match="not the choice recorded"):
        ds.advance(d, "light")
    assert ds.advance(d, "standard").state == "semantic_evaluator_started"
