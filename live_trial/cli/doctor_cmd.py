"""``doctor --cli [PATH]``: play the doctor's rehearsal probe on an installed claude and print, one line per
assumption, whether it holds (format: :mod:`live_trial.doctor.checks`). Exit 0 all hold, 1 one changed or was not
seen, 3 the probe could not run (tmux or claude missing), 64 usage."""
from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``doctor`` subcommand."""
    p = sub.add_parser("doctor", help="check that an installed claude still shows and writes what the harness relies "
                                      "on (exit 0 all hold, 1 changed or not seen, 3 could not run)")
    p.add_argument("--cli", nargs="?", const="", default=None, metavar="PATH",
                   help="probe this claude (default: the one `run` would use: LIVE_TRIAL_CLAUDE_BIN, PATH, "
                        "./claude-pin)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the lines")
    p.set_defaults(func=cmd_doctor, _doctor_parser=p)


def cmd_doctor(args) -> int:
    """Run the probe (``--cli``) and print its lines and summary, or the JSON object."""
    if args.cli is None:
        args._doctor_parser.error("say what to check: --cli [PATH]")
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
