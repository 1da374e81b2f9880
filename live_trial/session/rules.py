"""Pure rules of the backend, usable offline (``backend --self-test``): session and socket names, the
target denylist, paste-buffer names, allowed keys, tmux argv escaping, and owner-process checks.
Re-exported by :mod:`live_trial.session.backend`; no tmux here.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from live_trial.clock import iso_z
from live_trial.errors import RefusedInput

DEFAULT_SOCKET = "live-trial"
SOCKET_ENV = "LIVE_TRIAL_SOCKET"
OWNER_ENV = "LIVE_TRIAL_OWNER_PID"
BUFFER_PREFIX = "lt-buf-"
BUFFER_HEX = 32              # buffer names are BUFFER_PREFIX + 32 hex digits: fixed length, [a-z0-9-] only

# Seed 001 "被験 skill denylist": these cannot be trial targets under any plugin prefix.
DENY_TARGET_SKILLS = ("run-skill-live-trial", "run-skill-iter-improve")

SESSION_RE = re.compile(r"^lt-[0-9]{8}T[0-9]{6}-[0-9a-f]{4}-[a-z0-9-]{1,40}$")
SOCKET_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# Keys send_keys accepts: tmux key names for gate answers and dialog moves, or 1-3 plain characters.
NAMED_KEYS = frozenset({"Enter", "Escape", "Up", "Down", "Left", "Right", "Tab", "BTab", "Space", "BSpace",
                        "Home", "End", "C-c", "C-u"})
SHORT_KEY_RE = re.compile(r"^[A-Za-z0-9 .,:;!?/_+=-]{1,3}$")

# ---------------------------------------------------------------- validation (pure, used offline too)

def validate_session_name(name: str) -> str:
    """Return ``name`` when it is ``lt-<YYYYMMDDTHHMMSS>-<4 hex>-<slug [a-z0-9-]{1,40}>``.

    Raises :class:`RefusedInput` (exit 2) otherwise, before any tmux call (seed 001: unique session names).
    """
    if not isinstance(name, str) or not SESSION_RE.fullmatch(name):
        raise RefusedInput(f"bad session name {name!r}", where="session",
                           fix="use lt-<run-id>-<slug>, e.g. lt-20261130T101500-a1b2-greet "
                               "(run id YYYYMMDDTHHMMSS-4hex, slug [a-z0-9-] up to 40)", code="bad_session_name")
    return name


def validate_socket_name(socket: str) -> str:
    """Return ``socket`` when it is 1-64 characters of ``[A-Za-z0-9_.-]``; else :class:`RefusedInput`."""
    if not isinstance(socket, str) or not SOCKET_RE.fullmatch(socket):
        raise RefusedInput(f"bad tmux socket name {socket!r}", where=f"--socket / {SOCKET_ENV}",
                           fix="use letters, digits, '_', '.', '-' (at most 64)", code="bad_socket")
    return socket


def resolve_socket(explicit: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Socket name: explicit argument > env ``LIVE_TRIAL_SOCKET`` > ``live-trial``; validated."""
    env = os.environ if env is None else env
    return validate_socket_name(explicit or env.get(SOCKET_ENV) or DEFAULT_SOCKET)


def check_target_allowed(target: str) -> None:
    """Refuse a denylisted trial target (seed 001 denylist): ``run-skill-live-trial`` and
    ``run-skill-iter-improve`` under any plugin prefix (``p:run-skill-live-trial``, ``a:b:…``) or path form.

    Returns None when allowed; raises :class:`RefusedInput` (exit 2, code ``denied_target``).
    """
    skill = re.split(r"[:/\\]", str(target).strip())[-1].strip().lower()
    if skill in DENY_TARGET_SKILLS:
        raise RefusedInput(f"{skill} cannot be a trial target (it would start trials inside a trial)",
                           where=f"target {target!r}",
                           fix="pick another skill; the denylist is " + ", ".join(DENY_TARGET_SKILLS),
                           code="denied_target")


