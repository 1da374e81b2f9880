"""``verdict.json``: one trial's verdict document, derived from its facts, checked and written against
``schemas/live-trial-verdict.schema.json`` (seed 001 "verdict + 掃除"; README "What a trial leaves behind").

The verdict comes in two steps that ``run``, ``run --resume`` and ``verdict`` all take:
:func:`live_trial.acceptance.verdict_facts.gather_facts` reads the workdir once (transcripts, evaluation.json, the
closure and environment recorded at start) and :func:`live_trial.acceptance.derive.derive_verdict` derives the
:class:`~live_trial.acceptance.verdict_doc.Verdict` from those facts and the trial's
:class:`~live_trial.acceptance.findings.Findings` without reading anything. This module writes and reads the
document; :func:`build_verdict` is both steps for callers that hold the findings as keywords (tests, benchmarks).

Version ``live-trial-verdict/2`` (written now) adds ``criteria`` and ``gate_answers`` and is judged under the evidence
rules of README "Evidence, watches and messages to a person" (the session's own words never count, each item's quote
and counts checked). ``live-trial-verdict/1`` documents are still read; plan never reuses such a PASS.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from live_trial.acceptance.verdict_doc import SCHEMA
from live_trial.clock import parse_iso_z, utc_now
from live_trial.jsonfile import write_json
from live_trial.workdir_files import VERDICT

__all__ = ["CLOCK_ENV", "actual_models", "build_verdict", "environment", "read_verdict", "trial_duration_s",
           "verdict_clock", "write_trial_verdict", "write_verdict"]

#: A fixed ``written_at`` for every verdict this process derives (UTC ``...Z``): how the suite compares the verdict
#: ``run`` wrote with the one ``verdict`` writes for the same workdir, byte for byte (README "Tests").
CLOCK_ENV = "LIVE_TRIAL_VERDICT_CLOCK"


def verdict_clock(env: Mapping[str, str] | None = None) -> Callable[[], str]:
    """The clock a verdict's ``written_at`` comes from: :func:`live_trial.clock.utc_now`, or the fixed time env
    ``LIVE_TRIAL_VERDICT_CLOCK`` names (:data:`CLOCK_ENV`)."""
    fixed = (os.environ if env is None else env).get(CLOCK_ENV)
    return (lambda: fixed) if fixed else utc_now


def actual_models(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Unique ``message.model`` of main-chain assistant records, without ``<synthetic>`` (delegates to transcript)."""
    from live_trial.acceptance.verdict_facts import actual_models as models

    return models(records)


def environment(claude_version: str | None = None, tmux_version: str | None = None) -> dict[str, Any]:
    """Versions only (claude, tmux, python, platform) — never environment variables or keys
    (:func:`live_trial.acceptance.verdict_facts.environment`)."""
    from live_trial.acceptance.verdict_facts import environment as versions

    return versions(claude_version, tmux_version)


