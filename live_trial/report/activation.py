"""Past activation runs as a person looks them up (README "Does it start by itself?", "Reading a trial"): one run's
result read from its folder (:func:`read_activation_run`), every run under an eval root newest first
(:func:`list_activation_runs`), the lines ``show`` prints (:func:`activation_lines`), and the run's own page
``report.html`` (:func:`write_activation_report`): a table of its prompts with each session's outcome and step.

A folder is read, never changed; a result that does not fit its schema, or a run stopped before its result, is still
listed with one line saying what is wrong (``problem``), and never raises.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import quote

from live_trial.acceptance.activation import read_activation
from live_trial.acceptance.evallog import ACTIVATIONS
from live_trial.clock import utc_now
from live_trial.errors import RefusedInput
from live_trial.jsonfile import write_text_atomic
from live_trial.report.run_folders import RunFolder, listed, read_run
from live_trial.workdir_files import ACTIVATION, REPORT

#: A person reads the page, and may serve or share it (as a trial's report.html).
REPORT_MODE = 0o644


@dataclass
class ActivationInfo(RunFolder):
    """One activation run as ``ls`` and ``show`` present it (:class:`~live_trial.report.run_folders.RunFolder`: its
    activation.json, or what is wrong with it)."""

    @property
    def label(self) -> str:
        """``plugin:skill [case]``."""
        return f"{self.target} [{(self.doc or {}).get('case') or '?'}]"

    @property
    def measures(self) -> str:
        """``precision 1.0, recall 0.5 (tp 2, fn 2, fp 0, tn 4)``; ``-`` without a result."""
        doc = self.doc
        if not doc:
            return "-"
        c = doc["confusion"]
        return (f"precision {_num(doc['precision'])}, recall {_num(doc['recall'])} (tp {c['true_positive']}, "
                f"fn {c['false_negative']}, fp {c['false_positive']}, tn {c['true_negative']})")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def read_activation_run(folder: Path) -> ActivationInfo:
    """The :class:`ActivationInfo` of an activation run's folder. Never raises."""
    return read_run(ActivationInfo, folder, ACTIVATION, read_activation,
                    "the run stopped before its result, or still runs")


def list_activation_runs(eval_root: Path, *, skill: str | None = None,
                         verdict: str | None = None) -> list[ActivationInfo]:
    """The activation runs under ``eval_root``, newest first; ``skill`` and ``verdict`` filter as ``ls`` does
    (``none``: without a valid result). Raises nothing for a missing eval root (the trial list refuses it)."""
    return listed([read_activation_run(p) for p in Path(eval_root).glob(f"*/*/{ACTIVATIONS}/*") if p.is_dir()],
                  skill=skill, verdict=verdict)


def is_activation_run(folder: Path) -> bool:
    """True for ``<eval-root>/<plugin>/<skill>/live-trial-activation/<id>``."""
    return Path(folder).parent.name == ACTIVATIONS


def session_rows(info: ActivationInfo) -> list[dict]:
    """Every session of every prompt, the prompts that went wrong first: ``{n, prompt, should_trigger, status,
    repeat, outcome, step, others, ended, workdir}`` with an absolute ``workdir``."""
    root = info.eval_root
    return [{"n": p["n"], "prompt": p["prompt"], "should_trigger": p["should_trigger"], "status": p["status"],
             **r, "workdir": str(root / r["workdir"]) if r.get("workdir") else None}
            for p in (info.doc or {}).get("prompts") or [] for r in p["runs"]]


