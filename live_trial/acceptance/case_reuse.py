"""Reuse where a case asks for more than one sample (references/suite-format.md "Repeats"; README "Planning many
skills").

- A case with ``repeats: k`` above 1 is reused only from a case verdict PASS with at least k samples, all passed, of
  the same ``scenario_id``, whose attempts each still hold under the reuse rules of a single trial (the same behaviour
  closure, transcript, evidence rules, watch...: ``check``). A one-off PASS never satisfies it, a FLAKY case is never
  reused, and a case run stopped before its verdict counts for nothing.
- A case of one sample is never reused from an attempt of a case run whose case verdict is not PASS (a FLAKY run's
  passing attempt is no PASS of the case), nor from one of a run that has no verdict.

Reads case-verdict.json files and the attempts' trial-state.json; the single-trial rules are the caller's ``check``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from live_trial.acceptance.case_verdict import CaseRun, attempt_workdirs, read_case_verdict
from live_trial.errors import LiveTrialError
from live_trial.workdir_files import CASE_VERDICT, TRIAL_STATE, VERDICT

#: ``check(verdict_path) -> (reusable, reason)``: the reuse rules of one trial (plan's verdict reader).
Check = Callable[[Path], tuple[bool, str]]


def case_verdicts(cases_dir: Path, scenario_id: str | None) -> list[tuple[Path, dict[str, Any] | None]]:
    """The case runs of one skill, newest first, those recording ``scenario_id`` first: ``(case-verdict.json path,
    the document or None when it cannot be read or does not fit its schema)``."""
    if not cases_dir.is_dir():
        return []
    found: list[tuple[Path, dict[str, Any] | None]] = []
    for path in sorted(cases_dir.glob(f"*/{CASE_VERDICT}"), key=lambda p: p.parent.name, reverse=True):
        try:
            found.append((path, read_case_verdict(path)))
        except (LiveTrialError, OSError):
            found.append((path, None))
    return sorted(found, key=lambda f: (f[1] or {}).get("scenario_id") != scenario_id)


def decide_repeated(cases_dir: Path, scenario_id: str | None, repeats: int, check: Check,
                    eval_root: Path) -> tuple[bool, str, Path | None]:
    """``(reusable, reason, case verdict considered)`` for a case asking ``repeats`` samples (module docstring)."""
    found = case_verdicts(cases_dir, scenario_id)
    if not found:
        return False, f"no case verdict yet (the case asks for {repeats} samples; a one-off PASS never counts)", None
    path, doc = found[0]
    run = path.parent.name
    if doc is None:
        return False, f"last case verdict does not fit its schema (case run {run})", path
    if doc["scenario_id"] != scenario_id:
        return False, "task contract (scenario_id) changed since the last case run", path
    rate = doc["pass_rate"]
    said = f"{rate['passed']} of {rate['samples']} samples passed"
    if doc["verdict"] != "PASS":
        never = "a FLAKY case is never reused as a PASS" if doc["verdict"] == "FLAKY" else "not a PASS"
        return False, f"last case run was {doc['verdict']} ({said}): {never} (case run {run})", path
    if rate["samples"] < repeats or rate["passed"] < repeats:
        return False, (f"last case run PASS had {rate['samples']} samples, the case asks for {repeats} "
                       f"(case run {run})"), path
    for attempt, workdir in zip(doc["attempts"], attempt_workdirs(doc, eval_root)):
        if not attempt["sample"]:
            continue
        if workdir is None:
            return False, f"attempt {attempt['n']} of the case run has no workdir (case run {run})", path
        ok, why = check(workdir / VERDICT)
        if not ok:
            return False, f"attempt {attempt['n']} of the case run PASS no longer holds: {why} (case run {run})", path
    return True, (f"case run PASS, {said} ({repeats} asked), each attempt with the same behaviour closure, scenario "
                  f"and transcript (case run {run})"), path


def attempt_standing(workdir: Path) -> str | None:
    """Why the trial in ``workdir`` cannot stand alone as a PASS: it is an attempt of a case run whose case verdict is
    not a PASS, or that has none; None when it can (a trial run on its own, or an attempt of a case run PASS)."""
    try:
        state = json.loads((Path(workdir) / TRIAL_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    run = CaseRun.from_doc(state.get("case_run") if isinstance(state, dict) else None)
    if run is None or run.repeats <= 1:
        return None
    where = f"attempt {run.attempt} of the case run {run.folder.name}"
    try:
        doc = read_case_verdict(run.folder / CASE_VERDICT)
    except (LiveTrialError, OSError):
        return f"{where}, which has no case verdict (it was stopped): never reused alone"
    if doc["verdict"] != "PASS":
        return f"{where}, whose case verdict is {doc['verdict']}: a pass of a case run that did not pass is no PASS"
    return None
