"""``live-trial delivery record WORKDIR --event E``: one state change of seed 001's ``artifact_delivery``, checked and
carried out by the harness (README "Use it from Claude Code"). Each event is first checked against the schema's
transitions (:func:`live_trial.acceptance.delivery_state.step`); what the event needs is then checked, and only then
is anything written, so a refusal (exit 2) leaves every file byte for byte as it was.

- ``minimum_guard_pass``: the guards of :mod:`live_trial.delivery.guards` over the verdict and the page about to be
  shown; then ``report.html`` is written;
- ``present_actual_artifact``: the lines a person is shown (the workdir, the verdict's path and sha256, the page and
  how to open it, the outcome in plain words, the four choices);
- ``record_user_choice --choice C``: the person's answer (asked once, with AskUserQuestion);
- ``accept-as-is``: the end, the goal not judged, said so;
- ``light`` / ``standard`` / ``detailed``: the fresh evaluator may start (``evaluate``, then ``verdict`` completes);
- ``improvement_complete``: the end of the loop, with its message (:mod:`live_trial.delivery.handoff`); the first
  trial's ``report.html`` is written again from its completed verdict.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.acceptance import delivery_state as ds
from live_trial.acceptance.verdict import read_verdict
from live_trial.delivery import guards, handoff, ledger
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json, write_text_atomic
from live_trial.notices.catalogue import catalogue, resolve_lang
from live_trial.workdir_files import REPORT, TRIAL_STATE, VERDICT

REPORT_MODE = 0o644


@dataclass
class Recorded:
    """The delivery after an event, and the lines to show (``KEY: value`` lines, then plain sentences)."""

    delivery: ds.Delivery
    lines: list[str] = field(default_factory=list)


def trial_state(workdir: Path) -> dict[str, Any]:
    """The workdir's trial-state.json (schema-checked)."""
    return dict(read_json(Path(workdir) / TRIAL_STATE, "trial-state.schema.json"))


def delivery_of(workdir: Path) -> ds.Delivery:
    """The workdir's delivery. Raises :class:`RefusedInput` outside the contract or before the first artifact."""
    if not ds.under_contract(workdir):
        raise RefusedInput("the workdir was not prepared for a delivery", where=str(workdir), code="not_delivery",
                           fix="start the trial with `live-trial prepare --delivery`")
    delivery = ds.load(workdir)
    if delivery is None:
        raise RefusedInput("the first artifact is not created yet (no verdict)", where=str(workdir),
                           code="no_artifact", fix="run the trial through collect, then `live-trial verdict`")
    return delivery


def lang_of(delivery: ds.Delivery, lang: str | None) -> str:
    """The person's language: ``lang``, else the delivery's, else env ``LIVE_TRIAL_LANG``, else ja."""
    return resolve_lang(lang or delivery.doc.get("lang"))


def record(workdir: Path, event: str, *, choice: str | None = None, lang: str | None = None,
           running: Callable[[Mapping[str, Any]], list[str]] = guards.left_running,
           env: Mapping[str, str] | None = None) -> Recorded:
    """Carry out ``event`` on the delivery in ``workdir`` (see the module docstring) and return what to show. Raises
    :class:`RefusedInput` (exit 2, nothing changed) for an event the state does not allow, a guard that fails, a
    missing or unknown ``--choice``, or an end before the completed verdict or with a round open."""
    workdir = Path(workdir).resolve()
    delivery = delivery_of(workdir)
    ds.step(delivery, event)                 # refused first: an event not allowed from here changes nothing
    words = lang_of(delivery, lang)
    state = trial_state(workdir)
    if event == "minimum_guard_pass":
        return _guard(workdir, delivery, state, words, running)
    if event == "present_actual_artifact":
        return _present(workdir, delivery, state, words)
    if event == ds.RECORD_USER_CHOICE:
        if choice not in ds.CHOICES:
            raise RefusedInput(f"--choice {choice!r} is not one of the person's choices", where="--choice",
                               code="bad_value", fix=f"pass one of: {', '.join(ds.CHOICES)}")
        return Recorded(ds.advance(delivery, event, choice=choice), [f"CHOICE: {choice}"])
    if event == ds.ACCEPT_AS_IS:
        end = handoff.compose(trial=state["target"], lang=words, choice=event, first=None, ledger=None,
                              artifact=str(workdir / VERDICT), deeper=None)
        return Recorded(ds.advance(delivery, event, handoff=end.to_doc()), [f"HANDOFF: {end.message}"])
    if event == ds.IMPROVEMENT_COMPLETE:
        return _complete(workdir, delivery, state, words, env)
    return Recorded(ds.advance(delivery, event),
                    [f"NEXT: live-trial evaluate --workdir {workdir}, then the same verdict command: a fresh evaluator "
                     "judges the goal and the verdict is completed"])


