"""``verdict`` by hand never silently contradicts the fresh evaluator nor replaces a verdict (README "The steps, one by
one"): a ``--goal-result`` other than evaluation.json's, or a second verdict, is refused (exit 2, nothing written)
unless ``--override "why"``, which the verdict records; without ``--goal-result`` the evaluator's judgement is the
goal's; plan never reuses a PASS that overrode the evaluator."""
from __future__ import annotations

import json

from live_trial.acceptance.plan import plan
from live_trial.judge.evaluator import unjudged_problem
from live_trial.jsonfile import schema_errors
from live_trial.stop_reasons import StopReason, blocked_reason
from tests.unit.fakes import write_evaluation
from tests.unit.acceptance.test_verdict_cmd import SCHEMA, argv, run, tree, tree_hash, written

__all__ = ["tree"]       # the fixture, used by name

ITEM = {"claim": "the report holds its line", "source": "side-effects/files/report.txt", "quote": "a,1",
        "observed": "1 file with 1 line"}


def with_report(t: dict) -> dict:
    (t["wd"] / "side-effects" / "files").mkdir(parents=True)
    (t["wd"] / "side-effects" / "files" / "report.txt").write_text("a,1\n")
    return t


def refused(t: dict, capsys, args: list[str], code: str) -> str:
    before = tree_hash(t["eval_root"])
    rc, out, _ = run(args + ["--json"], capsys)
    doc = json.loads(out)
    assert rc == 2 and doc["code"] == code, doc
    assert tree_hash(t["eval_root"]) == before and not (t["wd"] / "verdict.json").exists()
    return doc["message"]


def test_a_goal_that_contradicts_the_evaluator_is_refused(tree, capsys):
    write_evaluation(tree["wd"], "FAIL", blockers=["0 report files found"])
    msg = refused(tree, capsys, argv(tree), "contradicts_evaluation")
    assert "--goal-result PASS contradicts the fresh evaluator's FAIL" in msg and "0 report files found" in msg


def test_override_writes_and_records_why_and_what_the_evaluator_said(tree, capsys):
    write_evaluation(tree["wd"], "FAIL", blockers=["0 report files found"])
    code, _, err = run(argv(tree, "--override", "the evaluator could not read the binary report"), capsys)
    assert code == 0, err
    doc = written(tree)
    assert schema_errors(doc, SCHEMA) == [] and doc["goal_result"] == "PASS"
    assert doc["override"] == {"why": "the evaluator could not read the binary report",
                               "evaluation_goal_result": "FAIL", "replaced": None}
    row = next(s for s in plan([tree["plugins"] / "union-target"], tree["eval_root"], watches=[])["skills"]
               if s["target"] == "union-target:work")
    assert row["action"] == "run" and "overrode the evaluator's FAIL" in row["reason"], row["reason"]


def test_without_goal_result_the_evaluator_judgement_is_the_goal(tree, capsys):
    with_report(tree)
    write_evaluation(tree["wd"], "PASS", evidence=[ITEM])
    args = argv(tree)
    i = args.index("--goal-result")
    del args[i:i + 2]
    code, _, err = run([a for a in args if a not in ("--evidence", "1 file written with 2 keys")], capsys)
    assert code == 0, err
    doc = written(tree)
    assert doc["goal_result"] == "PASS" and doc["evidence"] == [ITEM] and doc["overall"]["verdict"] == "PASS"
    assert any("the fresh evaluator's (evaluation.json)" in n for n in doc["notes"]) and "override" not in doc


def test_the_same_goal_without_evidence_takes_the_evaluator_evidence(tree, capsys):
    with_report(tree)
    write_evaluation(tree["wd"], "PASS", evidence=[ITEM])
    args = [a for a in argv(tree) if a not in ("--evidence", "1 file written with 2 keys")]
    assert run(args, capsys)[0] == 0
    assert written(tree)["evidence"] == [ITEM]


