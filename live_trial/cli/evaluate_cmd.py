"""``evaluate`` and ``watch`` subcommands (seed 001 "goal verification"; seed 000 watches).

  live-trial evaluate --workdir W [--target plugin:skill] [--plugins-root DIR] [--model M] [--timeout S]
                     [--rehearsal SCENARIO]
  live-trial watch --id ID --result ok|ng --note TEXT     record one check result
  live-trial watch due      list watches due for a check (stamps them listed; once a day)
  live-trial watch check    start one check-only evaluator per due watch
  live-trial watch sweep    close watches 7 days old that were never confirmed
  live-trial watch daily    sweep + due checks, at most once a UTC day (for cron; plan and run do it too)
  live-trial watch list     every watch and its state (read only)

Exit codes: 0 done (evaluate: judged, PASS or FAIL), 2 refused input (nothing changed; evaluate also in a workdir
``prepare --delivery`` made whose person has not chosen light, standard or detailed), 3 BLOCKED (claude missing;
evaluate: the evaluator could not answer, its reason printed and kept in evaluation.json).
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Sequence

from live_trial.errors import ExitCode, RefusedInput
from live_trial.jsonfile import parse_json
from live_trial.notices.catalogue import LANGS
from live_trial.workdir_files import Workdir

WATCH_ACTIONS = ("due", "check", "sweep", "daily", "list")


def register(subparsers) -> None:
    """Add ``evaluate`` and ``watch`` to the top-level parser."""
    p = subparsers.add_parser("evaluate", help="judge a trial's goal with a fresh evaluator (PASS or FAIL + blockers)",
                              description="Start a separate claude -p process with read-only tools in the trial "
                                          "folder; it answers PASS or FAIL with blockers and evidence, which is "
                                          "checked and kept in evaluation.json. Exit 0 when judged (PASS or FAIL; "
                                          "see the first line), 2 refused input, 3 claude missing or the evaluator "
                                          "could not answer (the first line says why: e.g. the CLI is not logged "
                                          "in).")
    p.add_argument("--workdir", type=Path, required=True, help="the trial folder (holds out/ and transcript.jsonl)")
    p.add_argument("--target", help="plugin:skill (default: the target in the folder's trial-state.json)")
    p.add_argument("--plugins-root", type=Path, help="folder holding the plugins (default: from trial-state.json, "
                                                     "else ./plugins)")
    p.add_argument("--model", help="model for the evaluator")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds per evaluator attempt")
    p.add_argument("--claude-bin", help="the claude executable")
    p.add_argument("--rehearsal", type=Path, metavar="SCENARIO",
                   help="judge with the scripted evaluator of this scenario (its StructuredOutput rule) instead of "
                        "the real model: the rehearsal server runs while the evaluator does")
    p.add_argument("--json", action="store_true", help="print evaluation.json instead of text")
    p.set_defaults(func=_evaluate)

    w = subparsers.add_parser("watch", help="watches: record a check, list due ones, run checks, sweep expired",
                              description="Without an action: record one check result (--id, --result, --note). "
                                          "Actions: due, check, sweep, daily, list. Exit 0 done, 2 refused.",
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog="cron (daily checks for people who run no trials):\n"
                                     "  17 8 * * * cd /path/to/repo && .venv/bin/python -m live_trial watch daily "
                                     "--eval-root eval-log >> eval-log/watch-cron.log 2>&1")
    w.add_argument("action", nargs="?", choices=WATCH_ACTIONS, help="what to do (none: record --result)")
    w.add_argument("--id", dest="watch_id", help="watch id (w-xxxxxxxx)")
    w.add_argument("--result", choices=["ok", "ng"], help="ok: confirmed; ng: not (the third ng closes it)")
    w.add_argument("--note", help="what was seen, counted")
    w.add_argument("--eval-root", type=Path, default=Path("eval-log"), help="where watches.json is (default eval-log)")
    w.add_argument("--lang", choices=LANGS, help="notification language (default LIVE_TRIAL_LANG, else ja)")
    w.add_argument("--claude-bin", help="the claude executable for check / daily")
    w.add_argument("--model", help="model for the check-only evaluator")
    w.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds per check")
    w.add_argument("--json", action="store_true", help="print one JSON object")
    w.set_defaults(func=_watch)


def _target_for(args) -> object:
    from live_trial.closure.target import resolve_target

    state_path = Workdir.of(args.workdir).trial_state
    state = {}
    if state_path.is_file():
        try:
            state = parse_json(state_path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError, OSError):
            state = {}
    name = args.target or state.get("target")
    if not name:
        raise RefusedInput("no target given and none in the folder's trial-state.json", where="--target",
                           fix="pass --target plugin:skill", code="refused_input")
    root = args.plugins_root or (Path(state["plugins_root"]) if state.get("plugins_root") else Path("plugins"))
    from live_trial.acceptance.case_criteria import criteria_pairs, with_criteria

    return with_criteria(resolve_target(name, root), criteria_pairs(state.get("criteria")))   # a case's own too


def _folder_of(workdir: Path) -> str | None:
    """The trial's own folder as its trial-state.json records it (``folder.path``), or None."""
    try:
        folder = parse_json(Workdir.of(workdir).trial_state.read_text(encoding="utf-8")).get("folder")
    except (OSError, ValueError, AttributeError):
        return None
    return folder.get("path") if isinstance(folder, dict) else None