def _guard(workdir: Path, delivery: ds.Delivery, state: Mapping[str, Any], lang: str,
           running: Callable[[Mapping[str, Any]], list[str]]) -> Recorded:
    from live_trial.report.page import render

    html = render(workdir, lang)
    problems = guards.guard_problems(workdir, delivery, state, report_html=html, running=running)
    if problems:
        raise RefusedInput("the first artifact fails its guards: " + "; ".join(problems), where=str(workdir),
                           code="guard_failed", fix="fix each (end what still runs, take the secret out), then record "
                                                    "minimum_guard_pass again")
    path = workdir / REPORT
    write_text_atomic(path, html)
    os.chmod(path, REPORT_MODE)
    artifact = {**delivery.doc["artifact"], "report": REPORT}
    return Recorded(ds.advance(delivery, "minimum_guard_pass", artifact=artifact),
                    ["GUARDS: schema ok, goal not judged, no secret in what is shown, nothing left running"])


def _present(workdir: Path, delivery: ds.Delivery, state: Mapping[str, Any], lang: str) -> Recorded:
    doc = read_verdict(workdir / VERDICT)
    d = catalogue(lang)["delivery"]
    report = workdir / REPORT
    outcome = d["outcome_first"].format(trial=state["target"], launch=doc["launch"], completion=doc["completion"],
                                        overall=doc["overall"]["verdict"],
                                        reasons="; ".join(doc["overall"].get("reasons") or []) or "-")
    lines = [f"WORKDIR: {workdir}",
             f"VERDICT: {workdir / VERDICT} {delivery.doc['artifact']['sha256']}",
             f"REPORT: {report} ({d['open_report'].format(url=report.as_uri())})",
             f"OUTCOME: {outcome}",
             f"CHOOSE: {d['choices'].format(max=ledger.max_rounds('standard'))}"]
    return Recorded(ds.advance(delivery, "present_actual_artifact"), lines)


def _complete(workdir: Path, delivery: ds.Delivery, state: Mapping[str, Any], lang: str,
              env: Mapping[str, str] | None) -> Recorded:
    if delivery.doc.get("completed") is None:
        raise RefusedInput("the fresh evaluator's verdict is not written yet", where=str(workdir / VERDICT),
                           code="not_judged", fix=f"run `live-trial evaluate --workdir {workdir}`, then the verdict")
    book = ledger.load(workdir)
    if book is not None and book.last["trial"] is None:
        raise RefusedInput(f"round {book.last['n']} is open: its trial is not recorded", where=str(book.path),
                           code="round_open", fix=f"record it: `live-trial delivery round {workdir} --trial <workdir>`")
    from live_trial.report.page import write_report

    write_report(workdir, lang)          # the page of the completed verdict (the first one is verdict-first.json)
    plugins_root = Path(state["plugins_root"]) if state.get("plugins_root") else None
    end = handoff.compose(trial=state["target"], lang=lang, choice=delivery.choice,
                          first=read_verdict(workdir / VERDICT), ledger=book.doc if book else None,
                          artifact=str(workdir / delivery.doc["artifact"]["verdict"]),
                          deeper=handoff.iter_improve(plugins_root, None, env))
    return Recorded(ds.advance(delivery, ds.IMPROVEMENT_COMPLETE, handoff=end.to_doc()),
                    [f"HANDOFF: {end.message}"])
