"""``run --plan``: the plan's live_batches, at most --max-concurrency trials at once, one table at the end.

Each trial has its own session, workdir, working folder (a new empty one, or its own copy of ``--cwd DIR``) and, in
rehearsal, its own scripted server, so trials never share a tmux buffer, a session or a file. Ctrl-C / SIGTERM stops
every running trial; each collects and kills its own session.
"""
from __future__ import annotations

import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from live_trial.acceptance.shard import parse_shard, shard_entries
from live_trial.acceptance.verdict import recorded_cost
from live_trial.errors import Blocked, ExitCode, LiveTrialError, RefusedInput
from live_trial.jsonfile import read_json
from live_trial.report.github import annotations, append_step_summary
from live_trial.report.junit import SKIP_ACTIONS, skip_row, trial_row, write_junit
from live_trial.stop_reasons import StopReason
from live_trial.trial.facts import StopRequest


def plan_items(plan: dict) -> list[list[dict]]:
    """The batches of trials to run: a list of batches, each a list of plan entries with a ``target``."""
    batches = plan.get("live_batches") or []
    out = []
    for batch in batches:
        items = []
        for entry in batch:
            if isinstance(entry, str):
                entry = {"target": entry}
            if not isinstance(entry, dict) or not entry.get("target"):
                raise RefusedInput("plan entry has no target", where=str(entry)[:80],
                                   fix="make the plan with `live-trial plan --json`")
            items.append(entry)
        out.append(items)
    return out


def _check_rehearsal_reuse(plan: dict, rehearsal: Path | None) -> None:
    """Refuse (exit 2, nothing run) a plan made with ``plan --rehearsal-reuse`` unless ``run --plan`` rehearses with
    the same scenario: its reuse rows rest on rehearsal PASSes, never on a live run (README "Planning many
    skills")."""
    if not plan.get("reuse_rehearsal"):
        return
    scenario = plan.get("rehearsal_scenario") or "its scenario"
    if rehearsal is None or Path(rehearsal).resolve() != Path(scenario).resolve():
        raise RefusedInput(f"the plan counted rehearsal PASSes of {scenario} as reusable (plan --rehearsal-reuse): it "
                           "says nothing about a live run", where="run --plan", code="rehearsal_reuse_plan",
                           fix=f"run it with --rehearsal {scenario}, or make a plan without --rehearsal-reuse")


def check_suite(plan: dict, suite: Path | None) -> None:
    """``run --plan --suite FILE``: refuse (exit 2, nothing run) a bad suite file, or a plan not made from that file
    as it is now (its cases may have changed since: plan again). README "Planning many skills"."""
    if suite is None:
        return
    from live_trial.acceptance.suite import load_suite, suite_sha

    path = load_suite(Path(suite)).path            # a bad file: RefusedInput naming its file, line and key
    recorded = {s.get("path"): s.get("sha256") for s in plan.get("suites") or []}
    if recorded.get(str(path)) != suite_sha(path):
        why = "was not made from it" if str(path) not in recorded else "was made from an earlier version of it"
        raise RefusedInput(f"the plan {why}", where=f"run --plan --suite {path}", code="suite_changed",
                           fix=f"make the plan again: live-trial plan --suite {path} ... --json")


