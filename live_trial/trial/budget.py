"""The trial's cost budget (README "Budgets"): on every poll tick, the API list price estimate of the responses the
session's transcripts hold so far (subagents included, each response once: :mod:`live_trial.transcript.usage`);
reaching ``max_cost_usd`` ends the trial BLOCKED ``budget``, the harness's cap like the hard time cap, with what was
spent.

The measure is the estimate in a rehearsal too: a rehearsal is not billed (its verdict's cost is 0), but the budget
is checked on what its scripted tokens would cost at list price, so the cap a real trial relies on is the one a
rehearsal exercises. The interactive CLI reports no cost while it runs (references/transcript-jsonl.md "Usage and
cost"), so no other measure exists before the session ends.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from live_trial.errors import Blocked
from live_trial.stop_reasons import StopReason
from live_trial.transcript.usage import Estimate, UsageMeter, estimate, format_usd, session_transcripts


@dataclass
class Budget:
    """A trial's budget in US dollars (> 0) and the meter reading its session's transcripts."""

    max_cost_usd: float
    rehearsal: bool = False
    meter: UsageMeter = field(default_factory=UsageMeter)
    spent: Estimate = field(default_factory=lambda: Estimate(0.0))

    def check(self, transcript: Path, *, finished: bool = False) -> str | None:
        """Read what the session's transcript (and its subagents') gained since the last check; raise
        :class:`Blocked` (code ``budget``) once the estimate reaches :attr:`max_cost_usd`. ``finished``: the session
        has already ended its turn with the completion marker written (its responses came faster than a poll tick):
        there is nothing left to stop, so the trial keeps what it did and the overspend is returned as a warning for
        the verdict instead (a budget never makes a finished trial "not tried to the end"). None when within it."""
        self.spent = estimate(self.meter.read(session_transcripts([transcript])))
        if self.spent.usd < self.max_cost_usd:
            return None
        if finished:
            return (f"budget: the session had spent {format_usd(self.spent.usd, self.spent.unpriced)} against "
                    f"--max-cost-usd {self.max_cost_usd:g} by the time it finished: its responses came before a "
                    "poll could stop it")
        raise Blocked(self.stop_note(), code=StopReason.BUDGET,
                      fix=f"raise --max-cost-usd above {self.max_cost_usd:g} if the skill needs more")

    def stop_note(self) -> str:
        """The verdict's note: what was spent against the budget, and in a rehearsal that it is an estimate only."""
        spent = format_usd(self.spent.usd, self.spent.unpriced)
        what = ("API list price estimate of its scripted tokens; a rehearsal costs nothing" if self.rehearsal
                else "API list price estimate")
        return f"the trial reached its budget of ${self.max_cost_usd:g}: it had spent {spent} ({what})"


def check_budget(trial: Any, *, finished: bool = False) -> None:
    """A poll tick of a trial with a budget (``--max-cost-usd``, README "Budgets"): raise Blocked ``budget`` once what
    the session used reaches it (:class:`Budget`, kept as ``trial.budget``), logged with what was spent; once
    ``finished`` (turn ended, marker written) an overspend is one warning of the verdict instead. ``trial``: a
    :class:`~live_trial.trial.runner.Trial` (its policy, request, facts, journal and transcript). Each model the price
    table lacks is one warning: the budget cannot count it (never counted as 0)."""
    if trial.policy.max_cost_usd is None:
        return
    if trial.budget is None:
        trial.budget = Budget(trial.policy.max_cost_usd, rehearsal=trial.req.rehearsal is not None)
    budget: Budget = trial.budget
    try:
        over = budget.check(trial.transcript_path(), finished=finished)
    except Blocked:
        _warn_unpriced(trial, budget)
        trial.journal.log("budget", "reached", max_cost_usd=trial.policy.max_cost_usd, spent_usd=budget.spent.usd,
                          unpriced=list(budget.spent.unpriced))
        raise
    if over is not None and over not in trial.facts.warnings:
        trial.facts.warnings.append(over)
        trial.journal.log("budget", "over_when_finished", max_cost_usd=trial.policy.max_cost_usd,
                          spent_usd=budget.spent.usd)
    _warn_unpriced(trial, budget)


def _warn_unpriced(trial: Any, budget: Budget) -> None:
    for model in budget.spent.unpriced:
        warning = (f"the budget cannot count what {model} used: it has no price in references/model-prices.json, "
                   "so the trial may spend more than --max-cost-usd")
        if warning not in trial.facts.warnings:
            trial.facts.warnings.append(warning)
