"""A verdict written by hand earns what it claims (README "The steps, one by one"): launch is read from the transcript, completion and
the last poll exit from poll-state.json; a claim they contradict is refused (exit 2, nothing written, one line naming
the problem and the fix); a goal PASS needs an evaluation.json the evaluator judged, else --override, which plan never
reuses."""
from __future__ import annotations

import json

import pytest

from live_trial.acceptance.plan import plan
from live_trial.transcript.builder import TranscriptBuilder
from tests.unit.acceptance.test_verdict_cmd import MODEL, run, snapshot, tree, written  # noqa: F401 - the fixture
from tests.unit.fakes import write_evaluation, write_poll_state

TARGET = "union-target:work"


def by_hand(tree: dict, *extra: str) -> list[str]:
    """The verdict line prepare prints: no --launch, --completion or --poll-exit."""
    return ["verdict", "--workdir", str(tree["wd"]), "--target-skill", TARGET,
            "--skill-dir", str(tree["plugins"] / "union-target" / "skills" / "work"), "--session-id", "s-1", *extra]


def refused(tree: dict, capsys, args: list[str], code: str) -> str:
    before = snapshot(tree["eval_root"])
    rc, out, err = run(args + ["--json"], capsys)
    assert rc == 2, (out, err)
    assert json.loads(out)["code"] == code
    assert snapshot(tree["eval_root"]) == before                    # nothing written, byte for byte
    rc, out, err = run(args, capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1, err     # one line: the problem and the fix
    return err


def no_skill_call(tree: dict) -> None:
    b = TranscriptBuilder(model=MODEL)
    b.turn("run", "DONE: ok", tools=1)
    b.write(tree["wd"] / "transcript.jsonl")


def test_the_printed_line_takes_launch_and_completion_from_the_records(tree, capsys) -> None:
    write_evaluation(tree["wd"], "PASS", evidence=[{"claim": "c", "source": "transcript.jsonl", "quote": "run",
                                                    "observed": "1 file written with 2 keys"}])
    rc, _, err = run(by_hand(tree), capsys)
    assert rc == 0, err
    doc = written(tree)
    assert (doc["launch"], doc["completion"], doc["poll_exit"], doc["overall"]["verdict"]) == (
        "PASS", "PASS", "DONE", "PASS")


def test_launch_pass_without_a_skill_call_is_refused(tree, capsys) -> None:
    no_skill_call(tree)
    err = refused(tree, capsys, by_hand(tree, "--launch", "PASS"), "contradicts_transcript")
    assert f"no successful Skill call to {TARGET}" in err and "leave out --launch" in err


def test_without_a_skill_call_the_launch_is_fail(tree, capsys) -> None:
    no_skill_call(tree)
    assert run(by_hand(tree), capsys)[0] == 0
    assert (written(tree)["launch"], written(tree)["overall"]["verdict"]) == ("FAIL", "FAIL")


def test_launch_fail_against_a_skill_call_is_refused(tree, capsys) -> None:
    refused(tree, capsys, by_hand(tree, "--launch", "FAIL"), "contradicts_transcript")


@pytest.mark.parametrize("exits, claim", [
    (("STALL",), ["--completion", "PASS"]),
    ((), ["--completion", "PASS"]),
    (None, ["--completion", "PASS"]),             # no poll-state.json at all
    (None, ["--poll-exit", "DONE"]),
    (("GATE",), ["--poll-exit", "DONE"]),
    (("DONE",), ["--completion", "FAIL"]),
])
def test_a_completion_or_poll_exit_the_poll_state_contradicts_is_refused(tree, capsys, exits, claim) -> None:
    if exits is None:
        (tree["wd"] / "poll-state.json").unlink()
    else:
        write_poll_state(tree["wd"], *exits)
    err = refused(tree, capsys, by_hand(tree, *claim), "contradicts_poll_state")
    assert f"leave out {claim[0]}" in err and "poll-state.json" in err
    # to poll again is the fix only where no poll recorded an exit; a recorded one is read as it is
    assert ("poll with --state-file" in err) == (exits is None or exits == ())


def test_override_does_not_change_the_records(tree, capsys) -> None:
    no_skill_call(tree)
    refused(tree, capsys, by_hand(tree, "--launch", "PASS", "--override", "I saw it launch"), "contradicts_transcript")


def test_a_poll_exit_without_a_poll_is_kept_when_it_is_not_done(tree, capsys) -> None:
    (tree["wd"] / "poll-state.json").unlink()
    assert run(by_hand(tree, "--poll-exit", "BLOCKED", "--blocked"), capsys)[0] == 0
    assert (written(tree)["poll_exit"], written(tree)["overall"]["verdict"]) == ("BLOCKED", "BLOCKED")


def test_a_verdict_of_a_workdir_poll_never_ran_for_is_refused_not_blamed_on_the_skill(tree, capsys) -> None:
    """The person skipped poll: the marker says ok, yet "did not get to the end" would blame the skill for a step the
    person skipped. Refused, nothing written, naming the step to run (README "The steps, one by one")."""
    (tree["wd"] / "poll-state.json").unlink()
    (tree["wd"] / "out").mkdir(exist_ok=True)
    (tree["wd"] / "out" / "status.json").write_text('{"status": "ok", "summary": "marked"}\n')
    err = refused(tree, capsys, by_hand(tree), "poll_never_ran")
    assert err.startswith("REFUSED: poll never ran for this workdir: run poll first"), err
    assert "--state-file" in err and "--poll-exit BLOCKED --blocked" in err, err


def test_a_verdict_of_a_workdir_whose_poll_never_ended_is_refused(tree, capsys) -> None:
    write_poll_state(tree["wd"])                      # a poll that was stopped before it recorded an exit
    err = refused(tree, capsys, by_hand(tree), "poll_not_ended")
    assert "poll never ended for this workdir" in err and "--state-file" in err and "` again" in err, err


def test_a_pass_without_an_evaluation_is_refused(tree, capsys) -> None:
    err = refused(tree, capsys, by_hand(tree, "--goal-result", "PASS", "--evidence", "1 file written with 2 keys"),
                  "not_judged")
    assert "no evaluator judged the goal" in err and "live-trial evaluate" in err and "--override" in err


def test_a_pass_on_an_evaluation_that_judged_nothing_is_refused(tree, capsys) -> None:
    write_evaluation(tree["wd"], "FAIL", judged_by="fallback", answered=False)
    err = refused(tree, capsys, by_hand(tree, "--goal-result", "PASS", "--evidence", "1 file written with 2 keys"),
                  "not_judged")
    assert "holds no judgement" in err


def test_without_an_evaluation_the_goal_is_not_judged(tree, capsys) -> None:
    assert run(by_hand(tree), capsys)[0] == 0
    doc = written(tree)
    assert (doc["goal_result"], doc["overall"]["verdict"]) == (None, "DEGRADED")
    assert "goal not judged" in doc["overall"]["reasons"][0]


def test_an_overridden_pass_is_recorded_and_never_reused(tree, capsys) -> None:
    args = by_hand(tree, "--goal-result", "PASS", "--evidence", "1 file written with 2 keys", "--requested-model",
                   MODEL, "--override", "the evaluator cannot read the binary report")
    rc, _, err = run(args, capsys)
    assert rc == 0, err
    doc = written(tree)
    assert doc["overall"]["verdict"] == "PASS" and doc["override"]["evaluation_goal_result"] is None
    assert any("rests on --override" in n for n in doc["notes"])
    row = next(s for s in plan([tree["plugins"] / "union-target"], tree["eval_root"], watches=[])["skills"]
               if s["target"] == TARGET)
    assert row["action"] == "run" and "--override" in row["reason"] and "never reused" in row["reason"]
