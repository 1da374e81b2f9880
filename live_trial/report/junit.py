"""JUnit XML for ``run --plan --junit FILE``: one testcase per skill of the plan, in the format CI systems read
(README "CI: JUnit, job summary, annotations").

The XML is built with junitparser (a maintained, small library that writes and reads the JUnit schema CI tools
accept), not by hand: escaping and the element order of ``<failure>``, ``<error>``, ``<skipped>`` and
``<properties>`` are its job, and the tests read the file back with the same library.

A row is one skill (see :func:`trial_row` and :func:`skip_row`)::

    {"target": "plugin:skill", "status": "PASS"|"FAIL"|"DEGRADED"|"BLOCKED"|<refusal status>|"SKIPPED",
     "action": None | "reuse"|"defer"|"watching"|"not_live"|"refused", "summary": str, "reasons": [str],
     "report": str|None, "verdict_path": str|None, "workdir": str|None, "skill_md": str|None,
     "duration_s": float|None}

Outcomes: PASS passes; FAIL and DEGRADED are failures (message the verdict's summary, text its
``overall.reasons``); BLOCKED, and a trial refused or stopped before it had a verdict, are errors (not the skill's
failure, README "Whose failure it is"); a skill with no trial in this run (reuse, defer, watching, not_live,
refused) is skipped with the plan's reason.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.acceptance.verdict import trial_duration_s
from live_trial.jsonfile import write_text_atomic
from live_trial.report.cost import junit_properties, suite_cost
from live_trial.workdir_files import REPORT

SKIP_ACTIONS = ("reuse", "defer", "watching", "not_live", "refused", "needs_answer")
FAILURES = ("FAIL", "DEGRADED", "FLAKY")


def trial_row(target: str, outcome: Any, skill_md: Path | None) -> dict:
    """The row of one trial of the plan. ``outcome`` is a ``TrialOutcome`` (duck-typed: ``overall``, ``summary``,
    ``verdict``, ``verdict_path``, ``workdir``, ``report``) or a ``LiveTrialError`` raised before the trial had a
    workdir (``status``, ``message``)."""
    if not hasattr(outcome, "overall"):
        return {"target": target, "status": str(getattr(outcome, "status", "ERROR")), "action": None,
                "summary": str(getattr(outcome, "message", outcome)), "reasons": [], "report": None,
                "verdict_path": None, "workdir": None, "skill_md": str(skill_md) if skill_md else None,
                "duration_s": None, "usage": None}
    if hasattr(outcome, "attempts"):
        return case_row(target, outcome, skill_md)
    if hasattr(outcome, "samples"):
        return activation_row(target, outcome, skill_md)
    verdict = outcome.verdict or {}
    reasons = [str(r) for r in ((verdict.get("overall") or {}).get("reasons") or [])]
    return {"target": target, "status": outcome.overall, "action": None, "summary": outcome.summary or "",
            "reasons": reasons, "report": str(outcome.report) if getattr(outcome, "report", None) else None,
            "verdict_path": str(outcome.verdict_path) if outcome.verdict_path else None,
            "workdir": str(outcome.workdir) if outcome.workdir else None,
            "skill_md": str(skill_md) if skill_md else None, "duration_s": trial_duration_s(verdict),
            "usage": verdict.get("usage")}


def case_row(target: str, outcome: Any, skill_md: Path | None) -> dict:
    """The row of a case run (a case with ``repeats``, references/suite-format.md "Repeats"): its case verdict (FLAKY
    a failure whose message holds the pass rate), its reasons, ``pass_rate`` (``2/3``) and each attempt's ``n``,
    ``verdict`` and absolute ``workdir``."""
    doc = outcome.verdict
    root = Path(outcome.folder).parents[3]
    rate = doc["pass_rate"]
    return {"target": target, "status": outcome.overall, "action": None, "summary": outcome.summary or "",
            "reasons": [str(r) for r in doc.get("reasons") or []],
            "report": str(outcome.report) if getattr(outcome, "report", None) else None,
            "verdict_path": str(outcome.verdict_path), "workdir": str(outcome.folder),
            "skill_md": str(skill_md) if skill_md else None, "duration_s": trial_duration_s(doc),
            "usage": doc.get("usage"), "pass_rate": f"{rate['passed']}/{rate['samples']}",
            "attempts": [{"n": a["n"], "verdict": a["verdict"],
                          "workdir": str(root / a["workdir"]) if a["workdir"] else None} for a in doc["attempts"]]}


def activation_row(target: str, outcome: Any, skill_md: Path | None) -> dict:
    """The row of an activation run (README "Does it start by itself?"): its verdict (FAIL and FLAKY failures whose
    text names the prompts that went wrong first, BLOCKED an error), ``measure`` (precision and recall) and the
    properties ``live_trial.kind`` (activation), ``live_trial.precision``, ``live_trial.recall``,
    ``live_trial.confusion`` and ``live_trial.prompt.<n>`` (its status and how many sessions started the skill)."""
    doc = outcome.doc
    c = doc["confusion"]
    props = [("live_trial.kind", "activation"), ("live_trial.precision", _num(doc["precision"])),
             ("live_trial.recall", _num(doc["recall"])),
             ("live_trial.confusion", f"tp {c['true_positive']} fn {c['false_negative']} fp {c['false_positive']} "
                                      f"tn {c['true_negative']}")]
    props += [(f"live_trial.prompt.{p['n']}", f"{p['status']} {p['triggered']}/{p['samples']}")
              for p in sorted(doc["prompts"], key=lambda p: p["n"])]
    return {"target": target, "status": outcome.overall, "action": None, "summary": outcome.summary or "",
            "reasons": [str(r) for r in doc.get("reasons") or []],
            "report": str(outcome.report) if getattr(outcome, "report", None) else None,
            "verdict_path": str(outcome.path), "workdir": str(outcome.folder),
            "skill_md": str(skill_md) if skill_md else None, "duration_s": trial_duration_s(doc), "usage": None,
            "measure": f"P {_num(doc['precision'])} R {_num(doc['recall'])}", "properties": props}


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def skip_row(skill: Mapping[str, Any], eval_root: Path | None = None) -> dict:
    """The row of a plan skill that gets no trial in this run (``action`` reuse, defer, watching, not_live or
    refused), skipped with the plan's reason; a reused skill names the PASS that stands."""
    verdict = skill.get("verdict")
    where = str(Path(eval_root) / verdict) if (verdict and eval_root) else verdict
    report = str(Path(where).parent / REPORT) if where and skill.get("action") == "reuse" else None
    case = skill.get("case") or "default"
    name = skill["target"] if case == "default" else f"{skill['target']} [{case}]"
    return {"target": name, "status": "SKIPPED", "action": skill["action"],
            "summary": f"{skill['action']}: {skill.get('reason') or ''}".rstrip(": "), "reasons": [],
            "report": report, "verdict_path": where if skill.get("action") == "reuse" else None,
            "workdir": None, "skill_md": None, "duration_s": None, "usage": None}