def _evaluate(args) -> int:
    from live_trial.acceptance.origin import trial_folder
    from live_trial.judge.evaluator import evaluate
    from live_trial.session.claude_bin import find_claude
    from live_trial.trial.changes import session_output

    if not args.workdir.is_dir() and not args.workdir.is_symlink():
        raise RefusedInput("the workdir does not exist", where=str(args.workdir), code="not_found")
    args.workdir = trial_folder(args.workdir)      # never evaluation.json in a folder run did not make, or via a link
    from live_trial.acceptance.delivery_state import require_choice

    require_choice(args.workdir, "evaluate")       # seed 001 pre_choice_forbidden: no evaluator before the choice
    target = _target_for(args)
    claude = find_claude(args.claude_bin)
    produced = session_output(args.workdir, _folder_of(args.workdir))
    server = None
    env = dict(os.environ)
    if args.rehearsal is not None:
        from live_trial.rehearsal.config import rehearsal_env, seed_config
        from live_trial.rehearsal.scenario import load_scenario
        from live_trial.rehearsal.server import RehearsalServer

        scenario = load_scenario(args.rehearsal)          # refused (exit 2) before anything starts
        config = Workdir.of(args.workdir.resolve()).claude_config
        if not (config / ".claude.json").exists():
            seed_config(config, [args.workdir.resolve()])
        server = RehearsalServer(scenario).start()
        env.update(rehearsal_env(server.url, config))
    try:
        doc = evaluate(args.workdir, target, claude, env, produced=produced, model=args.model, timeout_s=args.timeout)
    finally:
        if server is not None:
            server.stop()
    unable = _could_not_answer(doc)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    elif unable:
        print(f"BLOCKED: the evaluator could not judge: {unable}; kept in {Workdir.of(args.workdir).evaluation}")
    else:
        print(f"{doc['goal_result']}: {len(doc['evidence'])} evidence items, {len(doc['blockers'])} blockers, "
              f"{len(doc['attempts'])} attempt(s); written {Workdir.of(args.workdir).evaluation}")
        for b in doc["blockers"]:
            print(f"  blocker: {b}")
        for e in doc["evidence"]:
            print(f"  evidence: {e['observed']} ({e['source']})")
        if doc.get("judged_by") != "evaluator":
            problems = (doc["attempts"][-1].get("problems") or [])[:2] if doc.get("attempts") else []
            for problem in problems:
                print(f"  why: {problem}")
    return ExitCode.BLOCKED if unable else ExitCode.OK


