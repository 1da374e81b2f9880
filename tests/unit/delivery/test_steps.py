"""The first artifact's guards and presentation, the person's choice and accept-as-is, through `live-trial delivery
record` (README "Use it from Claude Code"; seed 001 "Pre-choice usable artifact execution"): the harness checks the
guards itself, a refusal changes nothing, and accept-as-is ends with the goal not judged, said so."""
from __future__ import annotations

import json

import pytest

from live_trial.acceptance import delivery_state as ds
from live_trial.cli.main import main
from live_trial.delivery import guards
from live_trial.delivery.steps import record
from live_trial.delivery.ticket import ticket_items
from live_trial.errors import RefusedInput
from tests.unit.acceptance.test_verdict_cmd import run, snapshot, tree, written  # noqa: F401 - the fixture
from tests.unit.acceptance.test_verdict_earned import by_hand
from tests.unit.trial.test_first_artifact import deliver


@pytest.fixture
def first(tree, capsys):
    deliver(tree)
    assert run(by_hand(tree), capsys)[0] == 0
    return tree["wd"]


def test_a_guard_that_fails_refuses_the_event_and_changes_nothing(first):
    before = snapshot(first)
    with pytest.raises(RefusedInput) as caught:
        record(first, "minimum_guard_pass", running=lambda state: [f"the tmux session {state['session']}"])
    assert caught.value.code == "guard_failed" and "still running: the tmux session lt-" in caught.value.message
    assert snapshot(first) == before                                # not even report.html


def test_a_secret_in_what_is_shown_is_refused_without_showing_it(first):
    doc = json.loads((first / "verdict.json").read_text())
    doc["notes"].append("ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
    (first / "verdict.json").write_text(json.dumps(doc))
    d = ds.load(first)
    ds.update(d, artifact={**d.doc["artifact"], "sha256": ds.sha256_of(first / "verdict.json")})
    with pytest.raises(RefusedInput) as caught:
        record(first, "minimum_guard_pass", running=lambda state: [])
    assert "secret: verdict.json holds an Anthropic API key" in caught.value.message
    assert "abcdefghij" not in caught.value.message


def test_guards_then_presentation_then_the_choice_then_accept_as_is(first, capsys):
    done = record(first, "minimum_guard_pass", running=lambda state: [], lang="en")
    assert done.delivery.state == "minimal_guard_passed" and (first / "report.html").is_file()
    shown = record(first, "present_actual_artifact", lang="en").lines
    sha = ds.sha256_of(first / "verdict.json")
    assert shown[0] == f"WORKDIR: {first}" and shown[1] == f"VERDICT: {first / 'verdict.json'} {sha}"
    assert shown[2].startswith(f"REPORT: {first / 'report.html'} (open it in a browser: file://")
    assert shown[3].startswith("OUTCOME: union-target:work ran: it launched PASS, reached its completion marker PASS; the goal "
                               "is not judged yet")
    assert shown[4].startswith("CHOOSE: accept-as-is: ") and "up to 3 rounds" in shown[4]
    with pytest.raises(RefusedInput, match="--choice"):
        record(first, "record_user_choice", choice="maybe")
    assert main(["evaluate", "--workdir", str(first)]) == 2              # nothing after the choice before it
    assert "only after the person's choice" in capsys.readouterr().err
    record(first, "record_user_choice", choice="accept-as-is")
    end = record(first, "accept-as-is", lang="en")
    assert end.delivery.state == "handoff_complete"
    assert end.lines == [f"HANDOFF: Accepted as it is: the goal of union-target:work was not judged (no evaluator "
                         f"ran). The first artifact is {first / 'verdict.json'}."]
    assert end.delivery.doc["handoff"]["converged"] is None and written({"wd": first})["goal_result"] is None
    assert main(["evaluate", "--workdir", str(first)]) == 2
    assert "accepted the first artifact as it is" in capsys.readouterr().err


def test_the_cli_refuses_an_event_the_state_does_not_allow_byte_for_byte(first, capsys):
    before = snapshot(first)
    assert main(["delivery", "record", str(first), "--event", "standard", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["code"] == "bad_transition"
    assert snapshot(first) == before


@pytest.mark.parametrize("choice, kinds", [("light", ["blocker"]), ("standard", ["blocker", "blocker"]),
                                           ("detailed", ["blocker", "blocker", "criterion"])])
def test_the_ticket_depth_follows_the_choice(choice, kinds):
    doc = {"goal_blockers": ["a", "b"], "overall": {"reasons": ["r"]},
           "criteria": [{"id": "OUT1", "text": "t", "result": "fail"}, {"id": "IN1", "text": "u", "result": "pass"}]}
    assert [i["kind"] for i in ticket_items(doc, choice)] == kinds


def test_a_verdict_degraded_without_blockers_gives_its_reasons():
    doc = {"goal_blockers": [], "overall": {"reasons": ["1 nudge(s) were needed: not self-driven"]}}
    assert ticket_items(doc, "standard") == [{"kind": "reason", "text": "1 nudge(s) were needed: not self-driven"}]


@pytest.mark.parametrize("text, kind", [("key sk-ant-api03-" + "x" * 30, "an Anthropic API key"),
                                        ("AKIA" + "A" * 16, "an AWS access key"),
                                        ("-----BEGIN RSA PRIVATE KEY-----", "a private key"),
                                        ('"password": "hunter2hunter2hunter2"', "a password or token assignment")])
def test_secrets_are_found_by_kind(text, kind):
    assert kind in guards.secrets_in(text)
    assert guards.secrets_in("greeting.txt holds Hello, World!") == []


def test_show_before_the_first_artifact_says_where_the_delivery_is(tree, capsys):
    """A workdir prepared for a delivery with no verdict yet: `delivery show` prints that it has not started (exit 0,
    README "Use it from Claude Code": it prints where it is); an event there is still refused."""
    deliver(tree)
    assert main(["delivery", "show", str(tree["wd"])]) == 0
    assert capsys.readouterr().out.startswith("DELIVERY: not started (the first `verdict`")
    assert main(["delivery", "show", str(tree["wd"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"status": "DELIVERY", "delivery": None, "improvement": None}
    assert main(["delivery", "record", str(tree["wd"]), "--event", "minimum_guard_pass"]) == 2
