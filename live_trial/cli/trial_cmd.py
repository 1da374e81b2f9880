"""``run``: one whole trial (or every trial of a plan), with live progress and a plain summary."""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from live_trial.cli.folder_args import add_folder_arguments, folder_options
from live_trial.cli.targets import split_target
from live_trial.errors import ExitCode, RefusedInput
from live_trial.notices.catalogue import LANGS
from live_trial.trial.facts import StopRequest


def add_mcp_fixture_argument(p: argparse.ArgumentParser) -> None:
    """``--mcp-fixture NAME=COMMAND`` (repeatable) of ``run`` and ``prepare`` (README "Stand-in MCP servers")."""
    p.add_argument("--mcp-fixture", action="append", default=[], metavar="NAME=COMMAND",
                   help="start COMMAND as a stand-in MCP server in place of the server NAME (one of the plugin's, or "
                        "a service of yours); repeatable; ./ and ../ words are taken from here")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand (one trial, ``--plan`` for a plan's batches, ``--resume`` for a workdir)."""
    p = sub.add_parser(
        "run", help="run a skill in a real claude session in tmux and judge it",
        description="Run TARGET (plugin:skill, or PLUGIN_DIR:skill) in a fresh claude session in tmux, watch it to the "
                    "end, judge the goal with a separate evaluator and write verdict.json. Exit codes: 0 PASS, 1 FAIL, "
                    "6 DEGRADED, 7 FLAKY (--repeat, a plan's repeated case), 3 BLOCKED, 2 refused input (nothing "
                    "created).")
    p.add_argument("target", nargs="?", help="plugin:skill (plugin by its plugin.json name) or PLUGIN_DIR:skill")
    p.add_argument("--args", default=None, help="arguments passed to the skill")
    p.add_argument("--model", help="model id for the trial session (proof trials need a full id)")
    p.add_argument("--proof", action="store_true", help="proof trial: any intervention or model mismatch fails")
    p.add_argument("--rehearsal", type=Path, metavar="SCENARIO",
                   help="play a scripted model from this YAML scenario instead of the real API")
    p.add_argument("--record", action="store_true",
                   help="a live trial whose model traffic (session and evaluator) is recorded through a local proxy "
                        "to <workdir>/model-tape.jsonl (README \"Replaying a real trial offline\")")
    p.add_argument("--replay", type=Path, metavar="TAPE",
                   help="a rehearsal whose model answers from this tape (a model-tape.jsonl of run --record); a "
                        "request the tape does not cover stops it BLOCKED (replay_diverged)")
    p.add_argument("--gate-response", action=GateAnswer, const="rescue", default=[], metavar="TEXT",
                   help="a rescue answer for the next question gate (degrades the verdict): an option label, or "
                        "text:<free text>; repeatable, used in order with --gate-response-contractual")
    p.add_argument("--gate-response-contractual", action=GateAnswer, const="contractual", default=[],
                   metavar="TEXT", help="a contractual answer for the next question gate (the skill's frontmatter must "
                                        "declare the gate, else refused before start); repeatable, in order")
    p.add_argument("--gate-kind", choices=["rescue", "contractual"], default=None,
                   help="contractual: every answer is contractual (same grounding); default rescue")
    p.add_argument("--expect-gate", action="store_true", help="the skill must stop at a question gate")
    add_mcp_fixture_argument(p)
    p.add_argument("--plugins-root", type=Path, default=None, help="folder holding the plugins (default ./plugins)")
    add_folder_arguments(p)
    p.add_argument("--eval-root", type=Path, default=None,
                   help="where workdirs go (default ./eval-log; with --plan: the plan's eval_root)")
    p.add_argument("--claude-bin", help="the claude executable (default: LIVE_TRIAL_CLAUDE_BIN, PATH, ./claude-pin)")
    p.add_argument("--socket", help="tmux socket name (default: LIVE_TRIAL_SOCKET or live-trial)")
    p.add_argument("--lang", choices=LANGS, help="language of the notification (default LIVE_TRIAL_LANG)")
    p.add_argument("--stall-limit", type=float, metavar="S", help="seconds without progress before STALL")
    p.add_argument("--hard-cap", type=float, metavar="S", help="seconds before the trial is stopped (BLOCKED)")
    p.add_argument("--max-cost-usd", type=float, metavar="USD",
                   help="stop the trial BLOCKED (budget) once the API list price estimate of what its session used "
                        "reaches USD; with --plan: the budget of the whole plan (README \"Budgets\")")
    p.add_argument("--repeat", type=int, metavar="K", default=None,
                   help="run K independent trials of TARGET and judge them together: PASS only when all K passed, "
                        "FLAKY (exit 7) when some did not; a BLOCKED one is tried again (references/suite-format.md "
                        "\"Repeats\")")
    p.add_argument("--resume", type=Path, metavar="WORKDIR",
                   help="continue a trial whose harness was killed, with the options it started with (no others)")
    p.add_argument("--plan", type=Path, metavar="PLAN_JSON", help="run the live_batches of a plan (from `plan --json`)")
    p.add_argument("--max-concurrency", type=int, default=None,
                   help="with --plan: trials at once (default: the plan's); with --case of an activation case: its "
                        "prompts' sessions at once (default 2)")
    p.add_argument("--shard", metavar="K/N", default=None,
                   help="with --plan: run only shard K of N (each trial of the plan is in exactly one shard)")
    p.add_argument("--case", metavar="NAME", default=None,
                   help="with TARGET: run this case of the suite (the plugin's live-trials.yaml, or --suite FILE) with "
                        "its own args, answers, scenario, bounds and repeats (references/suite-format.md)")
    p.add_argument("--live", action="store_true",
                   help="with --case: run the case against the real model (its scenario is not used)")
    p.add_argument("--suite", type=Path, metavar="FILE", default=None,
                   help="with --plan: the suite file the plan was made from (plan --suite FILE); checked before "
                        "anything runs: a bad file, or one changed since the plan, is refused. With --case: the "
                        "suite the case is read from")
    p.add_argument("--junit", type=Path, metavar="FILE", default=None,
                   help="with --plan: write a JUnit XML file, one testcase per skill of the plan")
    p.add_argument("--github-annotations", action="store_true",
                   help="with --plan: print a GitHub ::error annotation per failing skill")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end instead of text")
    p.set_defaults(func=cmd_run)


class GateAnswer(argparse.Action):
    """``--gate-response`` / ``--gate-response-contractual``: appends the answer to its own list and, with its kind
    (``const``), to ``gate_answers``, so answers given with either option are used in the order given."""

    def __init__(self, option_strings, dest, const=None, **kw):
        super().__init__(option_strings, dest, nargs=None, const=const, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        """Append ``values`` to ``namespace.<dest>`` and ``(values, const)`` to ``namespace.gate_answers``."""
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), values])
        namespace.gate_answers = [*(getattr(namespace, "gate_answers", None) or []), (values, self.const)]


