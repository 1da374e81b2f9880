"""Subcommands ``boot``, ``send`` and ``backend <verb>`` (seed 001: live-trial-boot.py, -send.py, -backend.py).

Exit codes (CONVENTIONS.md): boot 0 READY, 1 TIMEOUT, 2 BOOT_FAIL or refused input, 3 BLOCKED;
send 0 DELIVERED, 1 DELIVERY_FAIL, 2 refused; backend nudge 0 NUDGED, 1 delivery failed (counted), 2 refused
(nudge_max reached; nothing written); backend verbs 0 done, 1 "no" (has-session of a gone or
dead session), 2 refused, 3 BLOCKED; 64 usage.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from live_trial.errors import SESSION_GONE, ExitCode, LiveTrialError, RefusedInput


def positive_seconds(text: str) -> float:
    """A number of seconds greater than 0, read as an argparse type (a usage error, exit 64, otherwise)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0 seconds, got {text}")
    return value


def register(subparsers) -> None:
    """Add ``boot``, ``send`` and ``backend`` to the top-level parser."""
    p = subparsers.add_parser("boot", help="start claude in a tmux session and wait for its prompt",
                              description="Start claude in a new tmux session and wait until its prompt is READY. "
                                          "Prints READY: <session> (<N>s) MODEL:<model|default> SESSION_ID:<uuid>. "
                                          "Exit 0 READY, 1 TIMEOUT, 2 BOOT_FAIL/refused, 3 BLOCKED.")
    p.add_argument("session", help="lt-<run-id>-<slug>")
    p.add_argument("cwd", help="the trial folder (must be trusted by claude)")
    p.add_argument("--model", default=None, help="model id (proof trials need a full id)")
    p.add_argument("--target-skill", default=None, help="plugin:skill to pin (loads it and its dependency union)")
    p.add_argument("--plugins-root", default=None, help="folder that holds the plugins (default: cwd)")
    p.add_argument("--proof", action="store_true", help="proof trial: refuse without a full model id")
    p.add_argument("--socket", default=None, help="tmux socket name (default: $LIVE_TRIAL_SOCKET or live-trial)")
    p.add_argument("--claude-bin", default=None, help="the claude executable")
    p.add_argument("--rehearsal-server", default=None, metavar="URL", help="point claude at a rehearsal server")
    p.add_argument("--config-dir", default=None, help="CLAUDE_CONFIG_DIR for rehearsal (seeded when empty)")
    p.add_argument("--session-id", default=None, help="uuid for the CLI session (default: a fresh uuid4)")
    p.add_argument("--owner-pid", type=int, default=None,
                   help="pid the session's lease follows: reap and run keep the session while it lives (default: the "
                        "workdir's owner with --workdir, else LIVE_TRIAL_OWNER_PID, inside Claude Code its claude "
                        "process, else the shell that runs boot)")
    p.add_argument("--ttl", type=positive_seconds, default=None, metavar="S",
                   help="the lease also holds S seconds after each step, whoever its owner was (default: the "
                        "workdir's, else the policy's hard cap); reap --expired removes it once that ran out")
    p.add_argument("--workdir", type=Path, default=None,
                   help="the workdir `live-trial prepare` made for this session: the session belongs to it")
    p.add_argument("--timeout", type=positive_seconds, default=None,
                   help="seconds to wait for READY (default: policy)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_boot)

    s = subparsers.add_parser("send", help="paste a task file into a session and confirm delivery",
                              description="Paste FILE through a named tmux buffer, press Enter and confirm the "
                                          "transcript got exactly its text. Exit 0 DELIVERED, 1 DELIVERY_FAIL, "
                                          "2 refused.")
    s.add_argument("session")
    s.add_argument("file")
    s.add_argument("--session-id", default=None, help="CLI session id (default: env SESSION_ID, else boot's record)")
    s.add_argument("--cwd", default=None, help="trial folder (default: boot's record)")
    s.add_argument("--config-dir", default=None, help="claude config folder (default: boot's record, else env)")
    s.add_argument("--socket", default=None)
    s.add_argument("--timeout", type=positive_seconds, default=None, help="seconds to wait for the transcript record")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_send)

    b = subparsers.add_parser("backend", help="tmux verbs on the harness socket; --self-test checks offline",
                              description="tmux verbs on the harness socket (exact targets only).")
    b.add_argument("--self-test", action="store_true", help="check session-name validation and the denylist offline")
    b.add_argument("--socket", default=None)
    verbs = b.add_subparsers(dest="verb", metavar="VERB")
    v = verbs.add_parser("paste-file", help="paste a file through a named buffer (no Enter)")
    v.add_argument("session")
    v.add_argument("file")
    v = verbs.add_parser("send-keys", help="send short fixed keys (Enter, Down, Escape, …)")
    v.add_argument("session")
    v.add_argument("keys", nargs="+")
    v = verbs.add_parser("send-line", help="type one short line and press Enter (gate answers)")
    v.add_argument("session")
    v.add_argument("text")
    v = verbs.add_parser("nudge", help="send the fixed nudge (seed 001 STALL row 4) as nudge-<n>.md, counted in the "
                                       "prepared workdir; refused past nudge_max",
                         description="Write the next nudge-<n>.md of WORKDIR with the fixed nudge text (in the "
                                     "notices' language), count it in trial-state.json, paste it through the "
                                     "session's named buffer and confirm it arrived, as send does. Exit 0 NUDGED, 1 "
                                     "delivery failed (still counted), 2 refused (nudge_max reached, or not the "
                                     "prepared workdir of SESSION; nothing written).")
    v.add_argument("session")
    v.add_argument("--workdir", type=Path, required=True, help="the workdir `live-trial prepare` made for SESSION")
    v = verbs.add_parser("answer-gate", help="answer the open dialog: an option label, or text:<words>")
    v.add_argument("session")
    v.add_argument("response")
    v = verbs.add_parser("has-session", help="exit 0 when the session exists and its CLI runs")
    v.add_argument("session")
    v = verbs.add_parser("capture-pane", help="print the pane's text")
    v.add_argument("session")
    v.add_argument("--scrollback", action="store_true", help="include the history")
    v = verbs.add_parser("kill-session", help="kill exactly this session (quiet when gone)")
    v.add_argument("session")
    verbs.add_parser("reap", help="kill lt-* sessions whose owner process is gone")
    verbs.add_parser("list", help="list lt-* sessions")
    for sub in verbs.choices.values():
        sub.add_argument("--socket", default=argparse.SUPPRESS)
    b.set_defaults(func=cmd_backend)


