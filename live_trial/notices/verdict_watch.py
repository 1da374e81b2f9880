"""The watch a verdict registers (seed 000 rule 2; README "Evidence, watches and messages to a person"): one rule for
``run``, ``run --resume`` and ``verdict``.

A PASS whose evaluator (or a person) named what the trial cannot show yet (``goal_ledger`` mostly_done) registers a
watch of it before the verdict is written, and the verdict records its id. A rehearsal's watch goes to its own
ledger, ``<workdir>/rehearsal-watches/watches.json``, never the eval root's: a scripted model confirms nothing real,
and plan must not treat the skill as watched. A watch that cannot be registered is a note, never fatal.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from live_trial.acceptance.verdict_doc import Verdict
from live_trial.errors import RefusedInput
from live_trial.workdir_files import REHEARSAL_WATCHES, Workdir


@dataclass(frozen=True)
class VerdictWatch:
    """What :func:`watch_verdict` did: the verdict with its watch id and notes, and what to log."""

    verdict: Verdict
    """The verdict, with ``watch_id`` and any note about the watch."""
    ledger: Path | None
    """The ledger the watch went to; None when no watch was due."""
    watch_id: str | None
    """The registered watch's id; None when none was due or it could not be registered."""
    problem: str | None
    """Why the watch could not be registered (``Type: message``); None otherwise."""


def watch_verdict(verdict: Verdict, *, workdir: Path, eval_root: Path | None, objective: str) -> VerdictWatch:
    """Register the watch ``verdict`` calls for (module docstring) and return the verdict with its id.

    ``workdir``: the trial's workdir (a rehearsal's ledger is there); ``eval_root``: the eval root whose ledger a live
    trial's watch goes to; ``objective``: what the skill is for (its description). Raises :class:`RefusedInput`
    (nothing written) only when a live watch is due and ``eval_root`` is None (it cannot be told)."""
    from live_trial.notices.watch import register_watch

    if verdict.goal_ledger != "mostly_done" or verdict.overall.verdict != "PASS":
        return VerdictWatch(verdict, None, None, None)
    rehearsal = verdict.scenario_origin == "rehearsal"
    if not rehearsal and eval_root is None:
        raise RefusedInput("cannot tell the eval-log root from --workdir", where=str(workdir), code="bad_workdir",
                           fix="pass --eval-root")
    root = Workdir.of(workdir).rehearsal_watches if rehearsal else Path(str(eval_root))
    try:
        watch = register_watch(root, objective=objective or verdict.target, unverified=verdict.unverified or "",
                               evidence="; ".join(e["observed"] for e in verdict.evidence), target=verdict.target,
                               workdir=str(workdir), closure=verdict.skill_dir_tree_sha)
    except Exception as exc:  # noqa: BLE001 - the verdict is still written; the note says what went wrong
        problem = f"{type(exc).__name__}: {exc}"
        return VerdictWatch(replace(verdict, notes=(*verdict.notes, f"no watch could be registered: {problem}")),
                            root, None, problem)
    notes = verdict.notes
    if rehearsal:
        notes += (f"the watch is kept in the rehearsal's own ledger ({REHEARSAL_WATCHES}/watches.json in the "
                  "workdir), not the eval root's: a scripted model confirms nothing real",)
    return VerdictWatch(replace(verdict, watch_id=watch["id"], notes=notes), root, watch["id"], None)
