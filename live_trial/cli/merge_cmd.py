"""``merge``: combine the eval-logs of a plan's shards into one (README "Sharding a plan over CI machines")."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from live_trial.errors import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``merge`` subcommand."""
    p = sub.add_parser(
        "merge", help="combine the eval-logs of a plan's shards into one",
        description="Merge EVAL_LOG folders (trial workdirs, watches.json, notifications.jsonl) into --into DIR "
                    "without losing or duplicating anything. DIR may already hold an eval-log: it is kept and only "
                    "gains files. Conflicting inputs are refused and nothing is written. Exit codes: 0 merged, "
                    "2 refused (a conflict, an input that is not an eval-log).")
    p.add_argument("eval_logs", nargs="+", type=Path, metavar="EVAL_LOG", help="an eval-log folder of one shard")
    p.add_argument("--into", type=Path, required=True, metavar="DIR", help="the merged eval-log (created if missing)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=cmd_merge)


def cmd_merge(args) -> int:
    """``merge``: exit 0 merged, 2 refused (nothing written)."""
    from live_trial.report.merge import merge_eval_logs

    result = merge_eval_logs(args.eval_logs, args.into)
    if args.json:
        print(json.dumps({"status": "MERGED", "into": str(result.into), "trials": result.trials,
                          "copied": result.copied, "watches": result.watches,
                          "notifications": result.notifications}))
    else:
        print(f"MERGED: {result.trials} trials, {result.watches} watches, {result.notifications} notifications in "
              f"{result.into} ({result.copied} files copied)")
    return ExitCode.OK