def run_plan(args, policy) -> int:
    """Run every batch of the plan in ``args.plan`` (an entry with ``repeats`` as a case run); return the worst exit
    code (:func:`print_plan_summary`)."""
    from live_trial.acceptance.case_plan import entry_case, entry_trials
    from live_trial.acceptance.plan import record_deferrals
    from live_trial.cli.case_cmd import activation_run, case_run, entry_request
    from live_trial.cli.folder_args import folder_options
    from live_trial.cli.progress import Progress
    from live_trial.cli.report_cmd import write_report_after_run
    from live_trial.trial.runner import Trial

    per_skill = [flag for flag, given in (("--gate-response", args.gate_response),
                                          ("--gate-response-contractual", args.gate_response_contractual),
                                          ("--gate-kind contractual", args.gate_kind == "contractual"),
                                          ("--expect-gate", args.expect_gate),
                                          ("--mcp-fixture", getattr(args, "mcp_fixture", None))) if given]
    if per_skill:
        raise RefusedInput(f"{', '.join(per_skill)} describe one skill's trial and cannot apply to a whole plan",
                           where="run --plan", code="per_skill_option_with_plan",
                           fix="write them per case in the suite file (answers, expect: gate, mcp_fixtures; "
                               "references/suite-format.md), or run that skill on its own: live-trial run "
                               "<plugin:skill> ...")
    shard = parse_shard(args.shard) if getattr(args, "shard", None) is not None else None
    junit = _junit_target(getattr(args, "junit", None))
    plan = read_json(args.plan, "plan.schema.json")
    _check_rehearsal_reuse(plan, args.rehearsal)
    check_suite(plan, getattr(args, "suite", None))
    batches = plan_items(plan)
    width = args.max_concurrency if args.max_concurrency is not None else int(plan.get("max_concurrency") or 2)
    if width < 1:
        raise RefusedInput(f"--max-concurrency must be a whole number >= 1 (got {width})", code="bad_value",
                           fix="e.g. --max-concurrency 2")
    if shard is not None:
        mine = shard_entries(plan, [e for batch in batches for e in batch], *shard)
        batches = [mine[i:i + width] for i in range(0, len(mine), width)]
    if args.in_place is not None and width > 1:
        raise RefusedInput("--in-place runs every trial of the plan in one folder, and trials of a plan run side by "
                           "side", where="run --plan --in-place", code="in_place_with_concurrency",
                           fix="pass --max-concurrency 1, or use --cwd DIR (a private copy per trial)")
    folder = folder_options(args)
    eval_root = args.eval_root or Path(plan.get("eval_root") or "eval-log")
    record_deferrals(eval_root, plan)      # what this plan defers goes first next time (README "A fair plan")
    stop = StopRequest()

    def handler(signum, frame):
        stop.request(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    results: list[tuple[tuple[str, object], dict]] = []
    spent = 0.0             # the API list price estimate of the plan's trials so far (README "Budgets")
    try:
        for batch in batches:
            share = budget_share(policy, spent, sum(entry_trials(e) for e in batch))
            if share is not None and share <= 0:
                results += [((entry_label(e), not_started(policy, spent)), e) for e in batch]
                continue
            trial_policy = policy.with_overrides(max_cost_usd=share)

            def one(entry):
                req = entry_request(entry, args, folder, eval_root, trial_policy)
                progress = Progress.side_by_side(json_mode=args.json, prefix=f"[{entry_label(entry)}] ")
                try:
                    if entry.get("kind") == "activation":       # its prompts, each in sessions of its own
                        return activation_run(req, entry_case(entry), width=width, json_mode=args.json, stop=stop,
                                              prefix=f"{entry_label(entry)} ")
                    if int(entry.get("repeats") or 1) > 1:       # a case run: k samples, one case verdict
                        return case_run(req, int(entry["repeats"]), json_mode=args.json, stop=stop,
                                        case=entry.get("case") or "default", prefix=f"{entry_label(entry)} #")
                    outcome = Trial(req, on_event=progress.event, stop_event=stop).run()
                except LiveTrialError as exc:      # refused or failed before its workdir: one row, not the batch
                    return exc
                outcome.report = write_report_after_run(outcome)
                return outcome
            with ThreadPoolExecutor(max_workers=width) as pool:
                for entry, outcome in zip(batch, pool.map(one, batch)):
                    results.append(((entry_label(entry), outcome), entry))
                    spent += recorded_cost(getattr(outcome, "verdict", None)) or 0.0
            if stop.is_set():
                break
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    # the skills with no trial are reported once: by the whole run, or by shard 1 of a sharded one
    first = shard is None or shard[0] == 1
    untried = [s for s in plan.get("skills") or [] if s.get("action") in SKIP_ACTIONS] if first else []
    reused = [s for s in untried if s.get("action") in ("reuse", "needs_answer")]
    rows = [trial_row(target, outcome, _skill_md(entry, args)) for (target, outcome), entry in results]
    rows += [skip_row(s, Path(plan.get("eval_root") or eval_root)) for s in untried]
    if junit is not None:
        try:
            write_junit(junit, rows, "live-trial" if shard is None else f"live-trial shard {shard[0]}/{shard[1]}")
        except OSError as exc:      # the trials' verdicts stand; the exit code stays theirs
            print(f"WARN: the JUnit file was not written: {exc} ({junit})", file=sys.stderr)
    title = "live trials" if shard is None else f"live trials, shard {shard[0]}/{shard[1]}"
    try:
        append_step_summary(rows, title=title)
    except OSError as exc:
        print(f"WARN: the job summary was not written: {exc}", file=sys.stderr)
    if getattr(args, "github_annotations", False):
        # mypy takes report.github's annotations() for the __future__ feature its module imports under that name
        for line in annotations(rows):  # type: ignore[operator]
            print(line, flush=True)
    return print_plan_summary([(t, o) for (t, o), _ in results], json_mode=args.json, reused=reused)


def entry_label(entry: dict) -> str:
    """The row name of a plan entry: ``plugin:skill``, with `` [case]`` for a named suite case."""
    from live_trial.acceptance.case_plan import label

    return label(entry["target"], entry.get("case") or "default")


def budget_share(policy, spent: float, trials: int) -> float | None:
    """The budget of each of the next ``trials`` trials: the plan's budget left after ``spent``, split evenly (trials
    run side by side, so together they never pass it), and never above a trial's own budget; None without any."""
    own = policy.max_cost_usd
    if policy.plan_max_cost_usd is None:
        return own
    share = (policy.plan_max_cost_usd - spent) / max(1, trials)
    return share if own is None else min(own, share)


def not_started(policy, spent: float) -> Blocked:
    """The row of a trial the plan did not start because its budget was spent."""
    return Blocked(f"not started: the plan's budget of ${policy.plan_max_cost_usd:g} was spent (${spent:.4f}, API list "
                   "price estimate)", where="run --plan", code=StopReason.BUDGET,
                   fix="raise --max-cost-usd, or run the remaining skills in another plan")


def _junit_target(path: Path | None) -> Path | None:
    """``--junit FILE``: checked before any trial starts (its folder exists, it is not a folder) so a typo never
    costs a whole plan's trials."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        raise RefusedInput("--junit names a folder", where=str(path), code="bad_junit_path",
                           fix="give a file name, e.g. --junit live-trial.xml")
    if not path.parent.resolve().is_dir():
        raise RefusedInput("--junit: the folder for the file does not exist", where=str(path.parent),
                           code="bad_junit_path", fix="create it first, or write the file elsewhere")
    return path


def _skill_md(entry: dict, args) -> Path | None:
    """The SKILL.md of a plan entry's target (for annotations), or None when its plugin cannot be found."""
    from live_trial.closure.index import PluginIndex

    plugin, _, skill = str(entry.get("target") or "").partition(":")
    try:
        root = PluginIndex(Path(entry.get("plugins_root") or args.plugins_root or "plugins")).plugins.get(plugin)
    except (OSError, LiveTrialError):
        return None
    path = root / "skills" / skill / "SKILL.md" if root else None
    return path if path and path.is_file() else None


def print_plan_summary(results, *, json_mode: bool, reused: Sequence[dict] = ()) -> int:
    """Print the plan's one table at the end and return the worst exit code (FAIL > FLAKY > REFUSED > BLOCKED >
    DEGRADED > PASS). ``results``: ``(target, outcome)`` pairs, an outcome being a
    :class:`~live_trial.trial.facts.TrialOutcome`, a case run's :class:`~live_trial.trial.repeats.CaseOutcome`, or
    the :class:`~live_trial.errors.LiveTrialError` that stopped the trial before its workdir; ``reused``: the plan's
    skills not run again (a row ``REUSED`` each). ``json_mode``: one line ``{"trials": [rows], "exit_code"}``
    on stdout, and rich is never imported; else a rich table."""
    import json

    from live_trial.cli.progress import outcome_json
    from live_trial.report.cost import suite_cost, suite_line

    rank: dict[int, int] = {ExitCode.OK: 0, ExitCode.DEGRADED: 1, ExitCode.BLOCKED: 2, ExitCode.REFUSED: 3,
                            ExitCode.FLAKY: 4, ExitCode.FAIL: 5}       # worst last
    worst: int = ExitCode.OK
    rows = []
    for target, outcome in results:
        if isinstance(outcome, LiveTrialError):
            code = int(outcome.exit_code)
            rows.append({"target": target, "status": outcome.status, "exit_code": code, "summary": outcome.message})
        else:
            rows.append({"target": target, **outcome_json(outcome)})
            code = outcome.exit_code
        if rank.get(code, 5) > rank.get(worst, 0):
            worst = code
    for skill in reused:        # no new trial: say so, with the PASS that stands (a reused skill is never silent)
        if skill.get("action") == "needs_answer":       # no trial: its question has no answer in the suite
            rows.append({"target": entry_label(skill), "status": "NEEDS_ANSWER", "exit_code": ExitCode.OK,
                         "workdir": None, "summary": skill.get("reason") or "needs an answer to its question"})
            continue
        rows.append({"target": entry_label(skill), "status": "REUSED", "exit_code": ExitCode.OK,
                     "workdir": str(Path(skill["verdict"]).parent) if skill.get("verdict") else None,
                     "summary": "not run again: " + (skill.get("reason") or "an earlier PASS still holds")})
    # what the trials cost: a case run's attempts each (its case verdict only adds them up)
    # and an activation run's sessions, counted as the sessions they are
    total = suite_cost([getattr(t, "verdict", None) for _, o in results if not hasattr(o, "samples")
                        for t in (getattr(o, "attempts", None) or [o])],
                       [o.verdict for _, o in results if hasattr(o, "samples")])
    if json_mode:
        print(json.dumps({"trials": rows, "exit_code": worst, "cost": total}, ensure_ascii=False))
        return worst
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="live trials")
    for col in ("skill", "verdict", "workdir", "what happened"):
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(escape(str(v)) for v in (row["target"], row["status"], row.get("workdir") or "-",
                                                 row.get("summary") or "")))     # text, never rich markup
    Console(file=sys.stdout).print(table)
    for row in rows:            # a case run: every attempt's workdir, a failed one too (never replaced)
        for a in row.get("attempts") or []:
            print(f"{row['target']} attempt {a['n']}: {a['verdict']}{'' if a['sample'] else ' (not a sample)'} "
                  f"{a['workdir'] or '(no workdir)'}")
    if total["trials"]:
        print(suite_line(total))
    return worst
