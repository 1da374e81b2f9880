"""The fair order of a plan and its defer queue (README "Planning many skills"; seed 001 事前計画): proof cases never
cut, cases that waited first, then never tried, changed, failed; a deferred case waits in queue.json until it has its
trial; and over many plans no case starves, however many others keep failing."""
from __future__ import annotations

import pytest

from live_trial.acceptance.fair_plan import Candidate, choose
from live_trial.acceptance.queue import Waiting, from_doc, merge_queues, next_queue, still_waiting, to_doc
from live_trial.jsonfile import schema_errors


def cand(index: int, *, tried: str | None = None, last: str | None = None, repeats: int = 1, proof: bool = False,
         waited: tuple[int, str] | None = None) -> Candidate:
    waiting = Waiting("p:s", "c", waited[1], waited[0], waited[1], last) if waited else None
    return Candidate(index, repeats, proof, tried, last, waiting)


def ran(choices) -> list[int]:
    return [c.candidate.index for c in choices if c.run]


def test_waited_then_never_tried_then_changed_then_failed():
    cands = [cand(0, tried="FAIL", last="20261201T000001-0000"), cand(1, tried="PASS", last="20261201T000001-0001"),
             cand(2), cand(3, tried="DEGRADED", last="20261130T000000-0000", waited=(1, "2026-12-01T00:00:00"))]
    assert [c.candidate.index for c in choose(cands, 4)] == [3, 2, 1, 0]
    assert [c.candidate.rank for c in choose(cands, 4)] == ["waited", "never_tried", "changed", "failed"]


def test_the_longest_waiting_goes_first_and_the_failure_longest_ago_among_failures():
    cands = [cand(0, waited=(1, "2026-12-01T00:00:00")), cand(1, waited=(2, "2026-12-02T00:00:00")),
             cand(2, waited=(1, "2026-11-30T00:00:00")),
             cand(3, tried="FAIL", last="20261203T000000-0000"), cand(4, tried="FAIL", last="20261201T000000-0000")]
    assert ran(choose(cands, 3)) == [1, 2, 0]
    assert ran(choose(cands[3:], 1)) == [4]


def test_proof_cases_are_never_cut_by_the_budget():
    choices = choose([cand(0, tried="FAIL", last="x"), cand(1, proof=True), cand(2, proof=True)], 0)
    assert ran(choices) == [1, 2]
    assert all("never cut by the budget" in c.why for c in choices if c.run)


def test_a_case_bigger_than_the_budget_runs_alone_when_it_comes_first_and_smaller_ones_fill_behind_a_big_one():
    alone = choose([cand(0, repeats=3), cand(1)], 2)
    assert ran(alone) == [0] and "runs alone in this plan so it is never starved" in alone[0].why
    filled = choose([cand(0), cand(1, repeats=3), cand(2)], 2)
    assert ran(filled) == [0, 2]
    assert "it takes 3 trials" in next(c.why for c in filled if not c.run)


def test_a_deferred_row_says_it_waits_for_how_long_and_that_it_goes_first_next_time():
    choices = choose([cand(0), cand(1, waited=(2, "2026-12-01T09:00:00.000Z"), tried="FAIL", last="r")], 0)
    assert [c.why for c in choices] == [
        "over budget (--max-live-trials 0): waits (deferred by 2 plans since 2026-12-01T09:00:00Z, and one more "
        "when this plan runs); the next plan runs it before new cases and re-runs of failures",
        "over budget (--max-live-trials 0): waits (deferred for the first time); the next plan runs it before new "
        "cases and re-runs of failures"]


def test_the_order_is_said_only_when_it_mattered_and_exhaustive_runs_all():
    assert [c.why for c in choose([cand(0), cand(1, tried="FAIL", last="r")], 2)] == ["", ""]
    assert ran(choose([cand(i) for i in range(5)], 1, exhaustive=True)) == [0, 1, 2, 3, 4]