def _print_failure(exc: LiveTrialError, args) -> int:
    """Status line plus the capture tail (text mode); JSON mode lets cli.main print the object."""
    if getattr(args, "json", False) or os.environ.get("LIVE_TRIAL_RAISE") == "1":
        raise exc
    print(f"{exc.status}: {exc.message}", file=sys.stderr)
    for line in exc.details.get("tail") or []:
        print(f"  | {line}", file=sys.stderr)
    return int(exc.exit_code)


# ---------------------------------------------------------------- boot

def cmd_boot(args) -> int:
    """``boot``: see the parser description."""
    from live_trial.policy import load_policy
    from live_trial.session import boot
    from live_trial.session.backend import Backend
    from live_trial.trial import activity
    from live_trial.workdir_files import MARKER_ENV, Workdir

    state = None
    if args.workdir is not None:
        from live_trial.trial.byhand import prepared_state

        state = prepared_state(args.workdir.resolve(), args.session, cwd=Path(args.cwd),   # refused before anything
                               target=args.target_skill)                                     # starts
    owner, lease = _lease(args, state)
    overrides: dict[str, str] = {}
    rehearsal = False
    if args.rehearsal_server:
        if not args.config_dir:
            raise RefusedInput("--rehearsal-server needs --config-dir", where="boot",
                               fix="pass an isolated config folder, e.g. <workdir>/claude-config")
        overrides = _rehearsal_overrides(args.rehearsal_server, Path(args.config_dir), Path(args.cwd),
                                         wait=state is not None)
        rehearsal = True
    elif args.config_dir:
        overrides["CLAUDE_CONFIG_DIR"] = str(Path(args.config_dir).resolve())
    if state is not None:       # the session's environment names its completion marker, as run's does
        overrides[MARKER_ENV] = str(Workdir.of(args.workdir.resolve()).marker)
    from live_trial.session.claude_bin import find_claude

    # Blocked (exit 3) when missing. Its version is asked while the CLI boots (it is only printed after READY).
    claude, version_of = find_claude(args.claude_bin, version_later=True)
    from live_trial.session import containment

    # Held as run holds a trial (README "Nothing left running"): kill-session and reap end the container by its name.
    box = containment.create(args.session, os.environ)
    req = boot.BootRequest(session=args.session, cwd=Path(args.cwd), model=args.model, session_id=args.session_id,
                           target=args.target_skill,
                           plugins_root=Path(args.plugins_root) if args.plugins_root else None,
                           claude=claude, env_overrides=overrides, proof=args.proof, rehearsal=rehearsal,
                           owner_pid=owner, lease=lease, timeout_s=args.timeout, container=box,
                           # a prepared trial's claude writes its debug log into the workdir, as run's does
                           settings_args=activity.session_flags(Workdir.of(args.workdir.resolve())) if state else ())
    backend = Backend(args.socket)
    try:
        result = boot.boot(req, backend)
    except LiveTrialError as exc:
        return _print_failure(exc, args)
    finally:
        claude = version_of()
    warning = claude.warning()
    if state is not None:
        from live_trial.trial.byhand import record_boot

        backend.set_meta(args.session, workdir=str(args.workdir.resolve()))
        activity.await_prepared(args.workdir.resolve(), state,  # as run waits, before any paste
                                timeout_s=args.timeout or load_policy().boot_timeout_s)
        record_boot(args.workdir.resolve(), state, pane_pid=result.pane_pid, claude_bin=claude.path,
                    claude_version=claude.version, config_dir=overrides.get("CLAUDE_CONFIG_DIR"),
                    containment=box.to_json())
    if args.json:
        print(json.dumps({"status": "READY", "session": result.session, "session_id": result.session_id,
                          "model": result.model, "elapsed_s": round(result.elapsed_s, 2),
                          "bypass_dialog_seen": result.bypass_dialog_seen, "pane_pid": result.pane_pid,
                          "plugin_dirs": [str(p) for p in result.plugin_dirs],
                          "plugin_warnings": result.plugin_warnings,
                          "claude_version": claude.version, "claude_path": claude.path, "claude_warning": warning,
                          "owner_pid": owner, "lease_ttl_s": lease.ttl_s, "lease_expires": lease.expires,
                          "containment": box.to_json()}))
    else:
        print(result.ready_line())
        print(f"claude {claude.version} ({claude.path})", file=sys.stderr)   # stdout stays the READY line
        print(f"lease: reap and run keep {args.session} while pid {owner} runs, or for {lease.ttl_s:.0f} s after its "
              "last step", file=sys.stderr)
        print(box.note(), file=sys.stderr)
        if warning:
            print(f"WARN: {warning}", file=sys.stderr)
        for line in result.plugin_warnings:
            print(f"WARN: {line}", file=sys.stderr)
    return int(ExitCode.OK)


