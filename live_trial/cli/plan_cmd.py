"""``plan``: decide, before any session starts, which skills reuse evidence, which run, which wait (seed 001 事前計画).

Exit codes: 0 planned, 2 refused input. The planner runs no model and no tmux. With ``--json`` it prints the plan
document (schemas/plan.schema.json), which ``run --plan`` takes; otherwise a table. The command (not the pure
planner) closes, quietly, the watches the plan found superseded: their skill changed since they were opened.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from live_trial.errors import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plan`` subcommand."""
    p = sub.add_parser(
        "plan", help="plan live trials: reuse, run (in batches), defer, watching",
        description="For every skill of the plugin(s): its acceptance tier; reuse when a schema-valid live PASS "
                    "verdict matches the behaviour closure, scenario and transcript; otherwise run, up to "
                    "--max-live-trials (proof trials always), in batches of --max-concurrency, cases that waited "
                    "first; the rest is deferred and, once the plan runs, waits in the eval root's queue.json. "
                    "No model, no tmux. Exit 0 planned, 2 refused.")
    p.add_argument("--plugin-dir", type=Path, action="append", required=True,
                   help="a plugin folder, or a folder of plugins (repeatable)")
    p.add_argument("--plugins-root", type=Path, help="where dependency plugins are (default: each plugin's parent)")
    p.add_argument("--eval-root", type=Path, default=Path("eval-log"), help="where verdicts are (default eval-log)")
    p.add_argument("--profile", choices=("incremental", "exhaustive"), default="incremental",
                   help="exhaustive re-runs every live skill, watched ones too (only when you ask for it)")
    p.add_argument("--max-live-trials", type=int, default=2,
                   help="new live trials at most (default 2; a case of repeats: k takes k; proof trials are never cut)")
    p.add_argument("--max-concurrency", type=int, default=2, help="trials at once per batch (default 2)")
    p.add_argument("--proof", action="store_true", help="proof trials: always run, never reused")
    p.add_argument("--rehearsal-reuse", type=Path, metavar="SCENARIO",
                   help="try the reuse rules offline: a rehearsal PASS played from SCENARIO counts as reusable (never "
                        "evidence of a live run: the plan says so, and run --plan refuses it without --rehearsal "
                        "SCENARIO)")
    p.add_argument("--suite", type=Path, metavar="FILE",
                   help="the suite of trials (default: live-trials.yaml at each plugin's root; references/"
                        "suite-format.md): one row per case, each with its own args, answers and scenario")
    p.add_argument("--out", type=Path, help="also write the plan JSON to this file")
    p.add_argument("--json", action="store_true", help="print the plan JSON")
    p.set_defaults(func=cmd_plan)


def cmd_plan(args) -> int:
    """Handler of ``plan``."""
    from live_trial.acceptance.plan import SCHEMA, plan
    from live_trial.acceptance.plan_inputs import plan_suites, superseded_watches
    from live_trial.acceptance.queue import load_queue
    from live_trial.jsonfile import validate, write_json
    from live_trial.notices.watch import load_ledger, open_watches, supersede

    eval_root = Path(args.eval_root).resolve()
    suites = plan_suites(args.plugin_dir, args.suite)      # a bad suite is refused before anything is written
    queue = load_queue(eval_root)                          # so is a queue.json that does not fit its schema
    swept = _sweep(eval_root)
    doc = plan(args.plugin_dir, eval_root, args.profile, args.max_live_trials, args.max_concurrency,
               plugins_root=args.plugins_root, proof=args.proof, reuse_rehearsal=args.rehearsal_reuse is not None,
               scenario_path=args.rehearsal_reuse, watches=open_watches(eval_root),
               ledger=load_ledger(eval_root)["watches"], suites=suites, queue=queue)
    validate(doc, SCHEMA, what="plan")
    supersede(eval_root, superseded_watches(doc))     # no notice: what was watched no longer describes the skill
    # the deferred cases wait in the eval root's queue once the plan runs (run --plan): a look changes nothing there
    if args.out:
        write_json(args.out, doc, SCHEMA)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
        return ExitCode.OK
    _table(doc, swept)
    return ExitCode.OK


def _sweep(eval_root: Path) -> list[str]:
    """Send failed notices again, then close watches past their 7 days (seed 000 rule 4; no model). Due checks
    start a model: `run`/cron do them."""
    try:
        from live_trial.notices import watch
    except ModuleNotFoundError:  # pragma: no cover
        return []
    from live_trial.notices.resend import resend_failed

    try:
        resend_failed(eval_root)       # notices whose webhook failed: the same text again, at most hourly
    except Exception:  # noqa: BLE001 - a notice that cannot be resent now is tried again later; plan goes on
        pass
    return [w["id"] for w in watch.sweep(eval_root)]


def _table(doc: dict, swept: list[str]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from live_trial.acceptance.case_plan import label
    from live_trial.acceptance.suite import DEFAULT_CASE

    c = doc["counts"]
    print(f"PLANNED: {c['run']} to run, {c['reuse']} reused, {c['defer']} deferred, {c['watching']} watching, "
          f"{c['not_live']} not live, {c['refused']} refused, {c.get('needs_answer', 0)} need an answer "
          f"(profile {doc['profile']})", flush=True)
    if doc.get("reuse_rehearsal"):
        print(f"REHEARSAL REUSE: rehearsal PASSes of {doc.get('rehearsal_scenario')} count as reusable here: this plan "
              "says nothing about a live run (run --plan needs --rehearsal with the same scenario)", flush=True)
    console = Console(file=sys.stdout)
    table = Table(show_lines=False)
    for col in ("skill", "tier", "action", "reason"):
        table.add_column(col, overflow="fold")
    for s in doc["skills"]:
        # escaped: a case's label "plugin:skill [case]" and a reason are text, never rich markup
        table.add_row(*(escape(v) for v in (label(s["target"], s.get("case", DEFAULT_CASE)), s["tier"] or "-",
                                            s["action"], s["reason"])))
    console.print(table)
    for n, batch in enumerate(doc["live_batches"], 1):
        console.print(f"batch {n}: " + ", ".join(label(e["target"], e.get("case", DEFAULT_CASE)) for e in batch),
                      markup=False)
    if doc["live_batches"]:
        unknown = doc.get("cost_unknown") or []
        console.print(f"estimated cost: ${doc.get('estimated_cost_usd', 0):.4f} (API list price estimate, from each "
                      "skill's last recorded trial)" + (f"; no cost recorded yet for {', '.join(unknown)}"
                                                         if unknown else ""), soft_wrap=True)
    if swept:
        console.print(f"closed {len(swept)} watch(es) past 7 days")
