"""``collect`` (gather a trial's evidence into its workdir) and ``reap`` (remove orphaned lt-* sessions and the copies
their trials ran in)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``collect`` and ``reap`` subcommands."""
    p = sub.add_parser("collect", help="copy pane.txt, transcript.jsonl and side effects into a workdir",
                       description="Seed 001 collection: out/, pane.txt (capture with scrollback) and transcript.jsonl "
                                   "in the workdir, side effects as git status/diff. Exit 0 complete, 1 partial.")
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--session", required=True, help="the trial's tmux session (lt-...)")
    p.add_argument("--session-id", required=True, help="the claude session id (transcript file name)")
    p.add_argument("--cwd", type=Path, default=Path("."), help="the trial cwd (default: here)")
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
    r.add_argument("--eval-root", type=Path, default=Path("eval-log"),
                   help="where the trials' workdirs are (default ./eval-log)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_reap)


def cmd_collect(args) -> int:
    """``collect``: copy out/, pane.txt, transcript.jsonl and side effects into the workdir; exit 0 complete,
    1 partial (what is missing is printed); RefusedInput (exit 2) for a bad session name."""
    from live_trial.acceptance.origin import trial_folder
    from live_trial.session.backend import Backend
    from live_trial.session.rules import validate_session_name
    from live_trial.transcript.paths import config_dir, locate
    from live_trial.trial.collect import collect
    from live_trial.trial.workdir import open_workdir

    wd = open_workdir(trial_folder(args.workdir))
    validate_session_name(args.session)
    backend = Backend(args.socket)
    backend.require_tmux()
    pane = backend.capture(args.session, scrollback=True) if backend.has_session(args.session) else None
    config = args.config_dir or config_dir()
    tpath = locate(args.session_id, args.cwd.resolve(), config)
    got = collect(wd.root, pane_text=pane, transcript_src=tpath, subagents_src=tpath.with_suffix("") / "subagents",
                  cwd=args.cwd.resolve(), before=None, exclude=[wd.root])
    doc = {"status": "COLLECTED" if got.complete else "PARTIAL", "missing": got.missing,
           "out_files": got.out_files, "side_effects": got.side_effects}
    if args.json:
        print(json.dumps(doc))
    else:
        print(f"{doc['status']}: {wd.root}" + (f" missing: {', '.join(got.missing)}" if got.missing else ""))
    return 0 if got.complete else 1


def cmd_reap(args) -> int:
    """``reap``: remove every lt-* session whose owner harness is gone (with its process tree) and the private copy of
    DIR its trial ran in (``--cwd``), end the leftover processes of the eval root's trials whose harness is gone, and
    print each; exit 0 (3 when tmux is missing)."""
    from live_trial.session.backend import Backend
    from live_trial.trial.orphans import end_orphans

    backend = Backend(args.socket)
    backend.require_tmux()
    started_in = {name: backend.get_meta(name, "cwd") for name in backend.list_sessions()}
    removed = backend.reap()
    copies = _reap_copies(removed, started_in)
    ended = end_orphans(args.eval_root)
    if args.json:
        print(json.dumps({"status": "REAPED", "removed": removed, "copies_removed": copies, "processes": ended}))
    else:
        print(f"REAPED: {len(removed)} session(s), {sum(len(e['ended']) for e in ended)} leftover process(es)")
        for name in removed:
            print(f"removed {name}")
        for path in copies:
            print(f"removed the trial's copy {path}")
        for item in ended:
            print(f"ended {len(item['ended'])} process(es) of {item['session']}"
                  + (f"; still alive: {item['left']}" if item["left"] else ""))
    return 0


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