def build_verdict(*, workdir: Path, target: Any, plugins_root: Path | None, session_id: str | None,
                  requested_model: str | None, launch: str, completion: str, goal_result: str | None,
                  closure_at_boot: Mapping[str, Any] | None = None, claude_version: str | None = None,
                  tmux_version: str | None = None, watch_id: str | None = None,
                  summarise: Callable[[Mapping[str, Any]], str] | None = None, **findings: Any) -> dict[str, Any]:
    """Build (not write) a verdict document: :func:`~live_trial.acceptance.verdict_facts.gather_facts` then
    :func:`~live_trial.acceptance.derive.derive_verdict`, the time now. ``target``: a resolved
    :class:`~live_trial.closure.index.Target` or a string; the other keywords are the fields of
    :class:`~live_trial.acceptance.findings.Findings` (``goal_blockers``, ``evidence``, ``unverified``,
    ``goal_ledger``, ``nudge_count``, ``gate_response_count``, ``gate_kind``, ``gate_answers``, ``poll_exit``,
    ``proof``, ``blocked``, ``scenario_origin``, ``scenario_path``, ``args``, ``stop_reason``, ``stall_row``,
    ``failure_reason``, ``notes``, ``warnings``, ``started_at``, ``working_folder``, ``criteria_checks``,
    ``not_judged_why``, ``evidence_text``). ``closure_at_boot``: the closure pinned at start (else trial-state.json's);
    ``claude_version`` / ``tmux_version``: the versions to record; ``summarise(doc) -> str``: the summary sentence.

    Raises :class:`~live_trial.errors.RefusedInput` (exit 2) for a denylisted target, a bad value, an ungrounded
    ``contractual``, a target other than the one the workdir's ``trial-state.json`` records, or an unreadable
    ``trial-state.json``; :class:`~live_trial.closure.manifest.ClosureError` when the behaviour closure cannot be
    built and none was pinned at boot."""
    from dataclasses import replace

    from live_trial.acceptance.derive import check_findings, derive_verdict
    from live_trial.acceptance.findings import Findings
    from live_trial.acceptance.verdict_facts import gather_facts
    from live_trial.closure.index import Target
    from live_trial.closure.target import resolve_target
    from live_trial.session.rules import check_target_allowed

    qualified = target.qualified if isinstance(target, Target) else str(target)
    check_target_allowed(qualified)
    for key in ("goal_blockers", "evidence", "notes", "warnings"):
        findings[key] = tuple(findings.get(key) or ())
    for key in ("gate_answers", "criteria_checks"):
        findings[key] = tuple(findings[key]) if findings.get(key) is not None else None
    found = Findings(launch=launch, completion=completion, goal_result=goal_result, session_id=session_id,
                     requested_model=requested_model, **findings)
    check_findings(found)
    if not isinstance(target, Target):
        target = resolve_target(qualified, plugins_root)  # type: ignore[arg-type]
    facts = gather_facts(workdir, target, plugins_root, scenario_path=found.scenario_path,
                         closure_at_boot=closure_at_boot, claude_version=claude_version, tmux_version=tmux_version)
    verdict = derive_verdict(facts, found, summarise=summarise)
    return replace(verdict, watch_id=watch_id).to_doc() if watch_id else verdict.to_doc()


def write_verdict(workdir: Path, doc: dict[str, Any]) -> Path:
    """Validate ``doc`` against the verdict schema and write ``<workdir>/verdict.json`` atomically; return its path.

    Raises :class:`~live_trial.errors.SchemaInvalid` (nothing written) when it does not fit.
    """
    path = Path(workdir).resolve() / VERDICT
    write_json(path, doc, SCHEMA)
    return path


def write_trial_verdict(**kw: Any) -> tuple[dict[str, Any], Path]:
    """Build and write a trial's verdict. Keywords: those of :func:`build_verdict`.

    Returns ``(doc, path)``. Refusals raise before anything is written.
    """
    doc = build_verdict(**kw)
    return doc, write_verdict(kw["workdir"], doc)


def read_verdict(path: Path) -> dict[str, Any]:
    """Read and schema-validate a verdict; raise :class:`RefusedInput` naming the file when unreadable or invalid."""
    from live_trial.jsonfile import read_json

    doc: dict[str, Any] = read_json(Path(path), SCHEMA)
    return doc


def trial_duration_s(doc: Any) -> float | None:
    """Seconds a trial took by its verdict document: ``written_at - started_at`` (UTC ``...Z`` times), or None when
    either is missing, unreadable or the difference is not positive. Plan records it (``last_duration_s``) for
    ``run --plan --shard`` to balance shards; the JUnit file gives it as a testcase's time."""
    if not isinstance(doc, dict) or not doc.get("started_at") or not doc.get("written_at"):
        return None
    try:
        start = parse_iso_z(str(doc["started_at"]))
        end = parse_iso_z(str(doc["written_at"]))
    except ValueError:
        return None
    seconds = (end - start).total_seconds()
    return round(seconds, 3) if seconds > 0 else None


def recorded_cost(doc: Any) -> float | None:
    """The API list price estimate a verdict document records (``usage.estimate_usd``, a rehearsal's scripted tokens
    at list price too), None when it records none. Plan estimates the next trial of a skill by it (README
    "Budgets")."""
    usage = doc.get("usage") if isinstance(doc, dict) else None
    value = usage.get("estimate_usd") if isinstance(usage, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