def _could_not_answer(doc: dict) -> str | None:
    """Why the evaluator gave no valid answer after its retry (its CLI reported an error, e.g. "Not logged in · Please
    run /login" or ``error_max_structured_output_retries``, gave no JSON, did not answer in time, or each answer broke
    the answer's form), from the last attempt kept in evaluation.json; None when it judged (an answer whose evidence
    does not hold is a judgement: a FAIL). The trial's rule too (``evaluator_failed``, README "Whose failure it is")."""
    attempts = doc.get("attempts") or []
    if doc.get("judged_by") != "fallback" or not attempts:
        return None
    problems = attempts[-1].get("problems") or []
    return "; ".join(problems) or (attempts[-1].get("stderr_tail") or "no answer")[:300]


def watch_starter(args):
    """The starter of ``watch check`` and ``watch daily`` (:func:`live_trial.judge.evaluator.check_starter` with the
    command's ``--claude-bin``, ``--model`` and ``--timeout``); it finds claude only when a check is really started
    (no due watch: claude is not needed)."""
    built: list = []

    def start(watch: dict, eval_root: Path):
        if not built:
            from live_trial.judge.evaluator import check_starter
            from live_trial.session.claude_bin import find_claude
            built.append(check_starter(env=dict(os.environ), claude=find_claude(args.claude_bin), model=args.model,
                                       timeout_s=args.timeout))
        return built[0](watch, eval_root)

    return start


def _emit(args, status: str, line: str, payload: dict, rows: Sequence[str] = ()) -> None:
    if args.json:
        print(json.dumps({"status": status, **payload}, ensure_ascii=False))
        return
    print(f"{status}: {line}")
    for row in rows:
        print(f"  {row}")


def _watch(args) -> int:
    from live_trial.notices import watch as wt

    root = args.eval_root
    if args.action is None:
        missing = [f for f, v in (("--id", args.watch_id), ("--result", args.result), ("--note", args.note)) if not v]
        if missing:
            raise RefusedInput("recording a check needs " + ", ".join(missing), where="watch",
                               fix='e.g. watch --id w-1a2b3c4d --result ng --note "0 replies in the log"')
        w = wt.record_result(root, args.watch_id, args.result, args.note, lang=args.lang)
        _emit(args, "RECORDED", f"{w['id']} {args.result} -> {w['status']} (checks {w['checks']}, ng {w['ng']})",
              {"watch": w})
        return ExitCode.OK
    if args.action == "list":
        ws = wt.load_ledger(root)["watches"]
        _emit(args, "WATCHES", f"{sum(w['status'] == 'open' for w in ws)} open, {len(ws)} in all",
              {"watches": ws}, [f"{w['id']} {w['status']} since {w['since']}: {w['unverified']}" for w in ws])
        return ExitCode.OK
    if args.action == "due":
        due = wt.due_watches(root)
        _emit(args, "DUE", f"{len(due)} watch(es) due for a check", {"due": due},
              [f"{w['id']}: {w['objective']} / not confirmed yet: {w['unverified']}" for w in due])
        return ExitCode.OK
    if args.action == "sweep":
        closed = wt.sweep(root, lang=args.lang)
        _emit(args, "SWEPT", f"{len(closed)} watch(es) closed after 7 days", {"closed": closed},
              [f"{w['id']}: {w['unverified']}" for w in closed])
        return ExitCode.OK
    if args.action == "check":
        results = wt.check_due(root, watch_starter(args), lang=args.lang)
        _emit(args, "CHECKED", f"{len(results)} check(s) started", {"checked": results},
              [f"{r['id']}: {r['result'] or 'no result'} - {r['note']}" for r in results])
        return ExitCode.OK
    result = wt.daily_maintenance(root, watch_starter(args), lang=args.lang)
    resent = len(result.get("resent") or [])
    if result["ran"]:
        line = f"{len(result['swept'])} swept, {len(result['checked'])} checked"
        line += f", {resent} failed notice(s) sent again" if resent else ""
    elif resent:
        line = f"{resent} failed notice(s) sent again; no watch work ({result['reason']})"
    else:
        line = f"nothing to do ({result['reason']})"
    _emit(args, "DAILY", line, result)
    return ExitCode.OK