def buffer_name(session: str, path: str | os.PathLike[str]) -> str:
    """Deterministic, fixed-length, injection-safe paste buffer name for (session, file path).

    ``lt-buf-`` + the first 32 hex digits of sha256(session NUL absolute path): only ``[a-z0-9-]``,
    so nothing in either input reaches tmux's command parser (seed 001 absolute rule 2).
    """
    digest = hashlib.sha256(f"{session}\0{os.path.abspath(os.fspath(path))}".encode()).hexdigest()
    return BUFFER_PREFIX + digest[:BUFFER_HEX]


def check_keys(keys: Sequence[str]) -> list[str]:
    """Return ``keys`` when each is a known key name or 1-3 plain characters; else :class:`RefusedInput`.

    send-keys is for short fixed keys only (seed 001 absolute rule 2); text goes through paste_file.
    """
    if not keys:
        raise RefusedInput("no keys given", where="send-keys", fix="name keys like Enter, Down, Escape")
    for key in keys:
        if key not in NAMED_KEYS and not SHORT_KEY_RE.fullmatch(key):
            raise RefusedInput(f"send-keys only sends short fixed keys, got {key[:40]!r}", where="send-keys",
                               fix="use " + ", ".join(sorted(NAMED_KEYS)) + " or 1-3 plain characters; "
                                   "send text with paste-file", code="bad_keys")
    return list(keys)


# ---------------------------------------------------------------- tmux argv escaping

class CommandSeparator(str):
    """Type of :data:`SEP`, the one argv element :func:`tmux_args` passes to tmux as a bare ``;``."""

    __slots__ = ()


#: Ends one tmux command and starts the next in a chained argv (``[..., SEP, "set-option", ...]``). A plain
#: ``";"`` string is data and is escaped like any other argument.
SEP = CommandSeparator(";")


def escape_arg(arg: str) -> str:
    r"""``arg`` written so that tmux's argv parser hands ``arg`` back unchanged to the command.

    tmux (``cmd_parse_from_arguments``) ends a command at an argv element whose last character is ``;``
    and drops that ``;``; an element ending in ``\;`` keeps a literal ``;`` there instead. So a final
    ``;`` becomes ``\;`` and nothing else changes: ``"abc;"`` -> ``"abc\;"``, ``";"`` -> ``"\;"``,
    ``"a;b;"`` -> ``"a;b\;"``, ``"x\;"`` -> ``"x\\;"`` (tmux turns that back into ``x\;``). Checked on
    tmux 3.3a with ``send-keys -l``. Format expansion (``#{…}``, ``#(…)``) done later by some commands
    (``load-buffer`` path, ``new-session -c``) is :func:`format_literal`'s job. Returns a str; raises nothing.
    """
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def format_literal(text: str) -> str:
    """``text`` for a tmux argument that tmux format-expands (the ``load-buffer`` file, the ``new-session -c``
    folder): every ``#`` doubled, so ``#{session_name}`` stays text, ``#(cmd)`` is never run and ``##`` stays
    ``##``. Checked on tmux 3.3a: a path holding ``#(touch FILE)`` ran the command without this. Raises nothing."""
    return text.replace("#", "##")


def tmux_args(args: Sequence[object]) -> list[str]:
    """The argv elements to give tmux: :data:`SEP` stays a bare ``;`` (chains commands), every other
    element becomes ``str(element)`` escaped by :func:`escape_arg`, so data never ends a command."""
    return [";" if isinstance(a, CommandSeparator) else escape_arg(str(a)) for a in args]


# ---------------------------------------------------------------- process helpers