def test_a_deferred_case_waits_until_its_trial_happens():
    now1, now2 = "2026-12-01T00:00:00.000Z", "2026-12-02T00:00:00.000Z"
    q = next_queue({}, [("p:a", "default", "run", None), ("p:b", "default", "defer", None)], now1)
    assert list(q) == [("p:b", "default")] and q[("p:b", "default")].plans_waited == 1
    q = next_queue(q, [("p:b", "default", "defer", None)], now2)          # deferred again, still no trial
    assert (q[("p:b", "default")].plans_waited, q[("p:b", "default")].waiting_since) == (2, now1)
    kept = next_queue(q, [("p:b", "default", "run", None)], now2)         # chosen, but the plan never ran
    assert kept == q and still_waiting(kept, "p:b", "default", None) is not None
    assert next_queue(q, [("p:b", "default", "run", "20261202T000000-0000")], now2) == {}   # it had its trial
    assert next_queue(q, [("p:b", "default", "reuse", None)], now2) == {}
    assert next_queue(q, [("p:other", "x", "defer", None)], now2)[("p:b", "default")] == q[("p:b", "default")]
    stale = next_queue(q, [("p:b", "default", "defer", "20261202T000000-0000")], now2)    # tried since: anew
    assert (stale[("p:b", "default")].plans_waited, stale[("p:b", "default")].waiting_since) == (1, now2)


def test_the_queue_document_fits_its_schema_and_merges_per_case_keeping_the_longer_wait():
    a = to_doc({("p:x", "c"): Waiting("p:x", "c", "2026-12-02", 1, "2026-12-02", None),
                ("p:y", "c"): Waiting("p:y", "c", "2026-12-01", 3, "2026-12-03", "r1")}, "2026-12-03")
    b = to_doc({("p:x", "c"): Waiting("p:x", "c", "2026-12-01", 2, "2026-12-02", None)}, "2026-12-04")
    assert schema_errors(a, "queue.schema.json") == []
    merged = merge_queues([a, b])
    assert schema_errors(merged, "queue.schema.json") == []
    assert {k: w.plans_waited for k, w in from_doc(merged).items()} == {("p:x", "c"): 2, ("p:y", "c"): 3}
    assert merged["updated_at"] == "2026-12-04" and merge_queues([]) is None


def simulate(budget: int, plans: int, passes: set[str]) -> list[list[str]]:
    """Plans made one after another, each one's trials run before the next: the cases in ``passes`` PASS when they
    run (and are reused from then on), every other case FAILs every time. Returns the cases each plan ran."""
    names = ["fails-1", "fails-2", "case-3", "case-4", "case-5"]
    last: dict[str, tuple[str | None, str | None]] = {n: (None, None) for n in names}    # (tried, last trial)
    queue: dict = {}
    history: list[list[str]] = []
    for plan_no in range(plans):
        now = f"2026-12-{plan_no + 1:02d}T00:00:00.000Z"
        live = [n for n in names if last[n][0] != "PASS"]
        cands = [Candidate(i, 1, False, last[n][0], last[n][1], still_waiting(queue, n, "c", last[n][1]))
                 for i, n in enumerate(live)]
        choices = choose(cands, budget)
        queue = next_queue(queue, [(live[c.candidate.index], "c", "run" if c.run else "defer",
                                    last[live[c.candidate.index]][1]) for c in choices], now)
        runs = [live[c.candidate.index] for c in choices if c.run]
        history.append(runs)
        for n in runs:
            last[n] = ("PASS" if n in passes else "FAIL", f"202612{plan_no + 1:02d}T000000-{n}")
    return history


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_no_case_starves_when_every_case_keeps_failing(budget):
    """The worst case: five cases that FAIL every time. Each runs at least once in every ceil(5 / budget) plans in a
    row, for as long as the plans go on (round robin), never only the first ones in plan order."""
    history = simulate(budget, 15, passes=set())
    window = -(-5 // budget)
    for start in range(len(history) - window + 1):
        seen = {n for runs in history[start:start + window] for n in runs}
        assert len(seen) == 5, (start, history)


def test_two_failing_skills_never_starve_the_others_of_a_budget_of_two():
    """The issue's case: budget 2, two skills that keep failing. The other three run within the plans the budget
    allows (ceil(5 / 2) = 3), and once they PASS the failing two share the budget."""
    history = simulate(2, 6, passes={"case-3", "case-4", "case-5"})
    assert {n for runs in history[:3] for n in runs} == {"fails-1", "fails-2", "case-3", "case-4", "case-5"}
    assert all(set(runs) == {"fails-1", "fails-2"} for runs in history[3:]), history
