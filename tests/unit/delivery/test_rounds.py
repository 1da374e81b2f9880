"""The improvement loop through its harness verbs (README "Use it from Claude Code"; seed 001 feedback_contract
max_iterations 3, seed 002 diff tickets): each round is a ticket from the last judged verdict, the skill's files changed
(measured), and a new trial of the same case judged by its own fresh evaluator; the ledger refuses a fourth round, the
end is handoff_complete with what still fails, and the iter-improve skill is named when it is installed."""
from __future__ import annotations

import json
import shutil
import uuid

import pytest

from live_trial.acceptance import delivery_state as ds
from live_trial.cli.main import main
from live_trial.clock import utc_now
from live_trial.delivery import ledger as book
from live_trial.delivery.rounds import close_round, write_ticket
from live_trial.delivery.steps import record
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json, write_json
from tests.unit.acceptance.test_verdict_cmd import run, snapshot, tree  # noqa: F401 - the fixture
from tests.unit.acceptance.test_verdict_earned import by_hand
from tests.unit.fakes import write_evaluation, write_poll_state, write_state

SKILL_MD = "plugins/union-target/skills/work/SKILL.md"


def nothing_runs(state):
    return []


def judged_trial(tree: dict, capsys, name: str, goal: str, *, first: bool = False) -> object:
    """A trial workdir of union-target:work in the tree's eval root, judged by a fresh evaluator (its own session id),
    its verdict written by `verdict`; ``first``: the delivery's first trial (its choice recorded: standard)."""
    wd = tree["wd"] if first else tree["wd"].parent / name
    if not first:
        wd.mkdir()
        shutil.copy(tree["wd"] / "transcript.jsonl", wd / "transcript.jsonl")
        write_state(wd, "union-target", "work")
        write_poll_state(wd, "DONE")
    state = json.loads((wd / "trial-state.json").read_text())
    write_json(wd / "trial-state.json", {**state, "phase": "prepared", "started_at": utc_now(), "args": "x",
                                         "plugins_root": str(tree["plugins"]), **({"delivery": True} if first else {})},
               "trial-state.schema.json")
    if first:
        assert run(by_hand(tree), capsys)[0] == 0
        for event, kw in (("minimum_guard_pass", {}), ("present_actual_artifact", {}),
                          ("record_user_choice", {"choice": "standard"}), ("standard", {})):
            record(wd, event, running=nothing_runs, **kw)
    doc = write_evaluation(wd, goal, blockers=None if goal == "PASS" else [f"0 files found ({name})"],
                           evidence=[{"claim": "c", "source": "transcript.jsonl", "quote": "run",
                                      "observed": "1 file written with 2 keys"}] if goal == "PASS" else None)
    write_json(wd / "evaluation.json", {**doc, "session_id": str(uuid.uuid4())}, "evaluation.schema.json")
    args = by_hand(tree)
    args[args.index("--workdir") + 1] = str(wd)
    rc, _, err = run(args, capsys)
    assert rc == 0, err
    return wd


def edit_skill(tree: dict, n: int) -> None:
    path = tree["plugins"].parent / SKILL_MD
    path.write_text(path.read_text() + f"\nround {n}: one more line\n")


def test_a_skill_that_never_converges_stops_after_three_rounds_with_the_reasons(tree, capsys, tmp_path, monkeypatch):
    w0 = judged_trial(tree, capsys, "w0", "FAIL", first=True)
    for n in (1, 2, 3):
        ticket = write_ticket(w0, lang="en")
        assert ticket.n == n and ticket.path.name == f"ticket-{n}.md" and ticket.max_rounds == 3
        assert "## What is missing" in ticket.text and "## The original intent" in ticket.text
        edit_skill(tree, n)
        close_round(w0, judged_trial(tree, capsys, f"w{n}", "FAIL"))
    ledger = book.load(w0)
    assert [r["n"] for r in ledger.rounds] == [0, 1, 2, 3]
    assert all(r["changed"] and r["changed"][0]["path"] == "SKILL.md" for r in ledger.rounds[1:])
    assert len({r["trial"]["evaluator_session"] for r in ledger.rounds}) == 4      # a fresh evaluator each round
    before = snapshot(w0)
    with pytest.raises(RefusedInput) as caught:
        write_ticket(w0, lang="en")                                                # a fourth round
    assert caught.value.code == "round_limit" and snapshot(w0) == before
    iter_improve = tree["plugins"] / "union-target" / "skills" / "run-skill-iter-improve"
    iter_improve.mkdir()
    (iter_improve / "SKILL.md").write_text("---\nname: run-skill-iter-improve\ndescription: improve\n---\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-config"))
    done = record(w0, "improvement_complete", running=nothing_runs, lang="en")
    assert done.delivery.state == "handoff_complete"
    message = done.delivery.doc["handoff"]["message"]
    assert message.startswith("union-target:work did not converge: 3 round(s) run, at most 3 for the choice standard")
    assert "0 files found (w3)" in message and "run-skill-iter-improve" in message
    assert done.delivery.doc["handoff"] == {"message": message, "converged": False, "rounds": 3}
    read_json(w0 / "improvement.json", book.SCHEMA)