def test_an_evaluator_that_could_not_answer_judged_nothing(tree, capsys):
    """As in ``run`` (README "Whose failure it is"): BLOCKED evaluator_failed with the CLI's last reason, never
    DEGRADED "goal not judged" as if the skill had fallen short."""
    doc = write_evaluation(tree["wd"], "FAIL", judged_by="fallback", answered=False)
    args = argv(tree)
    i = args.index("--goal-result")
    del args[i:i + 2]
    assert run([a for a in args if a not in ("--evidence", "1 file written with 2 keys")], capsys)[0] == 0
    verdict = written(tree)
    assert (verdict["goal_result"], verdict["overall"]["verdict"], verdict["stop_reason"], verdict["blocked"]) == (
        None, "BLOCKED", "evaluator_failed", True)
    assert verdict["overall"]["reasons"][0] == blocked_reason("evaluator_failed")
    assert any("Not logged in" in r for r in verdict["overall"]["reasons"]), verdict["overall"]   # the real cause
    # the note run writes for the same evaluation.json, word for word (one rule: unjudged_problem)
    assert f"{StopReason.EVALUATOR_FAILED.why}: {unjudged_problem(doc)}" in verdict["notes"], verdict["notes"]
    assert unjudged_problem(doc).startswith("its last attempt: the CLI reported an error")


def test_an_evaluator_whose_every_process_failed_is_named_by_how_it_failed() -> None:
    attempt = {"problems": ["no JSON result"], "process_failure": "the evaluator did not answer in time"}
    doc = {"judged_by": "fallback", "attempts": [attempt, dict(attempt)]}
    assert unjudged_problem(doc) == "the evaluator did not answer in time"
    assert unjudged_problem({**doc, "attempts": [attempt, {"problems": ["a score is not allowed"]}]}) == (
        "its last attempt: a score is not allowed")
    assert unjudged_problem({**doc, "judged_by": "insufficient_evidence"}) is None    # a judgement: a FAIL


def test_a_person_judging_a_goal_the_evaluator_could_not_is_still_their_claim(tree, capsys):
    write_evaluation(tree["wd"], "FAIL", judged_by="fallback", answered=False)
    args = argv(tree, goal="FAIL")
    assert run(args, capsys)[0] == 0
    verdict = written(tree)
    assert (verdict["goal_result"], verdict["overall"]["verdict"], verdict["stop_reason"]) == (
        "FAIL", "DEGRADED", None)


def test_a_stop_reason_other_than_the_evaluator_failure_is_refused(tree, capsys):
    write_evaluation(tree["wd"], "FAIL", judged_by="fallback", answered=False)
    args = [a for a in argv(tree) if a not in ("--evidence", "1 file written with 2 keys")]
    i = args.index("--goal-result")
    del args[i:i + 2]
    assert "evaluator_failed" in refused(tree, capsys, args + ["--stop-reason", "hang"], "contradicts_records")


def test_evidence_without_goal_result_is_refused_when_the_evaluator_judged(tree, capsys):
    write_evaluation(tree["wd"], "FAIL")
    args = argv(tree)
    i = args.index("--goal-result")
    del args[i:i + 2]
    assert "without --goal-result" in refused(tree, capsys, args, "bad_value")


def test_a_second_verdict_is_refused_unless_override_and_the_replaced_one_is_recorded(tree, capsys):
    assert run(argv(tree), capsys)[0] == 0
    first = written(tree)
    before = (tree["wd"] / "verdict.json").read_bytes()
    rc, out, _ = run(argv(tree, "--json"), capsys)
    assert rc == 2 and json.loads(out)["code"] == "verdict_exists"
    assert (tree["wd"] / "verdict.json").read_bytes() == before
    assert run(argv(tree, "--override", "re-judged by hand", goal="FAIL"), capsys)[0] == 0
    doc = written(tree)
    assert doc["goal_result"] == "FAIL" and doc["override"] == {
        "why": "re-judged by hand", "evaluation_goal_result": "PASS",
        "replaced": {"overall": "PASS", "written_at": first["written_at"]}}


def test_an_empty_override_reason_is_refused(tree, capsys):
    write_evaluation(tree["wd"], "FAIL")
    assert "needs the reason" in refused(tree, capsys, argv(tree, "--override", " "), "bad_value")
