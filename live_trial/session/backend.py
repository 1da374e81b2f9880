r"""The only code that talks to tmux (ARCHITECTURE invariant 2; seed 001 "live-trial-backend.py").

Every tmux command goes through :meth:`Backend._run` (one process boundary; it calls libtmux's ``Server.cmd``): argv
list in, :class:`TmuxResult` out. The socket flag (``-L``, default ``live-trial``, env ``LIVE_TRIAL_SOCKET``) and
``-f /dev/null`` (no user tmux.conf: a user's extended-keys / prefix / paste settings cannot change what the CLI
receives) are added there and nowhere else. There too every argument is escaped for tmux's argv parser
(:func:`~live_trial.session.rules.tmux_args`): a final ``;`` would end the command, so text, paths and cwds ending in
``;`` are sent as ``…\;``; commands are chained only with :data:`SEP`.

Targets are always exact: sessions as ``=NAME``; panes by the pane id (``%N``) read back from an exact listing
(``send-keys -t =NAME`` fails with "can't find pane: =NAME" on tmux 3.3a, and a bare ``-t NAME`` matches by prefix: with
only ``lt-…-a12`` alive, ``-t lt-…-a1`` would hit it).

Environment of the pane: the ``new-session`` client runs with exactly the child environment, and every variable name of
it and of the server's global environment is put in the server's ``update-environment`` list, so the session environment
equals the child environment: names present are copied, names absent are removed (tmux(1) update-environment). No value
ever appears on a command line or in a file but the trial's tag (``new-session -e LIVE_TRIAL_SESSION=<name>``,
:mod:`~live_trial.session.proctree`). Global options are set only on a server a harness started (it marks it
``@live_trial_server``); a server without that mark (a person's own tmux) is refused, its options untouched.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from typing import Mapping, Sequence

import libtmux
from libtmux import exc as libtmux_exc

from live_trial.errors import SESSION_GONE, Blocked, ExitCode, LiveTrialError, RefusedInput
from live_trial.session import containment, proctree, rules
from live_trial.session.rules import SEP, Lease, PaneRow, ReapDecision, SessionInfo, TmuxResult
from live_trial.stop_reasons import StopReason

PID_LOG_ENV = "LIVE_TRIAL_PID_LOG"
NO_CONFIG = "/dev/null"
OWNER_OPTION = "@live_trial_owner"
LEASE_OPTION = "@live_trial_lease"
SERVER_OPTION = "@live_trial_server"
META_PREFIX = "@lt_"
MIN_WIDTH, MIN_HEIGHT = 200, 50
HISTORY_LIMIT = 100_000
TMUX_TIMEOUT_S = 30.0
SERVER_RACE_RETRIES = 3
# a server a harness is starting: no option and no session yet (server_started_here): waited for, asked every 50 ms
STARTING_SERVER_WAIT_S, STARTING_SERVER_POLL_S = 2.0, 0.05
PANE_GRACE_S = 5.0        # claude's own exit after SIGHUP / SIGTERM (it ends its background shells) before SIGKILL
SEND_LINE_MAX = 500


class TmuxError(LiveTrialError):
    """A tmux command failed for a reason other than "no such session" (exit 3, like a missing tmux)."""

    status = "BLOCKED"
    exit_code = ExitCode.BLOCKED
    code = StopReason.TMUX_ERROR


# ---------------------------------------------------------------- the backend

class Backend:
    """tmux on the harness socket. Every method validates the session name before any tmux call."""

    def __init__(self, socket: str | None = None, *, tmux_bin: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.socket = rules.resolve_socket(socket, env)
        self._tmux_bin = tmux_bin
        self._server = libtmux.Server(socket_name=self.socket, config_file=NO_CONFIG, tmux_bin=tmux_bin)
        #: Finds and ends a session's processes (:mod:`live_trial.session.proctree`; a fake in unit tests).
        self.procs = proctree
        #: Ends a session's container by its name (:mod:`live_trial.session.containment`; a fake in unit tests).
        self.containers = containment

    # -- the one process boundary
    def _tmux(self) -> str:
        found = self._tmux_bin = self._tmux_bin or shutil.which("tmux")     # one PATH search per backend
        if not found:
            raise Blocked("tmux not found", where="PATH", fix="install tmux (apt-get install tmux / brew install tmux)",
                          code=StopReason.TMUX_MISSING)
        return found

    def _run(self, *args: str, env: Mapping[str, str] | None = None) -> TmuxResult:
        r"""Run ``tmux -f /dev/null -L <socket> <args>`` and return a :class:`TmuxResult`.

        ``args`` go through :func:`tmux_args` first: :data:`SEP` chains two commands, every other element is data,
        and one ending in ``;`` is sent as ``…\;`` so tmux does not take it for the end of the command (a plain
        ``";"`` string is data too). ``TmuxResult.argv`` holds the escaped argv. Without ``env`` the command goes
        through libtmux (``Server.cmd`` → ``common.tmux_cmd``). With ``env`` (only ``new-session``: libtmux's
        ``tmux_cmd`` cannot pass an environment) the same argv runs through :mod:`subprocess` with exactly that client
        environment. Raises Blocked when tmux is missing, TmuxError when tmux does not answer within 30 s (subprocess
        path). Retries (up to 3) a command that met a tmux server in the middle of exiting."""
        argv = rules.tmux_args(args)
        for attempt in range(SERVER_RACE_RETRIES + 1):
            result = self._run_once(*argv, env=env)
            # The last session's kill makes the server exit; a client connecting in that instant gets
            # "server exited unexpectedly" (seen on tmux 3.3a). Nothing ran: try again.
            if result.ok or not any("server exited unexpectedly" in e or "lost server" in e for e in result.stderr):
                return result
            time.sleep(0.1 * (attempt + 1))
        return result

    def _run_once(self, *args: str, env: Mapping[str, str] | None = None) -> TmuxResult:
        """One tmux run of ``args``, already escaped by :meth:`_run` (call that, not this)."""
        tmux = self._tmux()
        started = time.monotonic()
        if env is None:
            try:
                proc = self._server.cmd(*args)
            except libtmux_exc.TmuxCommandNotFound:
                raise Blocked("tmux not found", where="PATH", fix="install tmux",
                              code=StopReason.TMUX_MISSING) from None
            return TmuxResult(argv=tuple(str(a) for a in proc.cmd), returncode=int(proc.returncode or 0),
                              stdout=list(proc.stdout), stderr=list(proc.stderr),
                              duration_s=time.monotonic() - started)
        argv = (tmux, f"-f{NO_CONFIG}", f"-L{self.socket}", *args)
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True, encoding="utf-8", errors="replace",
                                  timeout=TMUX_TIMEOUT_S, env=dict(env))
        except FileNotFoundError:
            raise Blocked("tmux not found", where=argv[0], fix="install tmux", code=StopReason.TMUX_MISSING) from None
        except subprocess.TimeoutExpired:
            raise TmuxError(f"tmux did not answer within {TMUX_TIMEOUT_S:.0f}s", where=args[0] if args else "tmux",
                            fix=f"check the tmux server on socket {self.socket}") from None
        out = done.stdout.split("\n")
        while out and out[-1] == "":
            out.pop()
        return TmuxResult(argv=argv, returncode=done.returncode, stdout=out,
                          stderr=[line for line in done.stderr.split("\n") if line],
                          duration_s=time.monotonic() - started)

    def _check(self, result: TmuxResult, what: str) -> TmuxResult:
        if not result.ok:
            raise TmuxError(f"tmux {what} failed: {' '.join(result.stderr)[:300] or 'exit ' + str(result.returncode)}",
                            where=f"socket {self.socket}", fix="see the tmux message")
        return result

    @staticmethod
    def _gone(result: TmuxResult) -> bool:
        # "no current target": list-panes -a on a server whose last session just went (seen on tmux 3.3a under load)
        text = " ".join(result.stderr).lower()
        return any(m in text for m in ("can't find", "no server running", "no such file", "error connecting",
                                       "server exited", "no current target"))

    def require_tmux(self) -> str:
        """Path of the tmux binary; raises Blocked (exit 3, seed 001: tmux missing is BLOCKED) when absent."""
        return self._tmux()

    def server_started_here(self, *, wait_s: float = STARTING_SERVER_WAIT_S) -> bool | None:
        """True when the socket's server was started by a harness (it carries ``@live_trial_server``), False when
        another server runs there (a person's own tmux), None when none runs. Raises Blocked without tmux. A server
        with neither the option nor a session is being started by a harness whose first command sets both (two trials
        at once, under load): asked again for up to ``wait_s`` s before it counts as another's; one with sessions is
        asked for the option once more (its first answer may predate them)."""
        deadline, seen_sessions = time.monotonic() + wait_s, False
        while True:
            result = self._run("show-options", "-gqv", SERVER_OPTION)
            if not result.ok:
                return None if self._gone(result) else False
            if result.stdout and result.stdout[0].strip() == "1":
                return True
            if seen_sessions or time.monotonic() >= deadline:     # sessions and still no mark after them: another's
                return False
            sessions = self._run("list-sessions", "-F", "#{session_name}")
            if not sessions.ok and self._gone(sessions):
                return None
            # each client's commands run in turn: the mark's question may predate a starting harness's mark
            seen_sessions = sessions.ok and any(line.strip() for line in sessions.stdout)
            time.sleep(0 if seen_sessions else STARTING_SERVER_POLL_S)

    def refuse_foreign_server(self) -> None:
        """Raise :class:`RefusedInput` (exit 2, ``foreign_tmux_server``) when a server no harness started runs on the
        socket; quiet when none runs or tmux is missing (reported later, as BLOCKED)."""
        try:
            ours = self.server_started_here()
        except Blocked:
            return
        if ours is False:
            raise RefusedInput(f"the tmux server on socket {self.socket} was not started by live-trial",
                               where=f"--socket {self.socket}", code=StopReason.FOREIGN_TMUX_SERVER,
                               fix="use another --socket: a trial never changes the options of a tmux server it "
                                   "did not start")

    def set_meta(self, name: str, **values: str) -> None:
        """Store facts about a session as tmux user options ``@lt_<key>`` (cwd, session_id, config_dir, model)
        so later steps (``send``, ``poll``) can find them from the session name. Paths and ids only."""
        rules.validate_session_name(name)
        args: list[str] = []
        for key, value in values.items():
            if not re.fullmatch(r"[a-z_]{1,30}", key):
                raise RefusedInput(f"bad meta key {key!r}", where=name)
            args += [SEP] if args else []
            args += ["set-option", "-t", f"={name}:", f"{META_PREFIX}{key}", str(value)]
        if args:
            self._check(self._run(*args), "set-option")

    def set_owner(self, name: str, owner_pid: int) -> None:
        """Record ``owner_pid`` as the harness that drives session ``name`` (``run --resume`` takes over a
        session whose harness died, so reap must not remove it). Raises TmuxError when the session is gone."""
        rules.validate_session_name(name)
        owner = rules.owner_token(owner_pid)
        self._check(self._run("set-option", "-t", f"={name}:", OWNER_OPTION, owner), "set-option")

    def renew_lease(self, name: str) -> Lease | None:
        """Renew the lease of a session started by ``boot`` for its time-to-live from now, as each step does (README
        "The steps, one by one"). Returns the new lease; None (nothing changed) for a session without one or gone."""
        lease = Lease.renewal(row.lease, time.time()) if (row := self.pane(name)) else None
        return lease if lease and self._run("set-option", "-t", f"={name}:", LEASE_OPTION, lease.text()).ok else None

    def get_meta(self, name: str, key: str) -> str | None:
        """A value stored with :meth:`set_meta`, or None when unset or the session is gone."""
        rules.validate_session_name(name)
        result = self._run("show-options", "-v", "-t", f"={name}:", f"{META_PREFIX}{key}")
        if not result.ok or not result.stdout:
            return None
        return result.stdout[0] or None

    def tmux_version(self) -> str | None:
        """``"3.3a"`` style version of the tmux in use, or None when tmux is missing."""
        try:
            proc = subprocess.run([self._tmux(), "-V"], capture_output=True, text=True, timeout=10)
        except (Blocked, OSError, subprocess.TimeoutExpired):
            return None
        match = re.search(r"tmux\s+(\S+)", proc.stdout)
        return match.group(1) if match else None

    # -- listing
    def panes(self) -> list[PaneRow]:
        """Every pane on the socket, with its session, id, pid, dead flag and status, owner, creation time and lease."""
        fmt = "|".join(["#{session_name}", "#{pane_id}", "#{pane_pid}", "#{pane_dead}", "#{pane_dead_status}",
                         "#{" + OWNER_OPTION + "}", "#{session_created}", "#{" + LEASE_OPTION + "}"])
        result = self._run("list-panes", "-a", "-F", fmt)
        if not result.ok:
            if self._gone(result):
                return []
            self._check(result, "list-panes")
        return [row for row in map(rules.pane_row, result.stdout) if row is not None]

    def pane(self, name: str) -> PaneRow | None:
        """The pane of exactly this session (id, pid, dead flag, …) in one tmux call; None when the session is gone."""
        rules.validate_session_name(name)
        for row in self.panes():
            if row.session == name:  # exact string equality, never a prefix
                return row
        return None

    def _pane_id(self, name: str) -> str:
        row = self.pane(name)
        if row is None:
            raise RefusedInput(f"no tmux session named {name}", where=f"socket {self.socket}",
                               fix="check the name with `live-trial backend list`", code=SESSION_GONE)
        return row.pane_id

    def list_sessions(self) -> list[str]:
        """Names of the ``lt-*`` sessions on the socket, sorted."""
        return sorted({row.session for row in self.panes() if row.session.startswith("lt-")})

    def has_session(self, name: str) -> bool:
        """True when a session with exactly this name exists (``has-session -t =NAME``)."""
        rules.validate_session_name(name)
        return self._run("has-session", "-t", f"={name}").ok

    def pane_alive(self, name: str) -> bool:
        """True when the session exists and its pane's process has not exited (``#{pane_dead}`` is 0)."""
        row = self.pane(name)
        return row is not None and not row.dead

    def pane_pid(self, name: str) -> int | None:
        """Pid of the process the pane runs (the claude process), or None when the session is gone."""
        row = self.pane(name)
        return row.pane_pid if row else None

    def pane_dead_status(self, name: str) -> int | None:
        """Exit status of the pane's process once it has exited, else None."""
        row = self.pane(name)
        return row.dead_status if row and row.dead else None

    # -- creation
    def new_session(self, name: str, argv: Sequence[str], *, cwd: str | os.PathLike[str], env: Mapping[str, str],
                    owner_pid: int | None = None, width: int = MIN_WIDTH, height: int = MIN_HEIGHT,
                    lease: Lease | None = None) -> SessionInfo:
        """Start ``argv`` as the pane's own command (no shell: tmux execs a multi-word command directly).

        ``env`` is the complete environment of the process. The window keeps the pane after the process exits
        (remain-on-exit) so its last lines and ``#{pane_dead}`` can be read. The owner token of ``owner_pid``
        (default: this process) is stored in the session option ``@live_trial_owner``, a ``lease`` in
        ``@live_trial_lease`` (same call). The pane pid and its start ticks are appended to ``$LIVE_TRIAL_PID_LOG``
        when set. Raises RefusedInput (bad name, existing session, size below 200x50, argv of one word), Blocked
        (tmux missing), TmuxError."""
        rules.validate_session_name(name)
        if width < MIN_WIDTH or height < MIN_HEIGHT:
            raise RefusedInput(f"pane size {width}x{height} is below {MIN_WIDTH}x{MIN_HEIGHT}", where=name,
                               fix="dialogs need the room to draw every option")
        argv = [str(a) for a in argv]
        if len(argv) < 2:
            raise RefusedInput("argv must have at least two words (a single word would run through sh -c)",
                               where=name, fix="pass the program and its arguments as a list")
        self.refuse_foreign_server()
        if self.has_session(name):
            raise RefusedInput(f"tmux session {name} already exists", where=f"socket {self.socket}",
                               fix="use a new run id, or kill the old session", code=StopReason.SESSION_EXISTS)
        env = {k: v for k, v in env.items() if k and "=" not in k and "\0" not in k + v and k != proctree.TAG_ENV}
        names = set(env) | self._global_env_names()
        missing = sorted(names - self._update_environment())
        owner = rules.owner_token(owner_pid if owner_pid is not None else os.getpid())
        fmt = "#{session_id}|#{pane_id}|#{pane_pid}"
        # The server is a harness's own (checked above), or this command starts it: its globals are ours to set,
        # again each time (a server that exited in between is started by this very command).
        args: list[str] = ["set-option", "-g", SERVER_OPTION, "1", SEP, "set-option", "-gw", "remain-on-exit", "on",
                           SEP, "set-option", "-g", "history-limit", str(HISTORY_LIMIT), SEP]
        if missing:
            args += ["set-option", "-ga", "update-environment", " ".join(missing), SEP]
        args += ["new-session", "-d", "-s", name, "-x", str(width), "-y", str(height),
                 "-c", rules.format_literal(os.fspath(cwd)), "-e", f"{proctree.TAG_ENV}={name}",
                 "-P", "-F", fmt, *argv, SEP, "set-option", "-t", f"={name}:", OWNER_OPTION, owner]
        if lease is not None:
            args += [SEP, "set-option", "-t", f"={name}:", LEASE_OPTION, lease.text()]
        result = self._run(*args, env=env)
        if not result.ok:
            if self.has_session(name):  # created, but a later command of the chain failed: leave nothing
                self.kill_session(name)
            self._check(result, "new-session")
        line = next((ln for ln in result.stdout if ln.count("|") == 2), "")
        session_id, pane_id, pid = (line.split("|") + ["", "", ""])[:3]
        if not pane_id.startswith("%") or not pid.isdigit():
            raise TmuxError("tmux new-session printed no pane id", where=name, fix=f"output: {result.stdout!r}")
        log = os.environ.get(PID_LOG_ENV)
        if log:
            with open(log, "a", encoding="utf-8") as fh:     # pid and start time: a reused pid is not ours
                fh.write(f"{pid} {rules.proc_start_ticks(int(pid)) or '-'}\n")
        return SessionInfo(name=name, session_id=session_id, pane_id=pane_id, pane_pid=int(pid))

    def _global_env_names(self) -> set[str]:
        result = self._run("show-environment", "-g")
        if not result.ok:
            return set()
        return {ln.lstrip("-").split("=", 1)[0] for ln in result.stdout if ln and not ln.startswith(" ")}

    def _update_environment(self) -> set[str]:
        result = self._run("show-options", "-gv", "update-environment")
        return {ln.strip() for ln in result.stdout} if result.ok else set()

    # -- input
    def paste_file(self, name: str, path: str | os.PathLike[str]) -> str:
        """Paste a file into the session's pane as one bracketed paste through a named buffer: ``load-buffer -b NAME
        FILE`` → ``paste-buffer -b NAME -p`` → ``delete-buffer -b NAME`` (always, in ``finally``). Never the default
        buffer, never send-keys (seed 001 absolute rule 2). Returns the buffer name. Raises RefusedInput (bad name,
        missing file, session gone)."""
        rules.validate_session_name(name)
        path = os.path.abspath(os.fspath(path))
        if not os.path.isfile(path):
            raise RefusedInput("file to paste does not exist", where=path, fix="write the task file first",
                               code="missing_file")
        pane = self._pane_id(name)
        buf = rules.buffer_name(name, path)
        try:
            self._check(self._run("load-buffer", "-b", buf, rules.format_literal(path)), "load-buffer")
            self._check(self._run("paste-buffer", "-b", buf, "-p", "-t", pane), "paste-buffer")
        finally:
            self._run("delete-buffer", "-b", buf)
        return buf

    def send_keys(self, name: str, *keys: str) -> None:
        """Send short fixed keys (``Enter``, ``Down``, ``Escape``, or 1-3 characters) to the pane."""
        keys_ok = rules.check_keys(keys)
        pane = self._pane_id(name)
        self._check(self._run("send-keys", "-t", pane, *keys_ok), "send-keys")

    def send_line(self, name: str, text: str) -> None:
        """Type one short line literally (``send-keys -l``) and press Enter: for gate answers only. ``text`` must be
        one line of printable characters, at most 500; task text goes through paste_file."""
        self.type_text(name, text)
        self._check(self._run("send-keys", "-t", self._pane_id(name), "Enter"), "send-keys Enter")

    def type_text(self, name: str, text: str) -> None:
        """Type one short line literally (``send-keys -l``) without pressing Enter: the free-text answer of a gate,
        checked on screen before it is submitted. Same limits as :meth:`send_line`; raises RefusedInput."""
        if not text or len(text) > SEND_LINE_MAX or any(ord(c) < 32 or ord(c) == 127 for c in text):
            raise RefusedInput("send-line takes one short line of printable text", where="send-line",
                               fix=f"at most {SEND_LINE_MAX} characters, no newlines; paste files with paste-file",
                               code="bad_line")
        self._check(self._run("send-keys", "-t", self._pane_id(name), "-l", text), "send-keys -l")

    # -- output
    def capture(self, name: str, scrollback: bool = False) -> str:
        """The pane's text: the visible screen, or with ``scrollback`` the whole history too. Raises RefusedInput
        (code ``session_gone``) when the session does not exist."""
        pane = self._pane_id(name)
        args = ["capture-pane", "-p", "-t", pane]
        if scrollback:
            args[2:2] = ["-S", "-", "-E", "-"]
        return "\n".join(self._check(self._run(*args), "capture-pane").stdout)

    def alternate_screen(self, name: str) -> bool | None:
        """True when the session's pane shows tmux's alternate screen (``#{alternate_on}``: the CLI's fullscreen
        renderer, whose pane keeps no scrollback), False when not, None when the session is gone."""
        row = self.pane(name)       # checks the name
        result = (self._run("display-message", "-p", "-t", row.pane_id, "#{session_name}|#{alternate_on}")
                  if row else None)
        head, _, flag = (result.stdout[0] if result and result.ok and result.stdout else "").rpartition("|")
        return flag == "1" if head == name else None

    def probe(self, name: str, pane_id: str | None = None) -> tuple[bool, str]:
        """``(alive, visible screen)`` of the session in ONE tmux call (boot's fast poll). ``pane_id``: the id
        recorded at creation (looked up exactly when None). The reply carries the pane's session name, which must
        equal ``name`` (so a reused pane id never reads another session). Returns ``(False, "")`` when the session is
        gone; ``alive`` is False once ``#{pane_dead}`` is 1."""
        rules.validate_session_name(name)
        pane = pane_id or self._pane_id(name)
        result = self._run("display-message", "-p", "-t", pane, "#{session_name}|#{pane_dead}", SEP,
                           "capture-pane", "-p", "-t", pane)
        if not result.ok or not result.stdout:
            return False, ""
        head, _, dead = result.stdout[0].rpartition("|")
        if head != name:
            return False, ""
        return dead != "1", "\n".join(result.stdout[1:])

    # -- removal
    def kill_session(self, name: str) -> bool:
        """Kill exactly this session (``kill-session -t =NAME``) and end every process it started. The pane's
        process tree is walked before the kill (its tool children run in their own sessions and would be reparented,
        then lost, once claude dies); after it, that tree and every process carrying the session's tag
        (:func:`live_trial.session.proctree.tagged`: children born meanwhile, orphans of a pane that died earlier, a
        server that is gone) are ended: SIGTERM (and SIGCONT), up to 5 s, SIGKILL; then the session's container
        (:func:`live_trial.session.containment.end_named`: an untagged process that left the tree too). Returns True
        when a session was removed, False (quietly) when it was already gone; never touches another session."""
        row = self.pane(name)
        tree = self.procs.descendants(row.pane_pid) if row is not None and not row.dead else []
        removed = False
        if row is not None:
            result = self._run("kill-session", "-t", f"={name}")
            if not result.ok and not self._gone(result):
                self._check(result, "kill-session")
            removed = result.ok
        self.procs.end(tree, find_more=lambda: self.procs.tagged(name), grace_s=PANE_GRACE_S)
        self.containers.end_named(name)
        return removed

    def reap(self, *, expired: bool = False) -> list[str]:
        """The names of the ``lt-*`` sessions :meth:`reap_with_reasons` removed."""
        return [d.session for d in self.reap_with_reasons(expired=expired) if d.remove]

    def reap_with_reasons(self, *, expired: bool = False) -> list[ReapDecision]:
        """Kill the sessions :func:`~live_trial.session.rules.reap_decisions` removes (never one whose owner lives or
        whose lease holds); return every decision with its reason (``remove`` False for one gone already)."""
        return [d if not d.remove or self.kill_session(d.session) else ReapDecision(d.session, False, "gone already")
                for d in rules.reap_decisions(self.panes(), time.time(), expired=expired)]
