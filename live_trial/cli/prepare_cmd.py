"""``prepare``: make a trial ready for the steps by hand and print them (README "The steps, one by one").

Exit codes: 0 prepared, 2 refused input (nothing created), 3 BLOCKED (the trial's folder could not be made; nothing
left behind), 64 usage error.
"""
from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from live_trial.cli.boot_cmd import positive_seconds
from live_trial.cli.folder_args import add_folder_arguments
from live_trial.cli.trial_cmd import add_mcp_fixture_argument
from live_trial.errors import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``prepare`` subcommand."""
    p = sub.add_parser(
        "prepare", help="make a trial ready for the steps by hand (workdir, task.md, its folder and snapshot) and "
                        "print the next commands",
        description="Make what `run` makes before boot, with the same code: the workdir, task.md, trial-state.json "
                    "and the trial's own folder with its snapshot at start (for a rehearsal also its isolated config "
                    "and a port for the scripted model). Prints the values of the trial (WORKDIR=, SESSION=, "
                    "SESSION_ID=, PORT=) and the next commands with their real arguments: boot, send, poll with its "
                    "state file, collect, evaluate, verdict, kill-session, reap. The session boot starts holds a "
                    "lease: reap and run keep it while --owner-pid lives or for --ttl seconds after its last step. "
                    "Exit 0 prepared, 2 refused (nothing created), 3 BLOCKED.")
    p.add_argument("target", help="plugin:skill (plugin by its plugin.json name) or PLUGIN_DIR:skill")
    p.add_argument("--args", default="", help="arguments passed to the skill")
    p.add_argument("--plugins-root", type=Path, default=None, help="folder holding the plugins (default ./plugins)")
    add_folder_arguments(p)
    p.add_argument("--rehearsal", type=Path, metavar="SCENARIO", help="the model will be played from this scenario")
    p.add_argument("--eval-root", type=Path, default=Path("eval-log"), help="where the workdir goes (default eval-log)")
    p.add_argument("--model", help="model id for the trial session (proof trials need a full id)")
    p.add_argument("--proof", action="store_true", help="proof trial: any intervention or model mismatch fails")
    p.add_argument("--socket", help="tmux socket name the printed commands use (default: LIVE_TRIAL_SOCKET or "
                                    "live-trial)")
    p.add_argument("--owner-pid", type=int, default=None,
                   help="the process the session's lease follows (default: LIVE_TRIAL_OWNER_PID, inside Claude Code "
                        "its claude process, else the shell that runs prepare)")
    p.add_argument("--ttl", type=positive_seconds, default=None, metavar="S",
                   help="seconds the lease holds after each step once its owner is gone (default: the policy's "
                        "hard cap)")
    p.add_argument("--delivery", action="store_true",
                   help="deliver the first artifact to a person before any judging (seed 001 artifact_delivery): "
                        "evaluate waits for their choice, recorded with `live-trial delivery record`")
    add_mcp_fixture_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_prepare)


def _process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip() or "?"
    except OSError:
        return "?"


def cmd_prepare(args) -> int:
    """Handler of ``prepare``: see the parser description."""
    from live_trial.cli.folder_args import folder_options
    from live_trial.cli.targets import split_target
    from live_trial.policy import load_policy
    from live_trial.session.rules import default_owner_pid
    from live_trial.trial import byhand
    from live_trial.trial.activity import parse_fixture
    from live_trial.trial.facts import TrialRequest

    policy = load_policy()
    target, plugins_root = split_target(args.target, args.plugins_root)
    req = TrialRequest(target=target, plugins_root=plugins_root, **folder_options(args), eval_root=args.eval_root,
                       args=args.args, model=args.model, proof=args.proof, rehearsal=args.rehearsal,
                       socket=args.socket, policy=policy,
                       mcp_fixtures=[parse_fixture(text, Path.cwd()) for text in args.mcp_fixture])
    owner = args.owner_pid if args.owner_pid is not None else default_owner_pid()
    ttl = args.ttl or policy.hard_cap_s
    prepared = byhand.prepare(req, owner_pid=owner, ttl_s=ttl, delivery=args.delivery)
    values = byhand.shell_values(prepared)
    commands = byhand.next_commands(prepared, socket=args.socket)
    state = prepared.state
    if args.json:
        print(json.dumps({"status": "PREPARED", "workdir": str(prepared.workdir), "session": state["session"],
                          "session_id": state["session_id"], "cwd": state["cwd"], "owner_pid": owner, "ttl_s": ttl,
                          "values": values, "commands": commands, "notes": prepared.notes}, ensure_ascii=False))
        return ExitCode.OK
    folder = state.get("folder") or {}
    print(f"PREPARED: {state['target']} in {prepared.workdir}")
    print(f"# session {state['session']}; its own folder {state['cwd']} ({folder.get('form', 'fresh')}), its start "
          f"recorded in cwd-snapshot.json")
    print(f"# the session's lease holds while pid {owner} ({_process_name(owner)}) runs, else for {ttl:.0f} s after "
          "its last step")
    for note in prepared.notes:
        print(f"# note: {note}")
    print("# the values of this trial (the README's steps use them as shell variables):")
    for key, value in values.items():
        print(f"{key}={shlex.quote(value)}")
    print("# the next steps, one at a time:")
    for line in commands:
        print(line)
    return ExitCode.OK