def _lease(args, state: dict | None):
    """``(owner pid, Lease)`` of the session boot starts (README "The steps, one by one"): the owner is ``--owner-pid``,
    else the prepared workdir's owner, else :func:`~live_trial.session.rules.default_owner_pid`; the time-to-live is
    ``--ttl``, else the workdir's, else the policy's hard cap."""
    import time

    from live_trial.policy import load_policy
    from live_trial.session.rules import Lease, default_owner_pid

    state = state or {}
    owner = args.owner_pid if args.owner_pid is not None else state.get("owner_pid") or default_owner_pid()
    ttl = args.ttl or state.get("lease_ttl_s") or load_policy().hard_cap_s
    return int(owner), Lease(expires=time.time() + float(ttl), ttl_s=float(ttl))


def _wait_for_server(url: str, timeout_s: float = 10.0) -> None:
    """Wait until something listens at ``url`` (``http://127.0.0.1:PORT``), at most ``timeout_s`` seconds: a rehearsal
    server started in the background just before boot may still be starting. Raises :class:`RefusedInput` (exit 2,
    nothing started) when nothing answers."""
    import socket
    import time

    host, _, port = url.split("//", 1)[1].partition(":")
    port = port.split("/", 1)[0]
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                return
        except (OSError, ValueError):
            if time.monotonic() >= deadline:
                raise RefusedInput(f"no rehearsal server answers at {url}", where="--rehearsal-server",
                                   code="rehearsal_server_down",
                                   fix="start it first: live-trial rehearsal serve SCENARIO --port PORT (the command "
                                       "prepare printed)") from None
            time.sleep(0.1)


