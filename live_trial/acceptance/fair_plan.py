"""Which of the cases that need a trial run in this plan, and which wait (README "Planning many skills"; seed 001
事前計画: "新規 live trial を最大2本", "非該当は queue へ deferred 記録", "proof trial のみ無条件").

- **Proof** cases always run: the budget never cuts them (seed 001: only proof trials are unconditional).
- The others run in this order, while the budget (``--max-live-trials``, counted in trials: a case of ``repeats: 3``
  takes 3) lasts:

  1. cases that **waited**: deferred by an earlier plan and without a trial since (:mod:`live_trial.acceptance.queue`),
     the one deferred by more plans first, then the one waiting longer;
  2. cases **never tried** (no verdict of their task contract yet);
  3. cases whose last PASS no longer holds (**changed**: the skill, the contract, an expired watch...);
  4. re-runs of **failures** (the last verdict was not a PASS), the one that failed longest ago first;

  ties in plan order (plugin, skill, case). A case too big for what is left waits, and a smaller one after it may
  run; a case bigger than the whole budget runs alone when it comes first, so it is never starved either.
- ``--profile exhaustive`` runs every case.

Pure: data in, decisions out.
"""
from __future__ import annotations

from dataclasses import dataclass

from live_trial.acceptance.queue import Waiting

RANKS = ("proof", "waited", "never_tried", "changed", "failed")


@dataclass(frozen=True)
class Candidate:
    """One case the plan would run, as the order sees it."""

    index: int                          #: its place in plan order
    repeats: int                        #: trials it takes (its ``repeats``)
    proof: bool                         #: a proof case: never cut
    tried: str | None                   #: the verdict of its newest trial (or case run); None: never tried
    last_trial: str | None              #: that trial's run id (run ids sort by time)
    waiting: Waiting | None = None      #: its queue entry, when it still waits

    @property
    def rank(self) -> str:
        """Its class in the order (:data:`RANKS`)."""
        if self.proof:
            return "proof"
        if self.waiting is not None:
            return "waited"
        if self.tried is None:
            return "never_tried"
        return "changed" if self.tried == "PASS" else "failed"

    def order(self) -> tuple[int, int, str, int]:
        """The sort key of the order (module docstring)."""
        rank = RANKS.index(self.rank)
        if self.waiting is not None:
            return (rank, -self.waiting.plans_waited, self.waiting.waiting_since, self.index)
        if self.rank == "failed":
            return (rank, 0, self.last_trial or "", self.index)
        return (rank, 0, "", self.index)


@dataclass(frozen=True)
class Choice:
    """What the budget made of one candidate: ``run`` or not, and the clause its row's reason adds."""

    candidate: Candidate
    run: bool
    why: str


def waited_text(w: Waiting) -> str:
    """``deferred by 2 plans since 2026-12-01T09:00:00Z``."""
    return f"deferred by {w.plans_waited} plan{'s' if w.plans_waited != 1 else ''} since {w.waiting_since[:19]}Z"


def choose(candidates: list[Candidate], budget: int, *, exhaustive: bool = False) -> list[Choice]:
    """Which candidates run (module docstring), in the order they were considered; ``budget`` in trials. A run row's
    clause says where the order put it only when it mattered: the budget deferred a case of this plan, the case
    waited, or it runs alone; a deferred row's says it waits, for how long, and that it goes first next time."""
    if exhaustive:
        return [Choice(c, True, "") for c in candidates]
    out: list[Choice] = []
    used = 0
    for c in sorted(candidates, key=Candidate.order):
        fits = used + c.repeats <= budget
        alone = used == 0 and budget > 0 and c.repeats > budget
        if c.proof:
            out.append(Choice(c, True, "a proof trial: never cut by the budget (seed 001)"))
        elif fits or alone:
            used += c.repeats
            out.append(Choice(c, True, _run_clause(c, budget, alone and not fits)))
        else:
            out.append(Choice(c, False, _wait_clause(c, budget)))
    if all(ch.run for ch in out):       # nothing waits: the order did not matter
        out = [Choice(ch.candidate, True, ch.why if ch.candidate.waiting or "alone" in ch.why else "") for ch in out]
    return out


def _run_clause(c: Candidate, budget: int, alone: bool) -> str:
    head = {"waited": f"goes first: it waited ({waited_text(c.waiting)})" if c.waiting else "",
            "never_tried": "not tried yet under this task contract: goes before re-runs",
            "changed": "its last PASS no longer holds: after the cases that waited or were never tried",
            "failed": "a re-run of a failure: after the cases that waited, were never tried or changed",
            "proof": ""}[c.rank]
    if alone:
        head += (f"; it takes {c.repeats} trials, more than --max-live-trials {budget}: it runs alone in this plan "
                 "so it is never starved")
    return head


def _wait_clause(c: Candidate, budget: int) -> str:
    waited = (waited_text(c.waiting) + ", and one more when this plan runs") if c.waiting \
        else "deferred for the first time"
    size = f"it takes {c.repeats} trials; " if c.repeats > 1 else ""
    return (f"over budget (--max-live-trials {budget}): waits ({size}{waited}); the next plan runs it before new "
            "cases and re-runs of failures")
