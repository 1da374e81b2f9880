"""Entry point of ``python -m live_trial`` and the ``live-trial`` console script.

Each command group lives in its own module under ``live_trial.cli`` and exposes
``register(subparsers) -> None``; each subcommand sets ``func(args) -> int`` as its handler.
Only :func:`main` turns :class:`~live_trial.errors.LiveTrialError` into a printed line and an exit code.
Set ``LIVE_TRIAL_RAISE=1`` to re-raise instead (debugging).

Start-up cost: a command module imports at its top only what its argparse definitions need; its handler imports
the rest when it runs. ``live-trial <command> …`` imports just the module of that command (:data:`COMMANDS`);
only ``live-trial`` alone, ``--help`` or an unknown command build the parser of every command.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence

from live_trial.errors import ExitCode, LiveTrialError

# Command modules, in the order their subcommands appear in --help.
COMMAND_MODULES = (
    "live_trial.cli.trial_cmd",      # run
    "live_trial.cli.prepare_cmd",    # prepare (the steps by hand)
    "live_trial.cli.plan_cmd",       # plan
    "live_trial.cli.boot_cmd",       # boot, send, backend
    "live_trial.cli.poll_cmd",       # status, poll
    "live_trial.cli.collect_cmd",    # collect, reap
    "live_trial.cli.evaluate_cmd",   # evaluate, watch
    "live_trial.cli.verdict_cmd",    # verdict
    "live_trial.cli.rehearsal_cmd",  # rehearsal (serve a scenario by hand)
    "live_trial.cli.selftest_cmd",   # self-test (every offline check)
    "live_trial.cli.report_cmd",     # report, ls, show, reasons (reading past trials)
    "live_trial.cli.merge_cmd",      # merge (the eval-logs of a plan's shards)
    "live_trial.cli.doctor_cmd",     # doctor (does the installed CLI still show what the harness relies on)
    "live_trial.cli.delivery_cmd",   # delivery, ticket (the first artifact, the person's choice, the loop)
)
#: Each subcommand and the module that registers it (tests/unit/cli/test_cli_startup.py checks it against the
#: modules).
COMMANDS = {"run": "live_trial.cli.trial_cmd", "prepare": "live_trial.cli.prepare_cmd",
            "plan": "live_trial.cli.plan_cmd", "boot": "live_trial.cli.boot_cmd",
            "send": "live_trial.cli.boot_cmd", "backend": "live_trial.cli.boot_cmd",
            "status": "live_trial.cli.poll_cmd", "poll": "live_trial.cli.poll_cmd",
            "collect": "live_trial.cli.collect_cmd", "reap": "live_trial.cli.collect_cmd",
            "evaluate": "live_trial.cli.evaluate_cmd", "watch": "live_trial.cli.evaluate_cmd",
            "verdict": "live_trial.cli.verdict_cmd", "rehearsal": "live_trial.cli.rehearsal_cmd",
            "self-test": "live_trial.cli.selftest_cmd", "report": "live_trial.cli.report_cmd",
            "ls": "live_trial.cli.report_cmd", "show": "live_trial.cli.report_cmd",
            "reasons": "live_trial.cli.report_cmd",
            "merge": "live_trial.cli.merge_cmd", "doctor": "live_trial.cli.doctor_cmd",
            "delivery": "live_trial.cli.delivery_cmd", "ticket": "live_trial.cli.delivery_cmd"}

EPILOG = """exit codes:
  run      0 PASS, 1 FAIL, 6 DEGRADED, 3 BLOCKED (not the skill's failure), 2 refused input (nothing created)
  boot     0 READY, 1 TIMEOUT, 2 BOOT_FAIL or refused input, 3 BLOCKED
  poll     0 DONE, 1 HARD_CAP, 2 STALL, 4 GATE, 5 TICK_BUDGET, 3 BLOCKED, 64 refused input
  prepare  0 prepared, 2 refused input (nothing created), 3 BLOCKED
  verdict  0 written, 2 refused (nothing written, also when it would contradict evaluation.json or
           replace a verdict, unless --override)
  report, ls, show  0 done, 2 refused (not a workdir, no eval root); reasons 0
  merge    0 merged, 2 refused (a conflict; nothing written)
  doctor   0 every assumption holds, 1 one changed or was not seen, 3 could not run (tmux or claude missing)
  delivery, ticket  0 done, 2 refused (not allowed from the delivery's state, a guard failed, before the
           person's choice, past the loop's bound; nothing changed)
  any      64 usage error, 130 stopped by Ctrl-C, 141 its reader went away (| head)
"""


class _Parser(argparse.ArgumentParser):
    """argparse with exit code 64 for usage errors (CONVENTIONS.md).

    Its help formatters get the terminal width from :func:`os.get_terminal_size` (``COLUMNS`` first, 80 without a
    terminal, as :func:`shutil.get_terminal_size` does): argparse would import :mod:`shutil` (and the compression
    modules it pulls in) on every start only to ask for that width."""

    def _get_formatter(self):
        # typeshed's formatter_class takes prog alone; every one here is a HelpFormatter, which also takes width
        return self.formatter_class(prog=self.prog, width=_terminal_width())  # type: ignore[call-arg]

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(int(ExitCode.USAGE), f"{self.prog}: error: {message}\n")


def _terminal_width() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__         # None when the process has no stdout
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 80
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(columns - 2, 11)     # what argparse.HelpFormatter does with shutil's width


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command module registered, or only the module of ``command`` (a name in
    :data:`COMMANDS`; None or an unknown name: all of them)."""
    parser = _Parser(prog="live-trial", description="Run a Claude Code skill in a real claude session and judge it.",
                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    modules = (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # command group not built yet
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, run the subcommand, return its exit code.

    Text that cannot be printed as UTF-8 (a path with bytes that are not UTF-8, a lone surrogate) is printed as its
    backslash escape, never raised (stderr already does so)."""
    try:
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args, extra = parser.parse_known_args(argv)
    if extra:       # said by the command's own parser, with its own usage line, not the top-level one (exit 64)
        own = next((a.choices.get(args.command) for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction)), None)
        (own or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return int(ExitCode.USAGE)
    try:
        return int(args.func(args))
    except LiveTrialError as exc:
        if os.environ.get("LIVE_TRIAL_RAISE") == "1":
            raise
        if getattr(args, "json", False):
            print(json.dumps({"status": exc.status, "code": exc.code, "message": exc.message, **exc.details}))
        else:
            for line in exc.details.get("doctor") or []:       # the doctor's lines of a live trial that cannot start
                print(f"  {line}", file=sys.stderr)
            print(f"{exc.status}: {exc.message}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("INTERRUPTED: stopped by Ctrl-C", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # the reader closed the pipe (`live-trial ls | head`): stop quietly, as a shell tool does; stdout goes to
        # /dev/null so the interpreter's own flush at exit raises nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return int(ExitCode.BROKEN_PIPE)


if __name__ == "__main__":
    sys.exit(main())