def junit_xml(rows: Iterable[Mapping[str, Any]], suite_name: str = "live-trial") -> str:
    """The JUnit XML document (a ``<testsuites>`` with one ``<testsuite>``) for ``rows``, as text."""
    from junitparser import Error, Failure, JUnitXml, Properties, Property, Skipped, TestCase, TestSuite

    suite = TestSuite(suite_name)
    for row in rows:
        plugin = row["target"].split(":", 1)[0]
        case = TestCase(row["target"], classname=plugin, time=row.get("duration_s") or 0.0)
        props = Properties()
        for name, key in (("live_trial.report", "report"), ("live_trial.verdict", "verdict_path"),
                          ("live_trial.workdir", "workdir"), ("live_trial.skill_md", "skill_md")):
            if row.get(key):
                props.add_property(Property(name, str(row[key])))
        if row.get("action"):
            props.add_property(Property("live_trial.action", str(row["action"])))
        props.add_property(Property("live_trial.status", row["status"]))
        if row.get("pass_rate"):            # a case run: its pass rate and every attempt's workdir
            props.add_property(Property("live_trial.pass_rate", str(row["pass_rate"])))
            for a in row.get("attempts") or []:
                props.add_property(Property(f"live_trial.attempt.{a['n']}", f"{a['verdict']} {a['workdir'] or '-'}"))
        for name, value in row.get("properties") or ():      # an activation run's measures
            props.add_property(Property(name, str(value)))
        costs = junit_properties({"usage": row.get("usage")})     # README "What a trial costs"
        if row.get("pass_rate"):            # a case's usage adds up its attempts' costs, not their tokens
            costs = [(k, v) for k, v in costs if not k.startswith("tokens.")]
        for name, value in costs:
            props.add_property(Property(f"live_trial.{name}", value))
        case.append(props)
        status = row["status"]
        text = "\n".join(row.get("reasons") or [])
        if status == "PASS":
            pass
        elif status in FAILURES:
            result: Failure | Error = Failure(message=row.get("summary") or status, type_=status)
            result.text = text or None      # type: ignore[assignment]  # None: no text (junitparser annotates str)
            case.result = [result]
        elif status == "SKIPPED":
            case.result = [Skipped(message=row.get("summary") or row.get("action") or "skipped",
                                   type_=row.get("action") or "skipped")]
        else:
            result = Error(message=row.get("summary") or status, type_=status)
            result.text = text or None      # type: ignore[assignment]  # None: no text (junitparser annotates str)
            case.result = [result]
        suite.add_testcase(case)
    total = suite_cost([{"usage": row.get("usage")} for row in rows])
    if total["trials"]:
        suite_props = Properties()
        for name in ("cost_usd", "estimate_usd"):
            suite_props.add_property(Property(f"live_trial.{name}", f"{total[name]:.6f}"))
        suite.append(suite_props)
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    xml.update_statistics()
    body = xml.tostring()
    doc = body.decode("utf-8") if isinstance(body, bytes) else str(body)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + doc + "\n"


def write_junit(path: Path, rows: Iterable[Mapping[str, Any]], suite_name: str = "live-trial") -> None:
    """Write :func:`junit_xml` to ``path`` atomically (temp file in the same folder, fsync, rename)."""
    write_text_atomic(Path(path), junit_xml(list(rows), suite_name))