def activation_lines(info: ActivationInfo) -> list[str]:
    """What ``show`` prints for an activation run: the verdict and summary, the measures, the reasons, then one line
    per prompt (the ones that went wrong first) with how many sessions started the skill, and each session's outcome,
    step and workdir."""
    if info.doc is None:
        return [f"{info.label}: {info.problem}"]
    doc = info.doc
    out = [f"{doc['verdict']}: {info.label}: {doc['summary']}", info.measures]
    out += [f"  - {r}" for r in doc["reasons"]]
    for p in doc["prompts"]:
        want = "should start it" if p["should_trigger"] else "should not"
        out.append(f"prompt {p['n']} ({want}, {p['status']}): started in {p['triggered']} of {p['samples']}: "
                   f"{' '.join(p['prompt'].split())[:100]}")
        for r in p["runs"]:
            where = str(info.eval_root / r["workdir"]) if r.get("workdir") else "(no workdir)"
            step = f" at step {r['step']}" if r.get("step") is not None else ""
            instead = f", {', '.join(r['others'])} instead" if r.get("others") else ""
            out.append(f"  #{r['repeat']} {r['outcome']}{step}{instead} ({r['ended']})  {where}")
    if doc.get("acceptance"):
        a = doc["acceptance"]
        out.append(f"acceptance trial: {a['verdict']} {a.get('summary') or ''} "
                   f"{info.eval_root / a['workdir'] if a.get('workdir') else ''}".rstrip())
    return out + cost_lines(doc)


def cost_lines(doc: Mapping[str, Any]) -> list[str]:
    """What an activation run cost, every session's and the acceptance trial's added up (README "What a trial
    costs"): ``cost: $0.0123 over 5 sessions (API list price estimate)``; a rehearsal's is $0 with its scripted tokens'
    list price beside it. Empty when no session recorded any."""
    from live_trial.report.cost import activation_sessions
    from live_trial.transcript.usage import format_usd

    usage = doc.get("usage")
    if not isinstance(usage, Mapping):
        return []
    sessions = activation_sessions(doc)
    what = f"{sessions} session{'s' if sessions != 1 else ''}" + (" and the acceptance trial" if doc.get("acceptance")
                                                                  else "")
    unpriced = usage.get("unpriced_models") or ()
    if usage.get("billed"):
        return [f"cost: {format_usd(usage.get('cost_usd'), unpriced)} over {what} (API list price estimate)"]
    return [f"cost: $0 over {what} (a rehearsal: no real API was paid; its scripted tokens at list price: "
            f"{format_usd(usage.get('estimate_usd'), unpriced)}, estimate only)"]


def _href(path: str | None, start: Path) -> str | None:
    if not path:
        return None
    return quote(Path(os.path.relpath(path, start)).as_posix(), safe="/.")


def activation_context(folder: Path) -> dict:
    """Everything the run's page shows, as plain data. Raises :class:`RefusedInput` when ``folder`` holds no readable
    activation.json."""
    info = read_activation_run(folder)
    if info.doc is None:
        raise RefusedInput(f"not an activation run's folder: {info.problem}", where=str(folder), code="bad_workdir",
                           fix="pass eval-log/<plugin>/<skill>/live-trial-activation/<run-id>")
    doc, root = info.doc, info.eval_root
    prompts = [{**p, "runs": [{**r, "href": _href(str(root / r["workdir"]) if r.get("workdir") else None,
                                                  info.folder)} for r in p["runs"]]} for p in doc["prompts"]]
    acceptance = doc.get("acceptance")
    if acceptance:
        report = root / acceptance["workdir"] / REPORT if acceptance.get("workdir") else None
        acceptance = {**acceptance, "href": _href(str(report), info.folder) if report else None}
    return {"title": f"{doc['verdict']} · {info.label} · activation", "verdict": doc["verdict"], "label": info.label,
            "summary": doc["summary"], "reasons": doc["reasons"], "precision": _num(doc["precision"]),
            "recall": _num(doc["recall"]), "confusion": doc["confusion"], "prompts": prompts,
            "listing": doc.get("listing"), "acceptance": acceptance, "retries": doc["blocked_retries"],
            "origin": doc["scenario_origin"], "claude_version": doc.get("claude_version"),
            "stop_after_trigger": doc["stop_after_trigger"], "started_at": doc["started_at"],
            "run_id": doc["activation_run_id"], "result_file": ACTIVATION, "generated_at": utc_now(),
            "cost": next(iter(cost_lines(doc)), None)}


def write_activation_report(folder: Path) -> Path:
    """Write ``<folder>/report.html``, the activation run's page (Jinja2, autoescaped, loading nothing; mode 0644), and
    return its path. Raises :class:`RefusedInput` (no result) and OSError."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    html = env.get_template("activation.html.j2").render(**activation_context(Path(folder)))
    path = Path(folder).resolve() / REPORT
    write_text_atomic(path, html)
    os.chmod(path, REPORT_MODE)
    return path
