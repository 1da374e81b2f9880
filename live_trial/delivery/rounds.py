"""The improvement loop's two harness steps (seed 001 related section, seed 002 diff tickets; README "Use it from
Claude Code"): ``live-trial ticket WORKDIR`` writes the diff ticket of the next round from the last judged verdict and
opens the round in ``improvement.json``; ``live-trial delivery round WORKDIR --trial NEW`` closes it with the new
trial of the same case (its own fresh evaluator, its verdict, the skill's files changed since the ticket). Both run
only after the person chose light, standard or detailed (:func:`live_trial.acceptance.delivery_state.require_choice`).
The host session changes the skill's files and runs the trial; it never judges.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from live_trial.acceptance import delivery_state as ds
from live_trial.acceptance.verdict import read_verdict
from live_trial.delivery import ledger as book
from live_trial.delivery.steps import lang_of, trial_state
from live_trial.delivery.ticket import render
from live_trial.errors import RefusedInput
from live_trial.jsonfile import write_text_atomic
from live_trial.workdir_files import TICKET, VERDICT, Workdir


@dataclass(frozen=True)
class Ticket:
    """A diff ticket written: its round, file, text and the bound."""

    n: int
    path: Path
    text: str
    max_rounds: int


def case_of(workdir: Path) -> dict[str, Any]:
    """``{target, args, scenario}`` of the trial in ``workdir`` (its trial-state.json): what a round must repeat."""
    state = trial_state(workdir)
    scenario = (state.get("rehearsal") or {}).get("scenario")
    return {"target": state["target"], "args": state.get("args") or "",
            "scenario": str(Path(scenario).resolve()) if scenario else None}


def _delivery(workdir: Path, what: str) -> ds.Delivery:
    delivery = ds.require_choice(workdir, what)
    if delivery is None:
        raise RefusedInput(f"{what} works on the first trial of a delivery", where=str(workdir), code="not_delivery",
                           fix="give the workdir `live-trial prepare --delivery` made")
    if delivery.doc.get("completed") is None:
        raise RefusedInput("the first trial's verdict is not completed by a fresh evaluator yet",
                           where=str(Path(workdir) / VERDICT), code="not_judged",
                           fix=f"run `live-trial evaluate --workdir {workdir}`, then the verdict")
    return delivery


def write_ticket(workdir: Path, *, lang: str | None = None) -> Ticket:
    """Open the next round of the delivery in ``workdir`` (the first trial's): write ``ticket-<n>.md`` from the last
    judged verdict, in the person's language, and record it with the skill folder's digests in improvement.json.
    Raises :class:`RefusedInput` (nothing written) before the choice, without a completed verdict, while a round is
    open, after a PASS or a BLOCKED trial, past the bound, or when the last verdict changed since it was recorded."""
    from live_trial.closure.target import resolve_target

    workdir = Path(workdir).resolve()
    delivery = _delivery(workdir, "a diff ticket")
    state = trial_state(workdir)
    target = resolve_target(state["target"], Path(state.get("plugins_root") or "plugins"))
    ledger = book.load(workdir)
    if ledger is None:
        case = case_of(workdir)
        ledger = book.start(workdir, target=state["target"], skill_dir=Path(target.skill_dir), args=case["args"],
                            scenario=case["scenario"], choice=str(delivery.choice))
    n = book.check_can_open(ledger)
    last = ledger.last["trial"]
    verdict_path = Path(last["workdir"]) / VERDICT
    if ds.sha256_of(verdict_path) != last["verdict_sha256"]:
        raise RefusedInput("the verdict changed since the ledger recorded it", where=str(verdict_path),
                           code="artifact_changed", fix="start a new delivery")
    text, items = render(read_verdict(verdict_path), n=n, max_rounds=int(ledger.doc["max_rounds"]),
                         choice=str(delivery.choice), description=str(target.frontmatter.get("description") or ""),
                         skill_dir=str(ledger.doc["skill_dir"]), verdict_path=str(verdict_path),
                         verdict_sha256=last["verdict_sha256"], lang=lang_of(delivery, lang))
    path = Workdir.of(workdir).root / TICKET.format(n)
    write_text_atomic(path, text)
    book.open_round(ledger, n, {"path": path.name, "sha256": ds.sha256_of(path),
                                "from_verdict": last["verdict_sha256"], "items": items})
    return Ticket(n=n, path=path, text=text, max_rounds=int(ledger.doc["max_rounds"]))


def close_round(workdir: Path, trial: Path) -> book.Ledger:
    """Close the open round of the delivery in ``workdir`` with the judged trial in ``trial`` (same case, its own
    fresh evaluator). Raises :class:`RefusedInput` (nothing changed): see
    :func:`live_trial.delivery.ledger.close_round`."""
    workdir = Path(workdir).resolve()
    _delivery(workdir, "a round")
    ledger = book.load(workdir)
    if ledger is None:
        raise RefusedInput("no round is open", where=str(workdir), code="no_round_open",
                           fix=f"write the diff ticket first: `live-trial ticket {workdir}`")
    return book.close_round(ledger, Path(trial).resolve(), same_case=case_of(Path(trial).resolve()))
