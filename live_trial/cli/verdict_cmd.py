"""``verdict``: judge one trial from its recorded facts and write ``verdict.json`` (seed 001 "verdict + 掃除").

Exit codes: 0 written, 2 refused (nothing written: denylisted target, bad value, ungrounded contractual gate
kind, PASS without evidence or with proxy evidence (seed 000: proxies and their numbers are stripped, a real
counted observation must remain; a score anywhere is refused, also as an evidence item's key: score, rating, grade,
confidence ...), an evidence item whose source is no file under the workdir and no transcript record uuid, a PASS
whose every evidence item cites a file the harness writes (the completion marker out/status.json, trial-state.json,
task.md, ... under any spelling, also absolute, or the transcript record of the Write that wrote it;
:data:`live_trial.judge.sources.HARNESS_FILES`), a target other than the workdir's trial-state.json target, a behaviour
closure that cannot be built). The scenario origin comes from the workdir: a rehearsal workdir is recorded
rehearsal even without ``--rehearsal-scenario`` (see :func:`live_trial.acceptance.verdict.build_verdict`).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from live_trial.errors import RefusedInput, require_utf8

POLL_EXITS = ("DONE", "STALL", "GATE", "HARD_CAP", "TICK_BUDGET", "BLOCKED")


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
    p.add_argument("--requested-model", default="", help="the model asked for ('' = user default)")
    p.add_argument("--launch", choices=("PASS", "FAIL"), required=True)
    p.add_argument("--completion", choices=("PASS", "FAIL"), required=True)
    p.add_argument("--goal-result", choices=("PASS", "FAIL"), help="the fresh evaluator's answer (omit if not judged)")
    p.add_argument("--goal-blocker", action="append", default=[], metavar="TEXT", help="a blocker (repeatable)")
    p.add_argument("--evidence", help="what actually happened, counted (required for --goal-result PASS; seed 000); "
                                      "or a JSON list [{claim, source, observed}] whose sources are files under "
                                      "the workdir or transcript record uuids; a PASS needs one source the harness "
                                      "did not write (not out/status.json, trial-state.json, task.md, ...); a "
                                      "score, rating, grade or confidence key is refused")
    p.add_argument("--unverified", help="what could not be checked yet: PASS as 'mostly done' and a watch")
    p.add_argument("--nudge-count", type=int, default=0)
    p.add_argument("--gate-response-count", type=int, default=0)
    p.add_argument("--gate-kind", choices=("rescue", "contractual"), default="rescue",
                   help="rescue (default) or contractual (must be grounded in the skill's frontmatter)")
    p.add_argument("--poll-exit", choices=POLL_EXITS, required=True,
                   help="the last poll exit (BLOCKED when tmux was missing and poll never ran)")
    p.add_argument("--proof", action="store_true", help="proof trial: no intervention and the requested model")
    p.add_argument("--blocked", action="store_true", help="tmux or claude was missing")
    p.add_argument("--args", default="", help="the args given to the skill (part of scenario_id)")
    p.add_argument("--rehearsal-scenario", type=Path, help="the trial ran against this rehearsal scenario")
    p.add_argument("--stop-reason", help="why the trial stopped (STALL table finding, crash, ...)")
    p.add_argument("--stall-row", type=int, choices=range(1, 7), metavar="1-6",
                   help="the seed's STALL table row that decided (1 crash ... 6 error screen)")
    p.add_argument("--failure-reason", help="boot, delivery or crash reason")
    p.add_argument("--claude-version", help="version of the claude CLI used (default: look it up)")
    p.add_argument("--eval-root", type=Path, help="eval-log root for the watch ledger (default: from --workdir)")
    p.add_argument("--lang", choices=["ja", "en"], help="language of the summary sentence (default LIVE_TRIAL_LANG, "
                                                      "else ja)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_verdict)


def _target(args) -> tuple[object, object]:
    from live_trial.closure.index import Target
    from live_trial.closure.target import target_from_skill_dir

    skill_dir = Path(args.skill_dir).resolve()
    target, index = target_from_skill_dir(skill_dir, args.plugins_root)
    wanted = args.target_skill
    if ":" not in wanted:
        if wanted != target.skill:
            raise RefusedInput(f"--target-skill {wanted} does not match --skill-dir (skill {target.skill})",
                               code="target_mismatch", fix="pass the skill folder of the target")
        return Target(None, None, target.skill, target.skill_dir, target.skill_md, target.frontmatter), None
    if wanted != target.qualified:
        raise RefusedInput(f"--target-skill {wanted} does not match --skill-dir ({target.qualified})",
                           code="target_mismatch", fix="pass the skill folder of the target")
    return target, index


def _eval_root(args, workdir: Path) -> Path:
    if args.eval_root:
        return Path(args.eval_root).resolve()
    if workdir.parent.name == "live-trial" and len(workdir.parents) >= 4:
        return workdir.parents[3]
    raise RefusedInput("cannot tell the eval-log root from --workdir", where=str(workdir), code="bad_workdir",
                       fix="pass --eval-root")


def _source_checks(workdir: Path):
    """``(source -> bool, source -> [harness file])`` for ``workdir``, the evaluator's own checks: the source is a
    file under the workdir or the uuid of a record in ``<workdir>/transcript.jsonl``
    (:func:`live_trial.judge.answer.source_exists`), and the harness files it stands for, under any spelling,
    absolute or through the transcript record of the Write that wrote one
    (:func:`live_trial.judge.answer.harness_files_of`). The transcript is streamed once through
    :func:`live_trial.transcript.reader.iter_records`."""
    from live_trial.acceptance.verdict import TRANSCRIPT_FILE
    from live_trial.judge.answer import Context, harness_files_of, index_records, source_exists
    from live_trial.transcript.reader import iter_records

    index: list[dict] = []
    transcript = workdir / TRANSCRIPT_FILE
    if transcript.is_file():
        index = index_records(iter_records(transcript), workdir)
    ctx = Context(workdir=workdir, target="", description="", transcript_index=index,
                  transcript_uuids={row["uuid"].lower() for row in index})
    return (lambda source: source_exists(source, ctx)), (lambda source: harness_files_of(source, ctx))


def _evidence_kind(args, workdir: Path) -> tuple[str | None, list[dict] | None]:
    """Seed 000 rule 1 through live_trial.judge.evidence: (ledger kind, evidence items when --evidence is a JSON list).

    A JSON list ``[{claim, source, observed}]`` is refused with a score-like key; each source is checked (file under
    the workdir or transcript uuid), a PASS needs one source the harness did not write, and each ``observed`` is put
    through the proxy rule; plain text is checked as one observation."""
    from live_trial.judge.evidence import check_evidence
    from live_trial.judge.sources import check_evidence_items, parse_evidence_items

    items = parse_evidence_items(args.evidence)
    if items is None:
        return check_evidence(args.goal_result or "", args.evidence, args.unverified), None
    exists, harness_files = _source_checks(workdir)
    return check_evidence_items(args.goal_result or "", items, args.unverified, exists, harness_files), items


def cmd_verdict(args) -> int:
    """Handler of ``verdict``: refuse before writing anything; write; print the status line."""
    from live_trial.acceptance.origin import trial_folder
    from live_trial.acceptance.verdict import SCHEMA, build_verdict, write_verdict
    from live_trial.jsonfile import validate
    from live_trial.notices.outcome import summariser
    from live_trial.session.rules import check_target_allowed

    check_target_allowed(args.target_skill)
    for name in ("args", "evidence", "unverified"):
        if getattr(args, name):
            require_utf8(getattr(args, name), f"--{name}", fix="pass UTF-8 text")
    workdir = trial_folder(args.workdir)
    kind, items = _evidence_kind(args, workdir)
    eval_root = _eval_root(args, workdir) if kind == "mostly_done" else None
    target, plugins_root = _target(args)
    claude_version = args.claude_version
    if claude_version is None:
        try:
            from live_trial.session.claude_bin import find_claude

            claude_version = find_claude().version
        except Exception:  # noqa: BLE001 - the version is recorded when known
            claude_version = None
    evidence = items if items is not None else (
        [{"claim": "goal reached", "source": "--evidence", "observed": args.evidence}] if args.evidence else [])
    doc = build_verdict(
        workdir=workdir, target=target, plugins_root=plugins_root, session_id=args.session_id,
        requested_model=args.requested_model, launch=args.launch, completion=args.completion,
        goal_result=args.goal_result, goal_blockers=args.goal_blocker, evidence=evidence,
        evidence_text=args.evidence, unverified=args.unverified, goal_ledger=kind,
        nudge_count=args.nudge_count, gate_response_count=args.gate_response_count, gate_kind=args.gate_kind,
        poll_exit=args.poll_exit, proof=args.proof, blocked=args.blocked,
        scenario_origin="rehearsal" if args.rehearsal_scenario else "live", scenario_path=args.rehearsal_scenario,
        args=args.args, claude_version=claude_version, stop_reason=args.stop_reason, stall_row=args.stall_row,
        failure_reason=args.failure_reason, summarise=summariser(args.lang))
    validate(doc, SCHEMA, what="verdict.json")  # before the watch is registered: a bad doc changes nothing
    if kind == "mostly_done" and doc["scenario_origin"] == "rehearsal":
        # A scripted model confirms nothing real: a watch would keep the skill out of plan's live trials
        # ("watching") on the strength of a rehearsal.
        doc["notes"].append("no watch registered: the model was scripted (rehearsal), so there is nothing real to "
                            "keep checking; run a live trial")
    elif kind == "mostly_done":
        from live_trial.notices.watch import register_watch

        watch = register_watch(eval_root, objective=str(target.frontmatter.get("description") or doc["target"]),
                               unverified=args.unverified, evidence=args.evidence or "", target=doc["target"],
                               workdir=str(workdir), closure=doc["skill_dir_tree_sha"])
        doc["watch_id"] = watch["id"]
    path = write_verdict(workdir, doc)
    overall = doc["overall"]
    if args.json:
        print(json.dumps({"status": "WRITTEN", "path": str(path), "overall": overall["verdict"],
                          "reasons": overall["reasons"], "verdict": doc}, ensure_ascii=False))
    else:
        print(f"WRITTEN: {path}")
        print(f"OVERALL: {overall['verdict']}" + (f" — {'; '.join(overall['reasons'])}" if overall["reasons"] else ""))
        if doc.get("goal_ledger") == "mostly_done":
            print(f"MOSTLY DONE: not confirmed yet: {doc['unverified']}"
                  + (f" (watch {doc['watch_id']} checks it daily)" if doc.get("watch_id") else ""))
    return 0
