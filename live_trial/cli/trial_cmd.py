"""``run``: one whole trial (or every trial of a plan), with live progress and a plain summary."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from live_trial.errors import RefusedInput


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand (one trial, ``--plan`` for a plan's batches, ``--resume`` for a workdir)."""
    p = sub.add_parser(
        "run", help="run a skill in a real claude session in tmux and judge it",
        description="Run TARGET (plugin:skill, or PLUGIN_DIR:skill) in a fresh claude session in tmux, watch it to the "
                    "end, judge the goal with a separate evaluator and write verdict.json. Exit codes: 0 PASS, 1 FAIL, "
                    "6 DEGRADED, 3 BLOCKED, 2 refused input (nothing created).")
    p.add_argument("target", nargs="?", help="plugin:skill (plugin by its plugin.json name) or PLUGIN_DIR:skill")
    p.add_argument("--args", default="", help="arguments passed to the skill")
    p.add_argument("--model", help="model id for the trial session (proof trials need a full id)")
    p.add_argument("--proof", action="store_true", help="proof trial: any intervention or model mismatch fails")
    p.add_argument("--rehearsal", type=Path, metavar="SCENARIO",
                   help="play a scripted model from this YAML scenario instead of the real API")
    p.add_argument("--gate-response", action="append", default=[], metavar="TEXT",
                   help="answer for the next question gate: an option label, or text:<free text>; repeatable")
    p.add_argument("--gate-kind", choices=["rescue", "contractual"], default="rescue",
                   help="contractual only when the skill's frontmatter declares the gate (default rescue)")
    p.add_argument("--expect-gate", action="store_true", help="the skill must stop at a question gate")
    p.add_argument("--plugins-root", type=Path, default=None, help="folder holding the plugins (default ./plugins)")
    p.add_argument("--cwd", type=Path, default=None,
                   help="the trial's working folder (default: here; with --plan, a new empty folder per trial)")
    p.add_argument("--eval-root", type=Path, default=None,
                   help="where workdirs go (default ./eval-log; with --plan: the plan's eval_root)")
    p.add_argument("--claude-bin", help="the claude executable (default: LIVE_TRIAL_CLAUDE_BIN, PATH, ./claude-pin)")
    p.add_argument("--socket", help="tmux socket name (default: LIVE_TRIAL_SOCKET or live-trial)")
    p.add_argument("--lang", choices=["ja", "en"], help="language of the notification (default LIVE_TRIAL_LANG)")
    p.add_argument("--stall-limit", type=float, metavar="S", help="seconds without progress before STALL")
    p.add_argument("--hard-cap", type=float, metavar="S", help="seconds before the trial is stopped (BLOCKED)")
    p.add_argument("--resume", type=Path, metavar="WORKDIR", help="continue a trial whose harness was killed")
    p.add_argument("--plan", type=Path, metavar="PLAN_JSON", help="run the live_batches of a plan (from `plan --json`)")
    p.add_argument("--max-concurrency", type=int, default=None, help="with --plan: trials at once (default: the plan's)")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end instead of text")
    p.set_defaults(func=cmd_run)


def _policy(args):
    from live_trial.policy import load_policy

    policy = load_policy()
    for name in ("stall_limit", "hard_cap"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise RefusedInput(f"--{name.replace('_', '-')} must be greater than 0", fix="give seconds, e.g. 300")
    return policy.with_overrides(stall_limit_s=args.stall_limit, hard_cap_s=args.hard_cap)


def _split_target(target: str, plugins_root: Path | None) -> tuple[str, Path]:
    """Accept plugin:skill or PLUGIN_DIR:skill; return (plugin:skill, plugins_root)."""
    if ":" in target:
        left, skill = target.rsplit(":", 1)
        manifest = Path(left) / ".claude-plugin" / "plugin.json"
        if ("/" in left or left.startswith(".")) and manifest.is_file():
            try:
                name = json.loads(manifest.read_text(encoding="utf-8"))["name"]
            except (ValueError, KeyError, TypeError, RecursionError, OSError):
                raise RefusedInput("plugin manifest has no name", where=str(manifest),
                                   fix='add "name" to .claude-plugin/plugin.json') from None
            return f"{name}:{skill}", plugins_root or Path(left).resolve().parent
    return target, plugins_root or Path("plugins")


def _install_signal_handlers(stop: threading.Event):
    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    return lambda: [signal.signal(s, h) for s, h in previous.items()]


def cmd_run(args) -> int:
    """``run``: drive a whole trial and print its summary; exit 0 PASS, 1 FAIL, 6 DEGRADED, 3 BLOCKED,
    2 refused input (nothing created)."""
    from live_trial.cli.progress import Progress
    from live_trial.trial.facts import TrialRequest
    from live_trial.trial.runner import Trial

    if sum(bool(x) for x in (args.target, args.resume, args.plan)) != 1:
        print("live-trial run: error: give exactly one of TARGET, --resume WORKDIR or --plan PLAN_JSON "
              "(see live-trial run --help)", file=sys.stderr)
        return 64
    policy = _policy(args)
    if args.plan:
        from live_trial.cli.plan_run import run_plan

        return run_plan(args, policy)
    stop = threading.Event()
    restore = _install_signal_handlers(stop)
    progress = Progress(json_mode=args.json)
    try:
        if args.resume:
            req = TrialRequest(target="", socket=args.socket, claude_bin=args.claude_bin, lang=args.lang, policy=policy)
            outcome = Trial(req, on_event=progress.event, stop_event=stop).resume(args.resume)
        else:
            target, plugins_root = _split_target(args.target, args.plugins_root)
            req = TrialRequest(target=target, plugins_root=plugins_root, cwd=args.cwd or Path("."),
                               eval_root=args.eval_root or Path("eval-log"),
                               args=args.args, model=args.model, proof=args.proof, rehearsal=args.rehearsal,
                               gate_responses=args.gate_response, gate_kind=args.gate_kind,
                               expect_gate=args.expect_gate, claude_bin=args.claude_bin, socket=args.socket,
                               lang=args.lang, policy=policy)
            outcome = Trial(req, on_event=progress.event, stop_event=stop).run()
    finally:
        progress.close()
        restore()
    progress.final(outcome)
    return outcome.exit_code