def _policy(args):
    from live_trial.policy import load_policy

    policy = load_policy()
    for name in ("stall_limit", "hard_cap"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise RefusedInput(f"--{name.replace('_', '-')} must be greater than 0", fix="give seconds, e.g. 300")
    budget = getattr(args, "max_cost_usd", None)
    if budget is not None and not budget > 0:
        raise RefusedInput("--max-cost-usd must be greater than 0", fix="give US dollars, e.g. 2.5")
    if getattr(args, "plan", None):     # with --plan the budget is the whole plan's (README "Budgets")
        return policy.with_overrides(stall_limit_s=args.stall_limit, hard_cap_s=args.hard_cap,
                                     plan_max_cost_usd=budget)
    return policy.with_overrides(stall_limit_s=args.stall_limit, hard_cap_s=args.hard_cap, max_cost_usd=budget)


#: Options that describe a trial: ``run --resume`` takes none of them, it reuses those recorded at the start.
TRIAL_OPTIONS = (("args", "--args"), ("model", "--model"), ("proof", "--proof"), ("rehearsal", "--rehearsal"),
                 ("record", "--record"), ("replay", "--replay"),
                 ("gate_response", "--gate-response"), ("gate_response_contractual", "--gate-response-contractual"),
                 ("gate_kind", "--gate-kind"), ("expect_gate", "--expect-gate"),
                 ("plugins_root", "--plugins-root"), ("cwd", "--cwd"), ("eval_root", "--eval-root"),
                 ("claude_bin", "--claude-bin"), ("socket", "--socket"), ("lang", "--lang"),
                 ("stall_limit", "--stall-limit"), ("hard_cap", "--hard-cap"), ("max_concurrency", "--max-concurrency"),
                 ("max_cost_usd", "--max-cost-usd"), ("mcp_fixture", "--mcp-fixture"))


def _trial_options_given(args) -> list[str]:
    return [flag for dest, flag in TRIAL_OPTIONS if getattr(args, dest, None) not in (None, False, [])]


def _install_signal_handlers(stop: StopRequest):
    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.request(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    return lambda: [signal.signal(s, h) for s, h in previous.items()]


def cmd_run(args) -> int:
    """``run``: drive a whole trial and print its summary; exit 0 PASS, 1 FAIL, 6 DEGRADED, 3 BLOCKED,
    2 refused input (nothing created)."""
    from live_trial.cli.progress import Progress
    from live_trial.trial.activity import parse_fixture
    from live_trial.trial.facts import TrialRequest
    from live_trial.trial.runner import Trial

    if sum(bool(x) for x in (args.target, args.resume, args.plan)) != 1:
        print("live-trial run: error: give exactly one of TARGET, --resume WORKDIR or --plan PLAN_JSON "
              "(see live-trial run --help)", file=sys.stderr)
        return ExitCode.USAGE
    plan_only = [flag for flag, given in (("--shard", args.shard is not None), ("--junit", args.junit is not None),
                                          ("--github-annotations", args.github_annotations),
                                          ("--suite", args.suite is not None and args.case is None)) if given]
    if plan_only and not args.plan:
        print(f"live-trial run: error: {', '.join(plan_only)} need --plan PLAN_JSON "
              "(see live-trial run --help)", file=sys.stderr)
        return ExitCode.USAGE
    if args.replay is not None and args.rehearsal is not None:
        print("live-trial run: error: give one of --rehearsal SCENARIO or --replay TAPE "
              "(see live-trial run --help)", file=sys.stderr)
        return ExitCode.USAGE
    if args.plan and (args.record or args.replay is not None):
        print("live-trial run: error: --record and --replay are options of one trial; a plan's case takes "
              "replay: TAPE in the suite file (see references/suite-format.md)", file=sys.stderr)
        return ExitCode.USAGE
    if (args.case is None and args.live) or (args.case is not None and not args.target):
        print("live-trial run: error: --case needs TARGET, --live needs --case (see live-trial run --help)",
              file=sys.stderr)
        return ExitCode.USAGE
    if args.repeat is not None and not args.target:
        print("live-trial run: error: --repeat needs TARGET (a plan's cases say their own repeats in the suite) "
              "(see live-trial run --help)", file=sys.stderr)
        return ExitCode.USAGE
    if args.resume and _trial_options_given(args):
        print(f"live-trial run: error: --resume continues with the options the trial started with; remove "
              f"{', '.join(_trial_options_given(args))} (see live-trial run --help)", file=sys.stderr)
        return ExitCode.USAGE
    args.args, args.gate_kind = args.args or "", args.gate_kind or "rescue"
    policy = _policy(args)
    if args.plan:
        from live_trial.cli.plan_run import run_plan

        return run_plan(args, policy)
    stop = StopRequest()
    restore = _install_signal_handlers(stop)
    progress = Progress(json_mode=args.json)
    try:
        if args.resume:
            outcome = Trial(TrialRequest(target=""), on_event=progress.event, stop_event=stop).resume(args.resume)
        else:
            if args.repeat is not None and args.repeat < 1:
                raise RefusedInput(f"--repeat must be 1 or more (got {args.repeat})", code="bad_value",
                                   fix="e.g. --repeat 3")
            if args.case is not None:
                from live_trial.cli.case_cmd import run_suite_case

                return run_suite_case(args, policy, progress, stop)
            target, plugins_root = split_target(args.target, args.plugins_root)
            req = TrialRequest(target=target, plugins_root=plugins_root, **folder_options(args),
                               eval_root=args.eval_root or Path("eval-log"),
                               args=args.args, model=args.model, proof=args.proof,
                               rehearsal=args.replay or args.rehearsal, replay=args.replay is not None,
                               record=args.record,
                               gate_responses=[a for a, _ in getattr(args, "gate_answers", None) or []],
                               gate_response_kinds=[k for _, k in getattr(args, "gate_answers", None) or []],
                               gate_kind=args.gate_kind,
                               expect_gate=args.expect_gate, claude_bin=args.claude_bin, socket=args.socket,
                               lang=args.lang, policy=policy,
                               mcp_fixtures=[parse_fixture(text, Path.cwd()) for text in args.mcp_fixture])
            if args.repeat is not None and args.repeat > 1:
                from live_trial.cli.case_cmd import run_repeated

                return run_repeated(req, args, progress, stop)
            outcome = Trial(req, on_event=progress.event, stop_event=stop).run()
    finally:
        progress.close()
        restore()
    from live_trial.cli.report_cmd import write_report_after_run

    outcome.report = write_report_after_run(outcome)
    progress.final(outcome)
    return outcome.exit_code
