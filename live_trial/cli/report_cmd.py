"""``report``, ``ls``, ``show``, ``reasons``: reading past trials (README "Reading a trial").

- ``report WORKDIR|latest`` writes ``<workdir>/report.html`` (also written by ``run`` when a trial ends).
- ``ls`` lists the trials under the eval root, newest first, one line each (a broken workdir is one line saying what
  is wrong with it, never a crash).
- ``show WORKDIR|latest`` prints one trial's summary, reasons, evidence and the next step a person should take.
- ``reasons`` prints every stop reason a verdict can record: whose failure it is, the verdict it gives, its plain
  sentence and the next step, in the message language (README "Whose failure it is").

Exit codes: 0 done; 2 refused (not a workdir, no eval root, no trial yet), nothing changed.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from live_trial.errors import ExitCode
from live_trial.notices.catalogue import LANGS

LANG_HELP = "language of a summary made for an old verdict that has none (default LIVE_TRIAL_LANG, else ja)"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``report``, ``ls`` and ``show`` subcommands."""
    p = sub.add_parser("report", help="write a trial's report.html (one self-contained page)",
                       description="Write <workdir>/report.html: the verdict and its summary, the timeline, the "
                                   "evidence, the criteria and answered questions, the conversation and the last "
                                   "screen, in one page that loads nothing from the network. Exit 0 written, "
                                   "2 refused.")
    p.add_argument("workdir", help="eval-log/<plugin>/<skill>/live-trial/<run-id>, a case run's "
                                   "eval-log/<plugin>/<skill>/live-trial-cases/<id>, an activation run's "
                                   "eval-log/<plugin>/<skill>/live-trial-activation/<id>, or `latest`")
    _common(p)
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("ls", help="list past trials, newest first",
                       description="One line per trial under the eval root, newest first: when, target, verdict, "
                                   "reason, duration, rehearsal or live (an attempt of a case run says which); then "
                                   "one line per case run (repeats) with its pass rate and every attempt's workdir; "
                                   "then one per activation run with its precision, recall and each prompt. "
                                   "Exit 0, 2 when the eval root is missing.")
    p.add_argument("--skill", help="only this skill (its name or plugin:skill)")
    p.add_argument("--verdict", type=str.upper, choices=["PASS", "FAIL", "DEGRADED", "BLOCKED", "FLAKY", "NONE"],
                   help="only trials (and case runs) with this verdict (NONE: without a valid verdict; FLAKY: case "
                        "runs only)")
    _common(p)
    p.set_defaults(func=cmd_ls)
    p = sub.add_parser("show", help="print one trial's summary, reasons, evidence, warnings and next step",
                       description="Print a trial's summary, the reasons for its verdict, its evidence and the next "
                                   "step to take. Exit 0 shown, 2 refused.")
    p.add_argument("workdir", help="eval-log/<plugin>/<skill>/live-trial/<run-id>, a case run's "
                                   "eval-log/<plugin>/<skill>/live-trial-cases/<id>, an activation run's "
                                   "eval-log/<plugin>/<skill>/live-trial-activation/<id>, or `latest`")
    _common(p)
    p.set_defaults(func=cmd_show)
    p = sub.add_parser("reasons", help="list every stop reason: whose failure it is, its verdict and the next step",
                       description="One entry per stop reason a verdict's stop_reason can hold: the code, whose "
                                   "failure it is (skill, environment, harness), the verdict it gives, its plain "
                                   "sentence and what a person is told to do next, in the message language. Exit 0.")
    p.add_argument("--lang", choices=LANGS, help="the message language (default LIVE_TRIAL_LANG, else ja)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_reasons)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--eval-root", type=Path, default=Path("eval-log"), help="where the trials are (default ./eval-log)")
    p.add_argument("--lang", choices=LANGS, help=LANG_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _workdir(args) -> Path:
    from live_trial.errors import RefusedInput

    if args.workdir == "latest":
        return _latest(args.eval_root)
    path = Path(args.workdir)
    if path.is_symlink():
        raise RefusedInput("the workdir is a symlink", where=str(path), code="bad_workdir",
                           fix=f"pass the trial's folder itself ({path.resolve()})")
    if not path.is_dir():
        raise RefusedInput("no such workdir", where=str(path), code="not_found",
                           fix="pass eval-log/<plugin>/<skill>/live-trial/<run-id> (see `live-trial ls`), or `latest`")
    return path.resolve()


def _latest(eval_root: Path) -> Path:
    """``latest``: of the newest trial, case run and activation run under ``eval_root``, the one whose result was
    written last (verdict.json, case-verdict.json, activation.json; the folder's own time when it has none yet), so an
    activation run or a case run just ended is the one shown. Raises RefusedInput when there is none, or when
    ``eval_root`` is not a folder."""
    from live_trial.errors import RefusedInput
    from live_trial.report.activation import list_activation_runs
    from live_trial.report.cases import list_case_runs
    from live_trial.report.trials import list_trials
    from live_trial.workdir_files import ACTIVATION, CASE_VERDICT, VERDICT

    trials = list_trials(eval_root)        # refuses an eval root that is no folder
    found = [t.workdir for t in trials[:1]] + [r.folder for r in [*list_case_runs(eval_root)[:1],
                                                                  *list_activation_runs(eval_root)[:1]]]
    if not found:
        raise RefusedInput("no trial under the eval root", where=str(eval_root), code="not_found",
                           fix="run one first (make demo), or pass --eval-root")

    def written(folder: Path) -> float:
        results = [folder / n for n in (VERDICT, CASE_VERDICT, ACTIVATION)]
        return max([r.stat().st_mtime for r in results if r.is_file()] or [folder.stat().st_mtime])
    return max(found, key=written).resolve()


def cmd_report(args) -> int:
    """Handler of ``report``: write report.html (a trial's, or a case run's page), print its path."""
    from live_trial.report.page import write_report
    from live_trial.workdir_files import ACTIVATION, CASE_VERDICT

    workdir = _workdir(args)
    if (workdir / CASE_VERDICT).is_file():
        from live_trial.report.cases import write_case_report

        path = write_case_report(workdir)
    elif (workdir / ACTIVATION).is_file():
        from live_trial.report.activation import write_activation_report as write_page

        path = write_page(workdir)
    else:
        path = write_report(workdir, args.lang)
    print(json.dumps({"status": "WRITTEN", "path": str(path)}) if args.json else f"WRITTEN: {path}")
    return ExitCode.OK


def _row(info, lang: str | None) -> dict:
    from live_trial.acceptance.case_verdict import CaseRun
    from live_trial.report.cost import cost_cell, usage_of
    from live_trial.report.trials import duration_text, when_text

    usage = usage_of(info.verdict)
    run = CaseRun.from_doc(info.state.get("case_run"))
    return {"case_run": None if run is None else {"id": run.id, "case": run.case, "attempt": run.attempt,
                                                  "repeats": run.repeats, "folder": str(run.folder)},
            "cost_usd": usage.get("cost_usd") if usage else None,
            "estimate_usd": usage.get("estimate_usd") if usage else None, "_cost": cost_cell(info.verdict),
            "when": info.when, "target": info.target, "verdict": info.overall, "reason": info.reason if info.verdict
            else info.problem, "duration_s": info.duration_s, "origin": info.origin, "workdir": str(info.workdir),
            "summary": info.summary(lang), "_when": when_text(info.when), "_duration": duration_text(info.duration_s)}


def _case_row(info) -> dict:
    """A case run as ``ls`` lists it (references/suite-format.md "Repeats")."""
    doc = info.doc or {}
    return {"when": doc.get("started_at"), "target": info.label, "verdict": doc.get("verdict"),
            "pass_rate": doc.get("pass_rate"), "repeats": doc.get("repeats"), "folder": str(info.folder),
            "summary": doc.get("summary") or info.problem,
            "attempts": [{"n": a["n"], "verdict": a["verdict"], "sample": a["sample"], "workdir": a["workdir"]}
                         for a in info.attempts()]}


def cmd_ls(args) -> int:
    """Handler of ``ls``: one line per trial, newest first, then one per case run with its attempts."""
    from live_trial.report.activation import list_activation_runs
    from live_trial.report.cases import list_case_runs
    from live_trial.report.trials import list_trials

    rows = [] if args.verdict == "FLAKY" else [_row(info, args.lang) for info in
                                               list_trials(args.eval_root, skill=args.skill, verdict=args.verdict)]
    cases = [_case_row(info) for info in list_case_runs(args.eval_root, skill=args.skill, verdict=args.verdict)]
    activations = [_activation_row(info) for info in list_activation_runs(args.eval_root, skill=args.skill,
                                                                          verdict=args.verdict)]
    if args.json:
        print(json.dumps({"trials": [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
                          "case_runs": cases, "activation_runs": activations}, ensure_ascii=False))
        return ExitCode.OK
    if not rows and not cases and not activations:
        print(f"no trials under {args.eval_root}" + (" matching the filters" if args.skill or args.verdict else ""))
        return ExitCode.OK
    _print_trials(rows)
    for case in cases:
        rate = case["pass_rate"]
        print(f"case run {case['target']}: {case['verdict'] or 'BROKEN'}"
              + (f", {rate['passed']}/{rate['samples']} passed of {case['repeats']} asked" if rate else "")
              + f"  {case['folder']}" + ("" if case["verdict"] else f"  ({case['summary']})"))
        for a in case["attempts"]:
            print(f"  attempt {a['n']}: {a['verdict']}{'' if a['sample'] else ' (not a sample)'}  "
                  f"{a['workdir'] or '(no workdir)'}")
    for run in activations:         # README "Does it start by itself?": never an acceptance verdict
        print(f"activation {run['target']}: {run['verdict'] or 'BROKEN'}, {run['measures']}  {run['folder']}"
              + ("" if run["verdict"] else f"  ({run['summary']})"))
        for p in run["prompts"]:
            print(f"  prompt {p['n']} ({'should' if p['should_trigger'] else 'should not'} start it): "
                  f"{p['status']}, started in {p['triggered']} of {p['samples']}")
    return ExitCode.OK


def _activation_row(info) -> dict:
    """An activation run as ``ls`` lists it: its verdict, precision, recall and each prompt's share."""
    doc = info.doc or {}
    return {"when": doc.get("started_at"), "target": info.label, "verdict": doc.get("verdict"),
            "precision": doc.get("precision"), "recall": doc.get("recall"), "confusion": doc.get("confusion"),
            "measures": info.measures, "folder": str(info.folder), "summary": doc.get("summary") or info.problem,
            "prompts": [{k: p[k] for k in ("n", "should_trigger", "status", "triggered", "samples", "share")}
                        for p in doc.get("prompts") or []]}


def _print_trials(rows: list[dict]) -> None:
    """The trial lines of ``ls`` (an attempt of a case run names it first in its reason)."""
    if not rows:
        return
    width = max([len(r["target"]) for r in rows] + [6])
    cost_w = max([len(r["_cost"]) for r in rows] + [4])
    print(f"{'when':<20}  {'target':<{width}}  {'verdict':<8}  {'took':>7}  {'cost':>{cost_w}}  {'origin':<9}  reason")
    for r in rows:
        verdict = r["verdict"] or "BROKEN"
        reason = " ".join(str(r["reason"] or "-").split())
        if r["case_run"]:
            run = r["case_run"]
            reason = f"[attempt {run['attempt']} of case {run['case']}, case run {run['id']}] {reason}"
        print(f"{r['_when']}  {r['target']:<{width}}  {verdict:<8}  {r['_duration']:>7}  {r['_cost']:>{cost_w}}  "
              f"{r['origin'] or '-':<9}  "
              f"{reason[:140]}")


def cmd_show(args) -> int:
    """Handler of ``show``: the summary, reasons, evidence, warnings, notes, the plugins' activity (a line per hook and
    MCP server), the case run a trial is an attempt of, and next step of one trial."""
    from live_trial.acceptance.evallog import ACTIVATIONS, CASES
    from live_trial.report.activity import activity_text
    from live_trial.report.cases import case_line
    from live_trial.report.cost import usage_lines
    from live_trial.report.trials import duration_text, next_step_line, read_trial, require_trial, when_text
    from live_trial.workdir_files import ACTIVATION, CASE_VERDICT, REPORT

    workdir = _workdir(args)
    if (workdir / CASE_VERDICT).is_file() or workdir.parent.name == CASES:
        return _show_case(workdir, args.json)
    if (workdir / ACTIVATION).is_file() or workdir.parent.name == ACTIVATIONS:
        return _show_activation(workdir, args.json)
    info = read_trial(require_trial(workdir))
    doc = info.verdict or {}
    reasons = (doc.get("overall") or {}).get("reasons") or []
    report = info.workdir / REPORT
    shown: dict[str, Any] = {
             "workdir": str(info.workdir), "target": info.target, "verdict": info.overall, "problem": info.problem,
             "when": info.when, "duration_s": info.duration_s, "origin": info.origin,
             "summary": info.summary(args.lang),
             "reasons": reasons, "evidence": doc.get("evidence") or [], "criteria": doc.get("criteria"),
             "gate_answers": doc.get("gate_answers"), "warnings": doc.get("warnings") or [],
             "notes": doc.get("notes") or [], "usage": doc.get("usage"), "next_step": next_step_line(info),
             "plugin_activity": activity_text(doc),
             "report": str(report) if report.is_file() else None, "case_run": case_line(info.workdir)}
    if args.json:
        print(json.dumps(shown, ensure_ascii=False))
        return ExitCode.OK
    out = [f"{info.overall or 'NO VERDICT'}: {info.target}  ({when_text(info.when)}, {duration_text(info.duration_s)}, "
           f"{info.origin or 'origin unknown'})", f"summary: {shown['summary'] or '-'}"]
    if info.problem:
        out.append(f"problem: {info.problem}")
    if shown["case_run"]:
        out.append(f"case run: {shown['case_run']}")
    out += ["reasons:"] + [f"  - {r}" for r in reasons] if reasons else []
    evidence = shown["evidence"]
    out += ["evidence:"] + [f"  - {e.get('claim')}: {e.get('observed')} ({e.get('source')})" for e in evidence] \
        if evidence else ["evidence: none"]
    for c in shown["criteria"] or []:
        out.append(f"  criterion {c.get('id')}: {c.get('result')} — {c.get('text')}")
    for g in shown["gate_answers"] or []:
        out.append(f"  question {g.get('n')}: {g.get('question') or '-'} -> {g.get('answer')} ({g.get('kind')})")
    # a claude outside the verified range, a record type unknown to the reader: said where the user looks
    out += ["warnings:"] + [f"  - {w}" for w in shown["warnings"]] if shown["warnings"] else []
    out += ["notes:"] + [f"  - {n}" for n in shown["notes"]] if shown["notes"] else []
    out += ["plugin activity:"] + [f"  - {a}" for a in shown["plugin_activity"]] if shown["plugin_activity"] else []
    out += usage_lines(doc)
    out.append(f"next step: {shown['next_step']}")
    out.append(f"report: {report}" if shown["report"] else f"report: live-trial report {info.workdir}")
    print("\n".join(out))
    return ExitCode.OK


def _show_activation(folder: Path, json_mode: bool) -> int:
    """``show`` of an activation run's folder: its verdict, summary, precision, recall and confusion counts, the
    reasons, every prompt (the ones that went wrong first) with each session's outcome, step and workdir, and its
    page (README "Does it start by itself?")."""
    from live_trial.errors import RefusedInput
    from live_trial.report.activation import activation_lines, read_activation_run, session_rows

    info = read_activation_run(folder)
    if info.doc is None:
        raise RefusedInput(f"not an activation run that can be shown: {info.problem}", where=str(folder),
                           code="bad_workdir", fix="pass eval-log/<plugin>/<skill>/live-trial-activation/<id> "
                                                   "(see `live-trial ls`)")
    report = folder / "report.html"
    doc = info.doc
    if json_mode:
        print(json.dumps({"folder": str(folder), "target": info.label, "verdict": doc["verdict"],
                          "summary": doc["summary"], "precision": doc["precision"], "recall": doc["recall"],
                          "confusion": doc["confusion"], "reasons": doc["reasons"], "sessions": session_rows(info),
                          "acceptance": doc.get("acceptance"), "report": str(report) if report.is_file() else None},
                         ensure_ascii=False))
        return ExitCode.OK
    print("\n".join(activation_lines(info) + [f"report: {report}" if report.is_file() else "report: (none yet)"]))
    return ExitCode.OK


def write_activation_report(outcome) -> None:
    """After an activation run: its page (README "Does it start by itself?"); a page that cannot be written is one
    WARN line on stderr, and the exit code stays the result's."""
    from live_trial.report.activation import write_activation_report as write_page

    try:
        outcome.report = write_page(outcome.folder)
    except Exception as exc:  # noqa: BLE001 - the result is written; its page is a view of it
        print(f"WARN: the activation run's report.html was not written: {getattr(exc, 'message', None) or exc}",
              file=sys.stderr)


def _show_case(folder: Path, json_mode: bool) -> int:
    """``show`` of a case run's folder: its verdict, pass rate, reasons, every attempt (verdict, workdir, report) and
    its page."""
    from live_trial.errors import RefusedInput
    from live_trial.report.cases import read_case_run

    info = read_case_run(folder)
    if info.doc is None:
        raise RefusedInput(f"not a case run that can be shown: {info.problem}", where=str(folder), code="bad_workdir",
                           fix="pass eval-log/<plugin>/<skill>/live-trial-cases/<id> (see `live-trial ls`)")
    doc = info.doc
    report = folder / "report.html"
    shown = {"folder": str(folder), "target": info.label, "verdict": doc["verdict"], "summary": doc["summary"],
             "pass_rate": doc["pass_rate"], "repeats": doc["repeats"], "reasons": doc["reasons"],
             "blocked_retries": doc["blocked_retries"], "stopped": doc.get("stopped"), "attempts": info.attempts(),
             "usage": doc.get("usage"), "report": str(report) if report.is_file() else None}
    if json_mode:
        print(json.dumps(shown, ensure_ascii=False))
        return ExitCode.OK
    rate = doc["pass_rate"]
    out = [f"{doc['verdict']}: {info.label}  (case run {doc['case_run_id']}, {doc['scenario_origin']})",
           f"summary: {doc['summary']}",
           f"pass rate: {rate['passed']} of {rate['samples']} samples passed ({doc['repeats']} asked; "
           f"{doc['blocked_retries']['used']} of {doc['blocked_retries']['max']} retries of a BLOCKED attempt used)"]
    out += ["reasons:"] + [f"  - {r}" for r in doc["reasons"]] if doc["reasons"] else []
    out.append("attempts:")
    for a in shown["attempts"]:
        out.append(f"  {a['n']}: {a['verdict']}{'' if a['sample'] else ' (not a sample)'}  "
                   f"{a['workdir'] or '(no workdir)'}  {a['summary']}")
    out.append(f"report: {report}" if shown["report"] else "report: (none yet)")
    print("\n".join(out))
    return ExitCode.OK


def keep_report(outcome) -> None:
    """Write the report.html of a trial that ended among others (a case run's attempt, an activation run's acceptance
    trial) and keep its path in ``outcome.report`` (:func:`write_report_after_run`)."""
    outcome.report = write_report_after_run(outcome)


def write_report_after_run(outcome) -> Path | None:
    """Write report.html for a trial ``run`` just finished (README "Reading a trial"); a failure is one WARN line on
    stderr, never a change of the run's exit code. Returns the report's path, or None."""
    if getattr(outcome, "workdir", None) is None:
        return None
    return write_report_or_warn(outcome.workdir, getattr(outcome, "lang", None))


def write_report_or_warn(workdir: Path, lang: str | None) -> Path | None:
    """Write report.html of the judged trial in ``workdir`` (after ``run``, or a verdict written by hand); a failure
    is one WARN line on stderr, never a change of the command's exit code. Returns the report's path, or None."""
    from live_trial.report.page import write_report

    try:
        return write_report(workdir, lang)
    except Exception as exc:  # noqa: BLE001 - the trial is judged and recorded; its page is a view of it
        print(f"WARN: report.html was not written: {getattr(exc, 'message', None) or exc}", file=sys.stderr)
        return None


def write_case_reports(outcome) -> None:
    """After a case run (``run --repeat``, a plan's repeated case): its own page, then each attempt's page again, so
    both name the case verdict and link each other (references/suite-format.md "Repeats"). A page that cannot be
    written is one WARN line on stderr; the exit code stays the case verdict's."""
    from live_trial.report.cases import write_case_report

    try:
        outcome.report = write_case_report(outcome.folder)
    except Exception as exc:  # noqa: BLE001 - the case verdict is written; its page is a view of it
        print(f"WARN: the case run's report.html was not written: {getattr(exc, 'message', None) or exc}",
              file=sys.stderr)
    for attempt in outcome.attempts:
        if getattr(attempt, "workdir", None) is not None:
            attempt.report = write_report_after_run(attempt)


def cmd_reasons(args) -> int:
    """Handler of ``reasons``: every row of :class:`~live_trial.stop_reasons.StopReason` in the message language."""
    from live_trial.notices.catalogue import resolve_lang
    from live_trial.notices.outcome import reason_rows

    lang = resolve_lang(args.lang)
    rows = reason_rows(lang)
    if args.json:
        print(json.dumps({"lang": lang, "reasons": rows}, ensure_ascii=False))
        return ExitCode.OK
    width = max(len(r["code"]) for r in rows)
    for r in rows:
        print(f"{r['code']:<{width}}  {r['whose']:<11}  {r['verdict']:<7}  {r['sentence']}")
        print(f"    why: {r['why']}\n    next: {r['next']}")
    return ExitCode.OK
