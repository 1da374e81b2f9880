"""``verdict`` in a workdir prepared for a delivery (README "Use it from Claude Code"; seed 001 artifact_delivery):
the first verdict's goal is not judged (never a PASS) and creates delivery.json; after the person's choice and the
fresh evaluator, the same command completes it by the same rules as any verdict, without --override, keeping the
first artifact byte for byte; anything else is refused with nothing written."""
from __future__ import annotations

import json

import pytest

from live_trial.acceptance import delivery_state as ds
from live_trial.acceptance.plan import plan
from live_trial.jsonfile import write_json
from tests.unit.acceptance.test_verdict_cmd import run, snapshot, tree, written  # noqa: F401 - the fixture
from tests.unit.acceptance.test_verdict_earned import by_hand
from tests.unit.fakes import write_evaluation

EVIDENCE = [{"claim": "c", "source": "transcript.jsonl", "quote": "run", "observed": "1 file written with 2 keys"}]


def deliver(tree: dict, **changes) -> None:
    """Make the tree's workdir one `prepare --delivery` made."""
    path = tree["wd"] / "trial-state.json"
    state = json.loads(path.read_text())
    write_json(path, {**state, "phase": "prepared", "delivery": True, **changes}, "trial-state.schema.json")


def choose(tree: dict, choice: str = "standard") -> None:
    d = ds.load(tree["wd"])
    for event in ("minimum_guard_pass", "present_actual_artifact"):
        d = ds.advance(d, event)
    ds.advance(ds.advance(d, "record_user_choice", choice=choice), choice)


def refused(tree, capsys, args, code) -> None:
    before = snapshot(tree["eval_root"])
    rc, out, err = run([*args, "--json"], capsys)
    assert rc == 2 and json.loads(out)["code"] == code, (out, err)
    assert snapshot(tree["eval_root"]) == before


def test_the_first_artifact_has_its_goal_not_judged_and_creates_the_delivery(tree, capsys):
    deliver(tree)
    rc, out, err = run(by_hand(tree), capsys)
    assert rc == 0, err
    doc = written(tree)
    assert doc["goal_result"] is None and doc["overall"]["verdict"] == "DEGRADED"
    assert "goal not judged" in doc["overall"]["reasons"] and doc.get("override") is None
    assert any("the first artifact of a delivery" in n for n in doc["notes"])
    d = ds.load(tree["wd"])
    assert d.state == "artifact_created" and d.doc["artifact"]["sha256"] == ds.sha256_of(tree["wd"] / "verdict.json")
    row = next(s for s in plan([tree["plugins"] / "union-target"], tree["eval_root"], watches=[])["skills"]
               if s["target"] == "union-target:work")
    assert row["action"] == "run"                                      # plan never reuses a goal not judged


@pytest.mark.parametrize("extra", [["--goal-result", "PASS", "--evidence", "1 file written with 2 keys"],
                                   ["--override", "I looked at it"], ["--goal-blocker", "x"]])
def test_a_goal_claim_or_override_on_the_first_artifact_is_refused(tree, capsys, extra):
    deliver(tree)
    write_evaluation(tree["wd"], "PASS", evidence=EVIDENCE) if "--goal-result" in extra else None
    refused(tree, capsys, by_hand(tree, *extra), "bad_value")


def test_an_evaluation_before_the_first_artifact_is_refused(tree, capsys):
    deliver(tree)
    write_evaluation(tree["wd"], "PASS", evidence=EVIDENCE)
    refused(tree, capsys, by_hand(tree), "not_first_artifact")


def test_a_second_verdict_before_the_choice_is_refused(tree, capsys):
    deliver(tree)
    assert run(by_hand(tree), capsys)[0] == 0
    refused(tree, capsys, by_hand(tree), "verdict_exists")
    refused(tree, capsys, by_hand(tree, "--override", "again"), "bad_value")


def test_after_the_choice_the_evaluator_completes_the_verdict_by_the_same_rules(tree, capsys):
    deliver(tree)
    assert run(by_hand(tree), capsys)[0] == 0
    first = (tree["wd"] / "verdict.json").read_bytes()
    choose(tree)
    refused(tree, capsys, by_hand(tree), "not_judged")                  # evaluate first
    write_evaluation(tree["wd"], "FAIL", blockers=["0 greeting files among the side effects"])
    rc, out, err = run(by_hand(tree), capsys)
    assert rc == 0, err
    doc = written(tree)
    assert (doc["goal_result"], doc["overall"]["verdict"], doc.get("override")) == ("FAIL", "DEGRADED", None)
    assert doc["goal_blockers"] == ["0 greeting files among the side effects"]
    assert (tree["wd"] / "verdict-first.json").read_bytes() == first     # the artifact the person was shown
    d = ds.load(tree["wd"])
    assert d.doc["artifact"]["verdict"] == "verdict-first.json"
    assert d.doc["completed"] == {"sha256": ds.sha256_of(tree["wd"] / "verdict.json"), "overall": "DEGRADED",
                                  "goal_result": "FAIL"}
    refused(tree, capsys, by_hand(tree), "verdict_exists")              # completed once

    # the same rules as a verdict outside a delivery: the same records give the same judgement
    (tree["wd"] / "delivery.json").unlink()
    (tree["wd"] / "verdict.json").unlink()
    deliver(tree, delivery=False)
    assert run(by_hand(tree), capsys)[0] == 0
    plain = written(tree)
    keep = ("launch", "completion", "goal_result", "goal_blockers", "overall", "nudge_count", "poll_exit", "criteria")
    assert {k: plain[k] for k in keep} == {k: doc[k] for k in keep}


def test_a_verdict_changed_since_it_was_presented_is_not_completed(tree, capsys):
    deliver(tree)
    assert run(by_hand(tree), capsys)[0] == 0
    choose(tree)
    write_evaluation(tree["wd"], "PASS", evidence=EVIDENCE)
    doc = written(tree)
    (tree["wd"] / "verdict.json").write_text(json.dumps({**doc, "summary": "edited"}))
    refused(tree, capsys, by_hand(tree), "artifact_changed")


def test_verdict_counts_the_nudges_the_harness_sent_without_a_claim(tree, capsys):
    deliver(tree, nudge_count=1)
    assert run(by_hand(tree), capsys)[0] == 0
    assert written(tree)["nudge_count"] == 1
    (tree["wd"] / "verdict.json").unlink()
    (tree["wd"] / "delivery.json").unlink()
    refused(tree, capsys, by_hand(tree, "--nudge-count", "0"), "contradicts_record")
