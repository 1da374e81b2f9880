"""``status`` (classify a transcript) and ``poll`` (wait for DONE / GATE / STALL / HARD_CAP).

The first line printed is the status word (CONVENTIONS.md): ``IDLE_TURN_COMPLETE: …``, ``GATE: <question>``,
``DONE: …``, ``STALL: … state: <STATE>``. ``--json`` prints one object instead.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from live_trial.errors import ExitCode, PollExit

POLL_EPILOG = """exit codes: 0 DONE, 1 HARD_CAP, 2 STALL (also at once with reason session_gone), 4 GATE,
5 TICK_BUDGET (re-run the same command with the same --state-file), 3 BLOCKED (tmux missing),
64 refused input or usage error (first word REFUSED; never 2, which is STALL).
Limits: references/convergence-policy.json loop_bounds.trial_acceptance; env STALL_LIMIT / HARD_CAP (seconds)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``status`` and ``poll`` subcommands."""
    s = sub.add_parser("status", help="classify a transcript: BUSY_GENERATING, BUSY_TOOL, GATE, IDLE_TURN_COMPLETE",
                       description="Four-state classifier over the session transcript "
                                   "(references/transcript-jsonl.md). Exit 0 classified, 2 transcript not found "
                                   "or not a transcript, 1 self-test failed.")
    s.add_argument("--session-id", default=None, help="the claude session id (default env SESSION_ID)")
    s.add_argument("--cwd", type=Path, default=None, help="the trial cwd (default: here)")
    s.add_argument("--config-dir", type=Path, default=None,
                   help="claude config folder (default CLAUDE_CONFIG_DIR or ~/.claude)")
    s.add_argument("--transcript", type=Path, default=None, help="read this transcript file instead")
    s.add_argument("--pid", type=int, default=None, help="the CLI's pid: use its sessions/<pid>.json when it is alive "
                   "(its status, and the session it writes now when /clear moved it to a new transcript)")
    s.add_argument("--self-test", action="store_true", help="classify the built-in synthetic transcripts")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_status)

    p = sub.add_parser("poll", help="wait until DONE, GATE, STALL or HARD_CAP (resumable with --state-file)",
                       description="Poll a trial session. DONE needs the marker file AND IDLE_TURN_COMPLETE AND "
                                   "no busy screen, stable over done_stable_ticks observations.",
                       epilog=POLL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("marker", type=Path, help="the exact completion marker file (e.g. <workdir>/out/status.json)")
    p.add_argument("session", help="the tmux session (lt-...)")
    p.add_argument("--state-file", type=Path, required=True, help="poll state JSON; re-use it to continue the clocks")
    p.add_argument("--session-id", default=None,
                   help="the claude session id (default env SESSION_ID, else the one boot stored on the session)")
    p.add_argument("--cwd", type=Path, default=None, help="the trial cwd (default: boot's, else here)")
    p.add_argument("--config-dir", type=Path, default=None,
                   help="claude config folder (default: boot's, else CLAUDE_CONFIG_DIR or ~/.claude)")
    p.add_argument("--socket", default=None, help="tmux socket name (default env LIVE_TRIAL_SOCKET or live-trial)")
    p.add_argument("--max-ticks", type=int, default=None, help="stop with TICK_BUDGET (exit 5) after N ticks")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_poll)


def _status_line(st) -> str:
    from live_trial.transcript.status import TurnState

    if st.state == TurnState.GATE:
        return f"GATE: {st.question}"
    flags = []
    if st.interrupted:
        flags.append("interrupted")
    if st.api_error is not None:
        flags.append(f"api_error {st.api_error}" + (f" ({st.api_error_cause})" if st.api_error_cause else ""))
    if st.pending_tool:
        flags.append(f"pending_tool {st.pending_tool}")
    return f"{st.state}: {st.reason}" + (f" ({', '.join(flags)})" if flags else "")


def cmd_status(args) -> int:
    """``status``: classify one transcript (or run the self-test)."""
    from live_trial.errors import RefusedInput
    from live_trial.transcript.paths import config_dir, locate, read_cli_session_status
    from live_trial.transcript.records import is_human_prompt
    from live_trial.transcript.status import classify
    from live_trial.transcript.turn import read_turn

    if args.self_test:
        return _self_test(args.json)
    config = args.config_dir or config_dir()
    if args.transcript:
        path = args.transcript
    else:
        sid = args.session_id or os.environ.get("SESSION_ID")
        if not sid:
            raise RefusedInput("no session id", where="status",
                               fix="pass --session-id ID, set SESSION_ID, or --transcript PATH")
        path = locate(sid, (args.cwd or Path.cwd()).absolute(), config)
    if not Path(path).is_file():
        raise RefusedInput("transcript not found", where=str(path), code="not_found",
                           fix="the CLI creates it at the first prompt; "
                               "check --session-id, --cwd and CLAUDE_CONFIG_DIR")
    session_status, moved_from = None, None
    if args.pid:
        from live_trial.session.rules import pid_alive
        if pid_alive(args.pid):
            session_status = read_cli_session_status(config, args.pid)
    # read back from the end only as far as the state needs (a long turn is not read whole)
    tail = read_turn(path, session_status=session_status)
    skipped = tail.skipped_malformed + tail.skipped_unknown
    if not tail.records and skipped:
        raise RefusedInput(f"not a Claude Code transcript: none of its last {skipped} line(s) is a transcript record",
                           where=str(path), code="not_a_transcript",
                           fix="pass the session's JSONL under <config>/projects/<cwd slug>/<session id>.jsonl, "
                               "or use --session-id")
    if args.pid and not args.transcript:
        # /clear: the CLI continues under a new session id in a new file (references/transcript-jsonl.md)
        from live_trial.transcript.locator import locate_current

        now = locate_current(Path(path).stem, (args.cwd or Path.cwd()).absolute(), config, session_status, Path(path))
        if now.moved_from is not None and now.path.is_file():
            moved_from, path = path, now.path
            tail = read_turn(path, session_status=session_status)
            if not any(map(is_human_prompt, tail.records)):
                tail.records = read_turn(moved_from, session_status=session_status).records + tail.records
    st = classify(tail.records, session_status)
    if args.json:
        doc = st.to_dict()
        doc.update(transcript=str(path), skipped_malformed=tail.skipped_malformed, skipped_unknown=tail.skipped_unknown,
                   first_error=tail.first_error, torn_tail=tail.torn_tail,
                   moved_from=str(moved_from) if moved_from else None)
        print(json.dumps(doc, ensure_ascii=False))
        return ExitCode.OK
    print(_status_line(st))
    print(f"state: {st.state}  interrupted: {str(st.interrupted).lower()}  api_error: {st.api_error}  "
          f"pending_tool: {st.pending_tool}")
    print(f"transcript: {path}  records read: {len(tail.records)}  skipped: {tail.skipped_malformed} malformed, "
          f"{tail.skipped_unknown} unknown" + ("  (torn last line held back)" if tail.torn_tail else ""))
    if moved_from:
        print(f"moved: the session continues in {Path(path).name} (was {Path(moved_from).name})")
    if st.background:
        print(f"background: {st.background['kind']} ({st.background['shells']} shells, {st.background['agents']} "
              f"agents; from {', '.join(st.background['sources'])})")
    for w in st.warnings:
        print(f"WARN: {w}")
    return ExitCode.OK


def _self_test(as_json: bool) -> int:
    from live_trial.transcript.cases import self_test

    results = self_test()
    failed = [(n, p) for n, p in results if p]
    if as_json:
        print(json.dumps({"status": "FAIL" if failed else "OK", "cases": len(results),
                          "failed": [{"case": n, "problems": p} for n, p in failed]}))
    else:
        print(f"SELF_TEST: {'FAIL' if failed else 'OK'} ({len(results) - len(failed)}/{len(results)} cases)")
        for name, problems in failed:
            print(f"  {name}: {'; '.join(problems)}")
    return ExitCode.FAIL if failed else ExitCode.OK


def cmd_poll(args) -> int:
    """``poll``: run the poll loop and print the status line first.

    Refused input exits 64, not 2: exit 2 is STALL (seed 001 poll exit table), and a script that reads 2 walks
    the STALL table, so a mistyped argument must never look like a stalled trial.
    """
    from live_trial.errors import RefusedInput, SchemaInvalid

    try:
        return _poll(args)
    except (RefusedInput, SchemaInvalid) as exc:
        exc.exit_code = ExitCode.USAGE
        raise


def _poll(args) -> int:
    from live_trial.errors import RefusedInput
    from live_trial.policy import load_policy
    from live_trial.session.backend import Backend
    from live_trial.session.rules import validate_session_name
    from live_trial.transcript.paths import check_session_id
    from live_trial.trial.poll import poll
    from live_trial.trial.poll_state import PollConfig

    validate_session_name(args.session)
    if args.max_ticks is not None and args.max_ticks < 1:
        raise RefusedInput("--max-ticks must be at least 1", where=f"--max-ticks {args.max_ticks}")
    backend = Backend(args.socket)
    if not Path(args.state_file).exists() and not backend.has_session(args.session):
        # A first poll of a session that does not exist is a wrong name, not a crash (STALL session_gone is for a
        # session that was seen and then went away); nothing is written.
        raise RefusedInput("no such tmux session", where=f"{args.session} on socket {backend.socket}",
                           code="unknown_session", fix="check the name (live-trial backend list) and --socket")
    policy = load_policy()
    sid = args.session_id or os.environ.get("SESSION_ID") or _meta(backend, args.session, "session_id")
    if sid:
        check_session_id(sid)
    cwd = args.cwd or _meta(backend, args.session, "cwd") or Path.cwd()
    config_dir = args.config_dir or _meta(backend, args.session, "config_dir") or None
    cfg = PollConfig(marker=args.marker, session=args.session, session_id=sid, cwd=Path(cwd).absolute(),
                     config_dir=config_dir, state_file=args.state_file, policy=policy, max_ticks=args.max_ticks)
    show = _TickDisplay(enabled=sys.stderr.isatty() and not args.json)
    renew = _LeaseRenewal(backend, args.session, show)      # a step: a session started by boot keeps its lease
    try:
        result = poll(cfg, backend, on_tick=renew)
    finally:
        show.close()
        renew.now()
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return result.code
    print(_poll_line(result))
    if result.status is not None and result.status.warnings:
        for w in result.status.warnings:
            print(f"WARN: {w}")
    if result.exit in (PollExit.STALL, PollExit.HARD_CAP, PollExit.GATE) and result.capture_tail:
        print("--- screen tail ---")
        for line in result.capture_tail:
            print(line)
    return result.code


def _meta(backend, session: str, key: str) -> str | None:
    """A fact boot stored on the session (``@lt_<key>``), or None (older backends, gone session, no tmux)."""
    getter = getattr(backend, "get_meta", None)
    if getter is None:
        return None
    try:
        return getter(session, key) or None
    except Exception:  # noqa: BLE001 - only a default; the flags and env still work
        return None


def _poll_line(r) -> str:
    state = r.state or "-"
    timing = f"{r.elapsed_s:.1f}s, {r.ticks} ticks"
    if r.exit == PollExit.DONE:
        return f"DONE: {r.marker} ({r.reason}; {timing}) state: {state}"
    if r.exit == PollExit.GATE:
        return f"GATE: {r.question} (gate {r.reason}; {timing}) state: {state}"
    if r.exit == PollExit.STALL:
        return f"STALL: {r.reason} ({timing}) state: {state}"
    if r.exit == PollExit.HARD_CAP:
        return f"HARD_CAP: {r.reason} ({timing}) state: {state}"
    if r.exit == PollExit.TICK_BUDGET:
        return f"TICK_BUDGET: {r.reason}; re-run the same command to continue ({timing}) state: {state}"
    return f"{r.exit}: {r.reason} state: {state}"


class _LeaseRenewal:
    """The ``on_tick`` of a poll by hand: renews the lease of the session (README "The steps, one by one") when the
    poll starts, every :attr:`EVERY_S` seconds while it runs and when it ends, then passes the tick on to ``then``."""

    EVERY_S = 30.0

    def __init__(self, backend, session: str, then) -> None:
        self.backend, self.session, self.then = backend, session, then
        self.last = 0.0
        self.now()

    def now(self) -> None:
        import time

        try:
            self.backend.renew_lease(self.session)
        except Exception:  # noqa: BLE001 - a lease that cannot be renewed must not stop a poll; reap decides later
            pass
        self.last = time.monotonic()

    def __call__(self, data: dict) -> None:
        import time

        if time.monotonic() - self.last >= self.EVERY_S:
            self.now()
        self.then(data)


class _TickDisplay:
    """A rich live progress line on stderr when it is a terminal; WARN lines always go to stderr."""

    def __init__(self, *, enabled: bool) -> None:
        self.live = None
        if enabled:
            from rich.console import Console
            from rich.live import Live
            self.live = Live("", console=Console(stderr=True, highlight=False), transient=True,
                             auto_refresh=False)
            self.live.start()

    def __call__(self, data: dict) -> None:
        if "warn" in data:
            if self.live is not None:
                self.live.console.print(data["warn"], markup=False)
            else:
                print(data["warn"], file=sys.stderr, flush=True)
            return
        if self.live is not None:
            from rich.text import Text
            try:
                from live_trial.cli.progress import tick_line
                line = tick_line(data)
            except Exception:  # noqa: BLE001 - the display must never stop a poll
                line = " · ".join(f"{k} {v}" for k, v in data.items())
            self.live.update(Text(f"poll tick {data.get('tick')} · " + line), refresh=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