def _rehearsal_overrides(url: str, config_dir: Path, cwd: Path, *, wait: bool = False) -> dict[str, str]:
    """The environment of a rehearsal boot; ``wait`` (a prepared workdir, whose server the steps by hand start in the
    background just before boot): first wait for the server (:func:`_wait_for_server`). A plain boot needs no server
    until the first prompt, so it never waits."""
    if not url.startswith(("http://127.0.0.1:", "http://localhost:")):
        raise RefusedInput(f"rehearsal server must be on 127.0.0.1, got {url!r}", where="--rehearsal-server",
                           fix="pass the URL printed by `live-trial rehearsal`")
    if wait:
        _wait_for_server(url)
    from live_trial.rehearsal.config import rehearsal_env, seed_config

    if not (config_dir / ".claude.json").exists():
        seed_config(config_dir, [cwd])
    return rehearsal_env(url, config_dir)


# ---------------------------------------------------------------- send

def cmd_send(args) -> int:
    """``send``: see the parser description."""
    from live_trial.session.backend import Backend

    backend = Backend(args.socket)
    try:
        delivery = deliver_file(backend, args.session, Path(args.file), session_id=args.session_id, cwd=args.cwd,
                                config=args.config_dir, timeout_s=args.timeout)
    except LiveTrialError as exc:
        if isinstance(exc, RefusedInput):
            raise
        return _print_failure(exc, args)
    if args.json:
        print(json.dumps({"status": "DELIVERED", "session": args.session, "file": str(Path(args.file).resolve()),
                          "extra_enters": delivery.extra_enters, "record_uuid": delivery.record_uuid,
                          "elapsed_s": round(delivery.elapsed_s, 2), "notes": delivery.notes}))
    else:
        print(f"DELIVERED: {args.session} {Path(args.file).name} ({delivery.elapsed_s:.1f}s, "
              f"extra_enters={delivery.extra_enters})")
    return int(ExitCode.OK)


