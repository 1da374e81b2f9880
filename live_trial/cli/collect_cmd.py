"""``collect`` (gather a trial's evidence into its workdir) and ``reap`` (remove orphaned lt-* sessions and the copies
their trials ran in)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from live_trial.errors import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``collect`` and ``reap`` subcommands."""
    p = sub.add_parser("collect", help="copy pane.txt, transcript.jsonl and side effects into a workdir",
                       description="Seed 001 collection: out/, pane.txt (capture with scrollback) and transcript.jsonl "
                                   "in the workdir, and the side effects: what changed in the trial's folder since "
                                   "its snapshot at start (a workdir `live-trial prepare` made has one). Without a "
                                   "snapshot the side effects cannot be known: the collection is partial. Exit 0 "
                                   "complete, 1 partial (what is missing is printed), 2 refused.")
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--session", help="the trial's tmux session (lt-...; default: the prepared workdir's)")
    p.add_argument("--session-id", help="the claude session id (transcript file name; default: the prepared "
                                        "workdir's)")
    p.add_argument("--cwd", type=Path, default=None, help="the trial cwd (default: the prepared workdir's, else here)")
    p.add_argument("--config-dir", type=Path, help="claude config folder (default CLAUDE_CONFIG_DIR or ~/.claude)")
    p.add_argument("--socket", help="tmux socket name")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_collect)

    r = sub.add_parser("reap", help="remove lt-* sessions whose harness is gone (never a live trial's), the private "
                                    "copies their trials ran in, and their leftover processes",
                       description="Remove every lt-* session whose harness is gone, with its processes, and the "
                                   "private copy its trial ran in; then end the leftover processes (tools, evaluator) "
                                   "of the eval root's trials whose harness is gone. Exit 0 (3 when tmux is missing).")
    r.add_argument("--socket", help="tmux socket name")
    r.add_argument("--expired", action="store_true",
                   help="also remove sessions started by boot whose lease ran out (no step renewed it for its "
                        "time-to-live), even while their owner runs; say why each session is removed or kept")
    r.add_argument("--eval-root", type=Path, default=Path("eval-log"),
                   help="where the trials' workdirs are (default ./eval-log)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_reap)


def cmd_collect(args) -> int:
    """``collect``: copy out/, pane.txt, transcript.jsonl and the side effects (against the folder's snapshot at start)
    into the workdir; exit 0 complete, 1 partial (what is missing is printed, and a line when the side effects cannot
    be known); RefusedInput (exit 2) for a bad session name, a workdir that names no session, a folder without
    trial-state.json or a symlinked workdir."""
    from live_trial.acceptance.origin import trial_folder
    from live_trial.errors import RefusedInput
    from live_trial.session.backend import Backend
    from live_trial.session.rules import validate_session_name
    from live_trial.transcript.paths import config_dir, locate
    from live_trial.trial.byhand import collect_by_hand, read_state
    from live_trial.trial.workdir import open_workdir

    wd = open_workdir(trial_folder(args.workdir))
    state = read_state(wd.root) or {}
    session, session_id = args.session or state.get("session"), args.session_id or state.get("session_id")
    if not session or not session_id:
        raise RefusedInput("collect needs the session and its id", where=f"--workdir {wd.root}", code="no_session",
                           fix="pass --session lt-... --session-id <uuid>, or collect a workdir made by "
                               "`live-trial prepare`")
    validate_session_name(session)
    backend = Backend(args.socket)
    backend.require_tmux()
    backend.renew_lease(session)        # a step: a session started by boot keeps its lease
    pane = backend.capture(session, scrollback=True) if backend.has_session(session) else None
    cwd = (args.cwd or Path(state.get("cwd") or ".")).resolve()
    config = args.config_dir or state.get("config_dir") or backend.get_meta(session, "config_dir") or config_dir()
    tpath = locate(session_id, cwd, config)
    got, notes = collect_by_hand(wd.root, state or None, pane_text=pane, transcript=tpath, cwd=cwd)
    doc = {"status": "COLLECTED" if got.complete else "PARTIAL", "missing": got.missing,
           "out_files": got.out_files, "side_effects": got.side_effects, "notes": notes}
    if args.json:
        print(json.dumps(doc))
    else:
        print(f"{doc['status']}: {wd.root}" + (f" missing: {', '.join(got.missing)}" if got.missing else ""))
        for note in notes:
            print(f"  {note}")
        effects = got.side_effects
        if "added" in effects:
            print(f"  side effects: {effects['added']} added, {effects['changed']} changed, {effects['removed']} "
                  f"removed in the trial's folder since its start")
    return ExitCode.OK if got.complete else ExitCode.FAIL


def cmd_reap(args) -> int:
    """``reap``: remove every lt-* session whose owner harness is gone (with its process tree) and the private copy of
    DIR its trial ran in (``--cwd``), end the leftover processes of the eval root's trials whose harness is gone, and
    print each; exit 0 (3 when tmux is missing)."""
    from live_trial.session.backend import Backend
    from live_trial.trial.orphans import end_orphans

    backend = Backend(args.socket)
    backend.require_tmux()
    started_in = {name: backend.get_meta(name, "cwd") for name in backend.list_sessions()}
    decisions = backend.reap_with_reasons(expired=args.expired)
    removed = [d.session for d in decisions if d.remove]
    copies = _reap_copies(removed, started_in)
    ended = end_orphans(args.eval_root, keep={d.session for d in decisions if not d.remove})
    if args.json:
        print(json.dumps({"status": "REAPED", "removed": removed, "copies_removed": copies, "processes": ended,
                          **({"decisions": [vars(d) for d in decisions]} if args.expired else {})}))
    else:
        print(f"REAPED: {len(removed)} session(s), {sum(len(e['ended']) for e in ended)} leftover process(es)")
        for d in decisions:
            if d.remove:
                print(f"removed {d.session}" + (f": {d.why}" if args.expired else ""))
            elif args.expired:
                print(f"kept {d.session}: {d.why}")
        for path in copies:
            print(f"removed the trial's copy {path}")
        for item in ended:
            print(f"ended {len(item['ended'])} process(es) of {item['session']}"
                  + (f"; still alive: {item['left']}" if item["left"] else ""))
    return ExitCode.OK


def _reap_copies(removed: list[str], started_in: dict) -> list[str]:
    """The copies of the reaped sessions' trials, removed (see :func:`live_trial.trial.folder_steps.reap_copy`)."""
    from live_trial.trial.folder_steps import reap_copy

    out = []
    for name in removed:
        try:
            copy = reap_copy(name, started_in.get(name))
        except Exception as exc:  # noqa: BLE001 - one trial's record must not stop the others
            print(f"WARN: could not remove the copy of {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        if copy is not None:
            out.append(str(copy))
    return out
