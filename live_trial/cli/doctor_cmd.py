"""``doctor``: with no ``--cli``, whether a real trial can start here (one line per need: claude, config, login,
trust, tmux, sandbox; format: :mod:`live_trial.doctor.live`), exit 0 ready, 1 something missing. ``doctor --cli
[PATH]``: play the doctor's rehearsal probe on an installed claude and print, one line per assumption, whether it
holds (format: :mod:`live_trial.doctor.checks`); exit 0 all hold, 1 one changed or was not seen, 3 the probe could not
run (tmux or claude missing), 64 usage."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``doctor`` subcommand."""
    p = sub.add_parser("doctor", help="say whether a real trial can start here (exit 0 ready, 1 missing); --cli: "
                                      "check that an installed claude still shows and writes what the harness relies "
                                      "on (exit 0 all hold, 1 changed or not seen, 3 could not run)")
    p.add_argument("--cli", nargs="?", const="", default=None, metavar="PATH",
                   help="probe this claude (default: the one `run` would use: LIVE_TRIAL_CLAUDE_BIN, PATH, "
                        "./claude-pin)")
    p.add_argument("--claude-bin", default=None, metavar="PATH",
                   help="without --cli: the claude a trial would use (default: LIVE_TRIAL_CLAUDE_BIN, PATH, "
                        "./claude-pin)")
    p.add_argument("--eval-root", type=Path, default=None,
                   help="without --cli: the eval root a trial would use (default ./eval-log); it must be trusted")
    p.add_argument("--in-place", type=Path, default=None, metavar="DIR",
                   help="without --cli: a trial run in DIR itself (DIR must be trusted, not the eval root)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the lines")
    p.set_defaults(func=cmd_doctor, _doctor_parser=p)


def cmd_doctor(args) -> int:
    """Run the probe (``--cli``) or the live checks, and print their lines and summary, or the JSON object."""
    if args.cli is None:
        return cmd_live(args)
    from live_trial.doctor.checks import exit_code
    from live_trial.doctor.probe import run_probe

    report = run_probe(args.cli or None)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        for check in report.checks:
            print(check.line())
        print(report.summary())
    sys.stdout.flush()
    return exit_code(report)


def cmd_live(args) -> int:
    """Print whether a real trial can start (:func:`live_trial.doctor.live.check_live`); exit 0 ready, 1 not."""
    from live_trial.doctor import live
    from live_trial.errors import ExitCode

    if args.in_place is not None:
        where, what = args.in_place, "the trial folder"
    else:
        where, what = args.eval_root or Path("eval-log"), "the eval root"
    lines = live.check_live(os.environ, folder=where, what=what, claude_bin=args.claude_bin)
    ready = all(ln.ok for ln in lines)
    if args.json:
        print(json.dumps({"status": "READY" if ready else "NOT_READY",
                          "lines": [{"name": ln.name, "ok": ln.ok, "text": ln.text, "fix": ln.fix} for ln in lines]},
                         ensure_ascii=False))
    else:
        for ln in lines:
            print(ln.line())
        print(live.summary(lines))
    sys.stdout.flush()
    return ExitCode.OK if ready else ExitCode.FAIL