def deliver_file(backend, session: str, path: Path, *, session_id: str | None = None, cwd: str | None = None,
                 config: str | None = None, timeout_s: float | None = None):
    """Paste ``path`` into ``session`` through its named buffer, press Enter and confirm the transcript got exactly its
    text (:func:`live_trial.session.send.send_file`); the session id, folder and config default to what boot recorded
    on the session. Returns the :class:`~live_trial.session.send.Delivery`. Raises :class:`RefusedInput` (no such
    session, no session id) and the delivery's failure."""
    from live_trial.session import send
    from live_trial.transcript.paths import config_dir

    if not backend.has_session(session):
        raise RefusedInput(f"no tmux session named {session}", where=f"socket {backend.socket}",
                           fix="boot it first; check with `live-trial backend list`", code=SESSION_GONE)
    backend.renew_lease(session)       # a step: the lease of a session started by boot holds on
    session_id = session_id or os.environ.get("SESSION_ID") or backend.get_meta(session, "session_id")
    if not session_id:
        raise RefusedInput("no session id", where="send", fix="pass --session-id or set SESSION_ID (printed by boot)")
    cwd = cwd or backend.get_meta(session, "cwd")
    config = config or backend.get_meta(session, "config_dir") or str(config_dir())

    def current() -> Path:
        """The transcript the session writes now: the CLI's sessions/<pane pid>.json names it (it moves on /clear;
        :mod:`live_trial.transcript.locator`)."""
        from live_trial.session.rules import pid_alive
        from live_trial.transcript.locator import locate_current
        from live_trial.transcript.paths import read_cli_session_status

        pid = backend.pane_pid(session)
        doc = read_cli_session_status(config, pid) if pid and pid_alive(pid) else None
        return locate_current(session_id, cwd, config, doc).path

    if timeout_s:
        return send.send_file(backend, session, Path(path), transcript_path=current(), follow=current,
                              timeout_s=timeout_s)
    return send.send_file(backend, session, Path(path), transcript_path=current(), follow=current)


# ---------------------------------------------------------------- backend

def cmd_backend(args) -> int:
    """``backend <verb>`` and ``backend --self-test``."""
    if args.self_test:
        return self_test()
    if not args.verb:
        print("backend: give a VERB or --self-test (see --help)", file=sys.stderr)
        return int(ExitCode.USAGE)
    from live_trial.session.backend import Backend

    backend = Backend(args.socket)
    verb = args.verb
    if verb in ("paste-file", "send-keys", "send-line", "answer-gate"):
        backend.renew_lease(args.session)   # a step by hand: the session's lease holds on
    if verb == "paste-file":
        buf = backend.paste_file(args.session, args.file)
        print(f"PASTED: {args.session} {Path(args.file).name} (buffer {buf}, deleted)")
    elif verb == "send-keys":
        backend.send_keys(args.session, *args.keys)
        print(f"SENT: {args.session} {' '.join(args.keys)}")
    elif verb == "send-line":
        backend.send_line(args.session, args.text)
        print(f"SENT: {args.session} line + Enter")
    elif verb == "nudge":
        from live_trial.trial.nudge import nudge_by_hand, why_unreachable

        try:
            sent = nudge_by_hand(args.workdir.resolve(), args.session,
                                 reachable=lambda: why_unreachable(backend, args.session),
                                 deliver=lambda path: deliver_file(backend, args.session, path))
        except LiveTrialError as exc:
            if isinstance(exc, RefusedInput):
                raise
            return _print_failure(exc, args)
        print(f"NUDGED: {args.session} {sent.path.name} ({sent.n} of at most {sent.nudge_max}; counted in "
              "trial-state.json)")
    elif verb == "answer-gate":
        from live_trial.session.send import answer_gate

        done = answer_gate(backend, args.session, args.response)
        print(f"ANSWERED: {args.session} {done.kind} -> {done.label!r} ({' '.join(done.keys)})")
    elif verb == "has-session":
        if not backend.has_session(args.session):
            print(f"GONE: {args.session}")
            return ExitCode.FAIL
        if not backend.pane_alive(args.session):
            print(f"DEAD: {args.session} (the CLI exited, status {backend.pane_dead_status(args.session)})")
            return ExitCode.FAIL
        print(f"ALIVE: {args.session}")
    elif verb == "capture-pane":
        sys.stdout.write(backend.capture(args.session, scrollback=args.scrollback) + "\n")
    elif verb == "kill-session":
        workdir = backend.get_meta(args.session, "workdir")      # a session boot started for a prepared workdir
        killed = backend.kill_session(args.session)
        print(f"KILLED: {args.session}" if killed else f"GONE: {args.session} (nothing to kill)")
        if workdir:
            from live_trial.trial.byhand import release_copy

            removed, kept = release_copy(Path(workdir))
            if removed or kept:
                print(f"removed the trial's copy {removed}" if removed else kept)
    elif verb == "reap":
        reaped = backend.reap()
        print("REAPED: " + (", ".join(reaped) if reaped else "none"))
    elif verb == "list":
        import time

        from live_trial.session.rules import Lease, owner_alive

        rows = {r.session: r for r in backend.panes() if r.session.startswith("lt-")}
        for name in sorted(rows):
            r = rows[name]
            lease = Lease.parse(r.lease)
            held = (f"\tlease {max(0, math.ceil(lease.expires - time.time()))} s left of {int(lease.ttl_s)}"
                    if lease else "")          # rounded up: "0 s left" only once the lease ran out
            print(f"{name}\t{'dead' if r.dead else 'alive'}\towner {r.owner or '-'} "
                  f"({'alive' if r.owner and owner_alive(r.owner) else 'gone'}){held}")
        if not rows:
            print("(no lt-* sessions)")
    return int(ExitCode.OK)