def proc_start_ticks(pid: int) -> str | None:
    """Start time of ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22), or None when it is gone.
    With the pid it names one process: pids are reused (pid_max is often 32768)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def pid_alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return True


def owner_token(pid: int) -> str:
    """``<pid>:<start ticks>`` so a reused pid is not taken for the owner (plain ``<pid>`` off Linux)."""
    ticks = proc_start_ticks(pid)
    return f"{pid}:{ticks}" if ticks else str(pid)


def owner_alive(token: str) -> bool:
    """True when the process named by an owner token still runs (same pid and, when known, same start)."""
    pid_s, _, ticks = (token or "").partition(":")
    if not pid_s.isdigit():
        return False
    pid = int(pid_s)
    if not pid_alive(pid):
        return False
    return not ticks or proc_start_ticks(pid) == ticks


def default_owner_pid(env: Mapping[str, str] | None = None) -> int:
    """The process a stand-alone ``boot`` records as owner.

    env ``LIVE_TRIAL_OWNER_PID`` when set; inside Claude Code (``CLAUDECODE`` set) the nearest ancestor
    whose command is ``claude`` (the agent session driving the steps outlives each Bash call); else
    the parent process (the user's shell).
    """
    env = os.environ if env is None else env
    raw = env.get(OWNER_ENV, "")
    if raw.isdigit():
        return int(raw)
    ppid = os.getppid()
    if env.get("CLAUDECODE"):
        pid = ppid
        for _ in range(32):
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                break
            if "claude" in comm.lower():
                return pid
            pid = int(stat[1])
            if pid <= 1:
                break
    return ppid


# ---------------------------------------------------------------- what backend calls return

@dataclass(frozen=True)
class TmuxResult:
    """One tmux invocation: the argv run, its return code, stdout/stderr lines and wall time in seconds."""

    argv: tuple[str, ...]
    returncode: int
    stdout: list[str]
    stderr: list[str]
    duration_s: float

    @property
    def ok(self) -> bool:
        """True when tmux exited 0."""
        return self.returncode == 0


@dataclass(frozen=True)
class SessionInfo:
    """A created session: its name, tmux session id ($N), pane id (%N) and the pid of the pane's process."""

    name: str
    session_id: str
    pane_id: str
    pane_pid: int


# ---------------------------------------------------------------- which sessions reap may remove

REAP_GRACE_S = 30.0          # a session without an owner option younger than this may be mid-creation


@dataclass(frozen=True)
class PaneRow:
    """One row of the exact pane listing (``list-panes -a``): session, pane id, pid, dead flag and exit status,
    owner token, session creation time (epoch seconds)."""

    session: str
    pane_id: str
    pane_pid: int
    dead: bool
    dead_status: int | None
    owner: str
    created: int
    lease: str = ""


def pane_row(line: str) -> "PaneRow | None":
    """One line of ``list-panes -F`` in the backend's format (session, pane id, pane pid, dead flag, dead status,
    owner token, creation epoch, lease; fields joined by ``|``, the lease absent in older listings) as a
    :class:`PaneRow`; None for a line that is not one."""
    parts = line.split("|")
    if len(parts) not in (7, 8):
        return None
    session, pane_id, pid, dead, status, owner, created, lease = (parts + [""])[:8]
    return PaneRow(session=session, pane_id=pane_id, pane_pid=int(pid) if pid.isdigit() else 0, dead=dead == "1",
                   dead_status=int(status) if status.lstrip("-").isdigit() else None, owner=owner,
                   created=int(created) if created.isdigit() else 0, lease=lease)


@dataclass(frozen=True)
class Lease:
    """The lease of a session started by ``boot`` (README "The steps, one by one"): it holds until ``expires``
    (epoch seconds) and each step renews it for ``ttl_s`` more seconds. Stored on the session as :meth:`text`."""

    expires: float
    ttl_s: float

    def renewed(self, now: float) -> "Lease":
        """The same lease, held ``ttl_s`` seconds from ``now``."""
        return Lease(expires=now + self.ttl_s, ttl_s=self.ttl_s)

    def text(self) -> str:
        """``<expires epoch s>:<ttl s>`` (whole seconds), the value of the session option that holds the lease."""
        return f"{int(self.expires)}:{int(self.ttl_s)}"

    @staticmethod
    def renewal(text: str | None, now: float) -> "Lease | None":
        """The lease the session option value ``text`` holds, renewed from ``now``; None when it holds none."""
        lease = Lease.parse(text)
        return lease.renewed(now) if lease else None

    @staticmethod
    def parse(text: str | None) -> "Lease | None":
        """The lease a session option value written by :meth:`text` holds; None when there is none or it is not one
        (a session started by ``run`` has none: its harness owns it)."""
        expires, sep, ttl = (text or "").partition(":")
        if not sep or not expires.isdigit() or not ttl.isdigit():
            return None
        return Lease(expires=float(expires), ttl_s=float(ttl))


@dataclass(frozen=True)
class ReapDecision:
    """Whether ``reap`` removes ``session`` and why, in words a person reads (``reap --expired`` prints them)."""

    session: str
    remove: bool
    why: str


def _when(epoch: float) -> str:
    return iso_z(epoch, timespec="seconds")


def reap_decisions(rows: Sequence[PaneRow], now: float, *, expired: bool = False) -> list[ReapDecision]:
    """What ``reap`` does with each ``lt-*`` session of ``rows`` (each once, in listing order), and why.

    The rules, in order (README "The steps, one by one", "the session's lease"): with ``expired`` (``reap
    --expired``), a session whose lease ran out (no step renewed it for its time-to-live) is removed, even while its
    owner still runs; a session whose owner process lives is kept (a trial's harness, or the shell or process that
    owns a session started by ``boot``); a session whose lease still holds is kept, whoever its owner was; a session
    with no owner and no lease is kept while younger than :data:`REAP_GRACE_S` (it may be mid-creation); every other
    session is removed: its harness or owner is gone and no lease holds it. ``now``: epoch seconds. Pure."""
    out: list[ReapDecision] = []
    seen: set[str] = set()
    for row in rows:
        if row.session in seen or not SESSION_RE.fullmatch(row.session):
            continue
        seen.add(row.session)
        lease = Lease.parse(row.lease)
        owner = row.owner.partition(":")[0] or "?"
        alive = bool(row.owner) and owner_alive(row.owner)
        if expired and lease is not None and now >= lease.expires:
            out.append(ReapDecision(row.session, True, f"its lease ran out at {_when(lease.expires)}: no step renewed "
                                    f"it for {int(lease.ttl_s)} s" + (f" (owner pid {owner} still runs)" if alive
                                                                       else f" and its owner pid {owner} is gone")))
        elif alive:
            out.append(ReapDecision(row.session, False, f"{'its owner' if lease else 'its harness'} pid {owner} runs"))
        elif lease is not None and now < lease.expires:
            out.append(ReapDecision(row.session, False, f"its lease holds until {_when(lease.expires)} (owner pid "
                                                        f"{owner} is gone; each step renews it)"))
        elif not row.owner and lease is None and now - row.created < REAP_GRACE_S:
            out.append(ReapDecision(row.session, False, "it is being created (no owner recorded yet)"))
        elif lease is not None:
            out.append(ReapDecision(row.session, True, f"its owner pid {owner} is gone and its lease ran out at "
                                                       f"{_when(lease.expires)}"))
        else:
            out.append(ReapDecision(row.session, True, f"its harness pid {owner} is gone" if row.owner
                                    else "no harness owns it"))
    return out


def sessions_to_reap(rows: Sequence[PaneRow], now: float, *, expired: bool = False) -> list[str]:
    """The ``lt-*`` sessions of ``rows`` that ``reap`` removes, each once, in listing order (:func:`reap_decisions`).

    A session whose owner is alive or whose lease holds is never named (parallel trials and sessions driven by hand
    are safe); one with no owner option only when it is older than :data:`REAP_GRACE_S` (it may be mid-creation).
    ``now``: epoch seconds. Raises nothing."""
    return [d.session for d in reap_decisions(rows, now, expired=expired) if d.remove]
