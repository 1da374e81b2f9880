"""``verdict``: judge one trial from its recorded facts and write ``verdict.json`` (seed 001 "verdict + 掃除").

Exit codes: 0 written, 2 refused (nothing written: denylisted target, bad value, ungrounded contractual gate
kind, PASS without evidence or with proxy evidence (seed 000: proxies and their numbers are stripped, a real
counted observation must remain; a score anywhere is refused, also as an evidence item's key: score, rating, grade,
confidence ...), an evidence item whose source is no file under the workdir and no transcript record uuid, a PASS
whose every evidence item cites a file the harness writes (the completion marker out/status.json, trial-state.json,
task.md, ... under any spelling, also absolute, or the transcript record of the Write that wrote it;
:data:`live_trial.judge.sources.HARNESS_FILES`), a target other than the workdir's trial-state.json target, a behaviour
closure that cannot be built, a ``--launch`` the transcript contradicts (PASS needs a successful Skill call of the
target), a ``--completion`` or ``--poll-exit`` poll-state.json contradicts (README "The steps, one by one": a verdict
earns what it claims), a ``--goal-result`` other than the fresh evaluator's in ``evaluation.json``, a ``--goal-result
PASS`` no
evaluator judged, a workdir that holds a verdict already, a flag other than what ``run`` recorded for the trial in
trial-state.json; the last four unless ``--override "why"``, which the verdict records and plan never reuses).
Without ``--goal-result``, the evaluator's judgement in
``evaluation.json`` (goal, blockers, evidence, what it could not see yet, criterion checks) is the goal's; in a workdir
``run`` drove to its judgement, every fact not given is the one it recorded, so the verdict is the one ``run`` wrote.
The scenario origin comes from the workdir: a rehearsal workdir is recorded rehearsal even without
``--rehearsal-scenario``. The rules are :mod:`live_trial.acceptance.claims`'s; this module parses and prints.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from live_trial.errors import ExitCode, PollExit, require_utf8
from live_trial.notices.catalogue import LANGS

RECORDED = ("a claim checked against the workdir's records (what run recorded in trial-state.json, else the "
            "transcript and poll-state.json), which it defaults to; a contradiction is refused")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``verdict`` subcommand."""
    p = sub.add_parser(
        "verdict", help="derive the overall verdict of a trial and write verdict.json",
        description="Derive PASS / FAIL / DEGRADED / BLOCKED from the trial's facts (seed 001 judgement table), "
                    "check the gate kind against the skill's frontmatter, hash the behaviour closure and the "
                    "transcript, validate against schemas/live-trial-verdict.schema.json and write "
                    "<workdir>/verdict.json. Exit 0 written, 2 refused (nothing written).")
    p.add_argument("--workdir", type=Path, required=True, help="eval-log/<plugin>/<skill>/live-trial/<run-id>")
    p.add_argument("--target-skill", required=True, help="plugin:skill (or a plain skill name)")
    p.add_argument("--skill-dir", type=Path, required=True, help="the target skill's folder (holds SKILL.md)")
    p.add_argument("--plugins-root", type=Path, help="where dependency plugins are (default: the plugin's parent)")
    p.add_argument("--session-id", help="the claude session id of the trial")
    p.add_argument("--requested-model", help="the model asked for ('' = user default)")
    p.add_argument("--launch", choices=("PASS", "FAIL"),
                   help="PASS only with a successful Skill call of the target in the transcript; " + RECORDED)
    p.add_argument("--completion", choices=("PASS", "FAIL"),
                   help="PASS only when poll-state.json's last exit is DONE; " + RECORDED)
    p.add_argument("--goal-result", choices=("PASS", "FAIL"),
                   help="the fresh evaluator's answer (default: the judgement in the workdir's evaluation.json; "
                        "omitted without one: not judged); one that contradicts evaluation.json, or a PASS without "
                        "an evaluation.json the evaluator judged, is refused unless --override")
    p.add_argument("--goal-blocker", action="append", default=[], metavar="TEXT", help="a blocker (repeatable)")
    p.add_argument("--evidence", help="what actually happened, counted (required for --goal-result PASS; seed 000); "
                                      "or a JSON list [{claim, source, observed}] whose sources are files under "
                                      "the workdir or transcript record uuids; a PASS needs one source the harness "
                                      "did not write (not out/status.json, trial-state.json, task.md, ...); a "
                                      "score, rating, grade or confidence key is refused")
    p.add_argument("--unverified", help="what could not be checked yet: PASS as 'mostly done' and a watch")
    p.add_argument("--nudge-count", type=int, help="default 0")
    p.add_argument("--gate-response-count", type=int, help="default 0")
    p.add_argument("--gate-kind", choices=("rescue", "contractual"),
                   help="rescue (default) or contractual (must be grounded in the skill's frontmatter)")
    p.add_argument("--poll-exit", choices=tuple(PollExit),
                   help="the last poll exit (BLOCKED when tmux was missing and poll never ran; never DONE without a "
                        "poll-state.json that says so); " + RECORDED)
    p.add_argument("--proof", action="store_true", default=None,
                   help="proof trial: no intervention and the requested model")
    p.add_argument("--blocked", action="store_true", default=None, help="tmux or claude was missing")
    p.add_argument("--args", help="the args given to the skill (part of scenario_id)")
    p.add_argument("--rehearsal-scenario", type=Path, help="the trial ran against this rehearsal scenario")
    p.add_argument("--stop-reason", help="why the trial stopped (STALL table finding, crash, ...)")
    p.add_argument("--stall-row", type=int, choices=range(1, 7), metavar="1-6",
                   help="the seed's STALL table row that decided (1 crash ... 6 error screen)")
    p.add_argument("--failure-reason", help="boot, delivery or crash reason")
    p.add_argument("--claude-version", help="version of the claude CLI used (default: look it up)")
    p.add_argument("--eval-root", type=Path, help="eval-log root for the watch ledger (default: from --workdir)")
    p.add_argument("--override", metavar="WHY",
                   help="write even when --goal-result contradicts evaluation.json or no evaluator judged a goal "
                        "PASS, a flag contradicts what run recorded in trial-state.json or a verdict.json exists; "
                        "the verdict records WHY, what the evaluator said and the verdict it replaced, and plan "
                        "never reuses it (never for a launch or completion the transcript or poll-state.json "
                        "contradicts)")
    p.add_argument("--lang", choices=LANGS, help="language of the summary sentence (default LIVE_TRIAL_LANG, "
                                                      "else ja)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_verdict, usage_error=p.error)


def claims_of(args: argparse.Namespace):
    """The person's :class:`~live_trial.acceptance.claims.Claims` as the flags give them (None: not given)."""
    from live_trial.acceptance.claims import Claims

    return Claims(
        launch=args.launch, completion=args.completion, poll_exit=args.poll_exit, goal_result=args.goal_result,
        goal_blockers=tuple(args.goal_blocker), evidence=args.evidence, unverified=args.unverified,
        nudge_count=args.nudge_count, gate_response_count=args.gate_response_count, gate_kind=args.gate_kind,
        proof=args.proof, blocked=args.blocked, args=args.args, rehearsal_scenario=args.rehearsal_scenario,
        stop_reason=args.stop_reason, stall_row=args.stall_row, failure_reason=args.failure_reason,
        session_id=args.session_id, requested_model=args.requested_model, claude_version=args.claude_version,
        lang=args.lang, override=args.override)


def cmd_verdict(args) -> int:
    """Handler of ``verdict``: refuse before writing anything; write; print the status line."""
    from live_trial.acceptance.origin import trial_folder
    from live_trial.cli.report_cmd import write_report_or_warn
    from live_trial.session.rules import check_target_allowed
    from live_trial.trial.byhand import verdict_by_hand
    from live_trial.trial.state import TrialState
    from live_trial.workdir_files import TRIAL_STATE

    check_target_allowed(args.target_skill)
    for name in ("args", "evidence", "unverified"):
        if getattr(args, name):
            require_utf8(getattr(args, name), f"--{name}", fix="pass UTF-8 text")
    workdir = trial_folder(args.workdir)
    verdict, path = verdict_by_hand(claims_of(args), workdir=workdir, skill_dir=args.skill_dir,
                                    target=args.target_skill, plugins_root=args.plugins_root,
                                    eval_root=Path(args.eval_root).resolve() if args.eval_root else None)
    overall = verdict.overall
    # the page, as run writes it (README "Reading a trial"); a delivery's first trial keeps the page its loop showed
    # the person until the loop ends (README "Delivering a skill's first artifact")
    report = None if TrialState.load(path.parent / TRIAL_STATE).delivery else write_report_or_warn(path.parent,
                                                                                                   args.lang)
    if args.json:
        print(json.dumps({"status": "WRITTEN", "path": str(path), "overall": overall.verdict,
                          "reasons": list(overall.reasons), "verdict": verdict.to_doc(),
                          "report": str(report) if report else None}, ensure_ascii=False))
    else:
        print(f"WRITTEN: {path}")
        if report is not None:
            print(f"REPORT: {report}")
        print(f"OVERALL: {overall.verdict}" + (f" — {'; '.join(overall.reasons)}" if overall.reasons else ""))
        if verdict.goal_ledger == "mostly_done":
            print(f"MOSTLY DONE: not confirmed yet: {verdict.unverified}"
                  + (f" (watch {verdict.watch_id} checks it daily)" if verdict.watch_id else ""))
    return ExitCode.OK