def test_the_loop_stops_at_the_first_pass(tree, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-config"))
    w0 = judged_trial(tree, capsys, "w0", "FAIL", first=True)
    write_ticket(w0, lang="en")
    with pytest.raises(RefusedInput) as caught:                 # a round is open: no end, no second ticket
        record(w0, "improvement_complete", running=nothing_runs, lang="en")
    assert caught.value.code == "round_open"
    edit_skill(tree, 1)
    close_round(w0, judged_trial(tree, capsys, "w1", "PASS"))
    with pytest.raises(RefusedInput) as caught:
        write_ticket(w0, lang="en")
    assert caught.value.code == "converged"
    assert "goal not judged" in (w0 / "report.html").read_text()          # the first artifact's page
    done = record(w0, "improvement_complete", running=nothing_runs, lang="en")
    assert done.delivery.doc["handoff"]["message"].startswith("union-target:work converged in 1 round(s)")
    assert "goal not judged" not in (w0 / "report.html").read_text()      # the page of the completed verdict
    assert main(["delivery", "show", str(w0)]) == 0
    assert capsys.readouterr().out.splitlines()[:3] == [
        "DELIVERY: handoff_complete (choice standard)", f"  round 0: DEGRADED {w0}",
        f"  round 1: PASS {w0.parent / 'w1'}"]
    assert "run-skill-iter-improve" not in done.delivery.doc["handoff"]["message"]


def test_a_round_needs_a_new_trial_of_the_same_case_judged_by_its_own_evaluator(tree, capsys):
    w0 = judged_trial(tree, capsys, "w0", "FAIL", first=True)
    with pytest.raises(RefusedInput) as caught:
        close_round(w0, w0)                                     # no round open yet
    assert caught.value.code == "no_round_open"
    write_ticket(w0, lang="en")
    for wanted, change in (("same_trial", None), ("other_case", {"args": "y"})):
        w1 = judged_trial(tree, capsys, f"w-{wanted}", "FAIL")
        if change:
            state = json.loads((w1 / "trial-state.json").read_text())
            write_json(w1 / "trial-state.json", {**state, **change}, "trial-state.schema.json")
        else:
            w1 = w0
        before = snapshot(w0)
        with pytest.raises(RefusedInput) as caught:
            close_round(w0, w1)
        assert caught.value.code == wanted and snapshot(w0) == before
        if change:      # the refusal names what differs in words, never two raw mappings
            assert "args 'y', the loop's" in caught.value.message and "{" not in caught.value.message


def test_light_allows_one_round_with_the_first_blocker_only(tree, capsys):
    w0 = judged_trial(tree, capsys, "w0", "FAIL", first=True)
    d = ds.load(w0)
    ds.update(d, choice="light")
    ticket = write_ticket(w0, lang="ja")
    assert ticket.max_rounds == 1 and ticket.text.startswith("# 差分チケット")
    assert "## 足りないこと" in ticket.text and "## できている部分" in ticket.text
    items = book.load(w0).last["ticket"]["items"]
    assert items == [{"kind": "blocker", "text": "0 files found (w0)"}]
    close_round(w0, judged_trial(tree, capsys, "w1", "FAIL"))
    with pytest.raises(RefusedInput) as caught:
        write_ticket(w0, lang="en")
    assert caught.value.code == "round_limit" and "at most 1 round(s) for light" in caught.value.message


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_ticket_says_on_its_own_only_for_a_trial_that_needed_no_help(lang):
    """Seed 001 verdict table: a nudge or a question answered for it makes a trial not self-driven; the diff ticket's
    "What already works" never says otherwise."""
    from live_trial.delivery.ticket import works
    from live_trial.notices.catalogue import catalogue

    t = catalogue(lang)["ticket"]
    alone = {"launch": "PASS", "completion": "PASS", "nudge_count": 0, "gate_response_count": 0}
    assert works(alone, lang) == [t["launch_ok"]]
    for helped in ({**alone, "nudge_count": 1}, {**alone, "gate_response_count": 1}):
        assert works(helped, lang) == [t["launch_ok_helped"]]
    assert ("not on its own" in t["launch_ok_helped"]) if lang == "en" else ("自走ではない" in t["launch_ok_helped"])


def test_a_round_with_no_change_of_the_skill_is_said_to_have_tried_it_again_as_it_was(tree, capsys):
    """The diff ticket asks for a change of the skill: a round closed without one is shown (CHANGED: 0) and warned,
    never passed over in silence."""
    w0 = judged_trial(tree, capsys, "w0", "FAIL", first=True)
    write_ticket(w0, lang="en")
    w1 = judged_trial(tree, capsys, "w1", "FAIL")
    capsys.readouterr()
    assert main(["delivery", "round", str(w0), "--trial", str(w1)]) == 0
    out, err = capsys.readouterr()
    assert "CHANGED: 0 file(s)" in out
    assert "WARN: no file of the skill changed since the ticket: this round tried the same skill again" in err