def self_test() -> int:
    """Offline checks of session-name validation, the denylist, buffer names and key checks (no tmux)."""
    from live_trial.session import rules as b

    checks: list[tuple[str, bool]] = []

    def refused(fn, *a) -> bool:
        try:
            fn(*a)
        except RefusedInput:
            return True
        return False

    good = "lt-20261130T101500-a1b2-greet"
    checks.append(("valid session name accepted", b.validate_session_name(good) == good))
    for bad in ("", "lt-", "greet", "lt-20261130T101500-a1b2-", "lt-20261130T101500-a1b2-Greet",
                "lt-20261130T101500-a1b2-a;b", "lt-20261130T101500-a1b2-a b", "=lt-20261130T101500-a1b2-a",
                "lt-20261130T101500-a1b2-a:0", "lt-2026113T101500-a1b2-a", "lt-20261130T101500-a1b2-" + "a" * 41,
                "lt-20261130T101500-a1b2-a\n"):
        checks.append((f"bad session name {bad!r} refused", refused(b.validate_session_name, bad)))
    for target in ("run-skill-live-trial", "harness-creator:run-skill-live-trial", "x:run-skill-iter-improve",
                   "run-skill-iter-improve", "p:Run-Skill-Live-Trial"):
        checks.append((f"denylisted target {target!r} refused", refused(b.check_target_allowed, target)))
    for target in ("hello:greet", "greet", "p:run-skill-live-trial-helper"):
        checks.append((f"target {target!r} allowed", not refused(b.check_target_allowed, target)))
    name = b.buffer_name(good, "/tmp/x/task.md")
    checks.append(("buffer name deterministic", name == b.buffer_name(good, "/tmp/x/task.md")))
    checks.append(("buffer name fixed length and safe",
                   len(name) == len(b.BUFFER_PREFIX) + b.BUFFER_HEX and name.replace("-", "").isalnum()))
    checks.append(("buffer name differs per session", name != b.buffer_name(good + "x", "/tmp/x/task.md")))
    checks.append(("buffer name differs per file", name != b.buffer_name(good, "/tmp/x/task2.md")))
    checks.append(("injection in path stays out of the buffer name",
                   b.buffer_name(good, "/tmp/a;kill-server").startswith(b.BUFFER_PREFIX)))
    checks.append(("send-keys refuses text", refused(b.check_keys, ["rm -rf /tmp/x"])))
    checks.append(("send-keys takes Down Enter", b.check_keys(["Down", "Enter"]) == ["Down", "Enter"]))
    checks.append(("bad socket refused", refused(b.validate_socket_name, "a/b")))
    failed = [label for label, ok in checks if not ok]
    if failed:
        print(f"SELF_TEST: FAIL ({len(failed)} of {len(checks)}): " + "; ".join(failed))
        return ExitCode.FAIL
    print(f"SELF_TEST: ok ({len(checks)} checks: session names, denylist, buffer names, keys)")
    return ExitCode.OK
