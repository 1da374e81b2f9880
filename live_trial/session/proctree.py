"""The processes a trial started, found and ended as a tree, whatever they did after they started (ARCHITECTURE
invariant 6: every exit path leaves nothing running; README "Whose failure it is").

Observed on claude 2.1.197 (references/transcript-jsonl.md "Process tree"): each Bash tool's ``bash -c`` wrapper runs
in its own session (setsid, no controlling tty), so tmux's kill-session (SIGHUP to the pane) never reaches it, and a
foreground tool's processes outlive the CLI, reparented to pid 1. Two ways find them here:

- the descendants of the pane's pid (:func:`descendants`), walked through ``/proc`` BEFORE the pane dies: afterwards
  they are reparented and no longer hang under it;
- the tag every process of a trial inherits in its environment (:data:`TAG_ENV` ``=<session name>``, given to the
  pane's process at creation and to the evaluator): :func:`tagged` finds them after reparenting and setsid too, at
  any time (a resume or ``reap`` long after the harness died).

:func:`end` sends SIGTERM, waits a short grace, sends SIGKILL to whatever is left (found again, with children born
meanwhile), and verifies. A process is named by its pid AND its start time (``/proc/<pid>/stat`` field 22), so a
reused pid is never signalled; signals go through a pidfd when the kernel has them. Linux only (``/proc``); elsewhere
nothing is found and nothing is signalled. Never runs tmux.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

#: Environment variable carried by every process of a trial: its tmux session name (unique per run).
TAG_ENV = "LIVE_TRIAL_SESSION"
TERM_GRACE_S = 2.0
KILL_WAIT_S = 2.0
KILL_ROUNDS = 5
_POLL_S = 0.05


@dataclass(frozen=True)
class Proc:
    """One process: ``pid`` and ``start`` (clock ticks since boot, a string), which together name it uniquely."""

    pid: int
    start: str


def _stat(pid: int) -> tuple[int, str, str] | None:
    """``(ppid, start ticks, state letter)`` of ``pid`` from ``/proc``, or None when it does not exist."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return int(fields[1]), fields[19], fields[0]
    except (IndexError, ValueError):
        return None


def _table() -> dict[int, tuple[int, str, str]]:
    """Every process now: pid -> (ppid, start, state). One pass over ``/proc``."""
    out: dict[int, tuple[int, str, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            row = _stat(int(name))
            if row is not None:
                out[int(name)] = row
    return out


def proc(pid: int) -> Proc | None:
    """The :class:`Proc` of a running ``pid`` (not a zombie), or None."""
    row = _stat(pid)
    return Proc(pid, row[1]) if row is not None and row[2] != "Z" else None


def alive(p: Proc) -> bool:
    """True while ``p`` runs: the same pid with the same start time, not a zombie."""
    row = _stat(p.pid)
    return row is not None and row[1] == p.start and row[2] != "Z"


def descendants(pid: int) -> list[Proc]:
    """``pid`` itself (when it runs) and every process below it by parentage, parents before children."""
    table = _table()
    children: dict[int, list[int]] = {}
    for child, (ppid, _start, _state) in table.items():
        children.setdefault(ppid, []).append(child)
    out: list[Proc] = []
    todo = [pid] if pid in table else []
    seen: set[int] = set()
    while todo:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        ppid, start, state = table[current]
        if state != "Z":
            out.append(Proc(current, start))
        todo += sorted(children.get(current, ()))
    return out


def tagged(value: str) -> list[Proc]:
    """Every running process whose environment holds ``TAG_ENV=value`` (this process and its ancestors excluded)."""
    return all_tagged().get(value, []) if value else []


def all_tagged() -> dict[str, list[Proc]]:
    """Every running process that carries a tag, by tag value (one pass over ``/proc``; this process and its
    ancestors excluded): what ``reap`` matches against the trials it knows."""
    prefix = f"{TAG_ENV}=".encode()
    mine = _ancestry()
    out: dict[str, list[Proc]] = {}
    for pid, (_ppid, start, state) in _table().items():
        if pid in mine or state == "Z":
            continue
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        for item in env.split(b"\0"):
            if item.startswith(prefix):
                out.setdefault(item[len(prefix):].decode("utf-8", "replace"), []).append(Proc(pid, start))
                break
    return out


def _ancestry() -> set[int]:
    """The harness's own process and its ancestors: never signalled, whatever their environment says."""
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        row = _stat(pid)
        pid = row[0] if row else 0
    return out


def _signal(p: Proc, sig: int) -> None:
    """Send ``sig`` to ``p`` only when it is still that process (checked through a pidfd where possible)."""
    try:
        fd = os.pidfd_open(p.pid)
    except (AttributeError, OSError):
        fd = None
    try:
        if not alive(p):           # checked after the pidfd is open: the fd names the checked process
            return
        if fd is not None:
            signal.pidfd_send_signal(fd, sig)
        else:
            os.kill(p.pid, sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    finally:
        if fd is not None:
            os.close(fd)


def _wait_gone(procs: Iterable[Proc], timeout_s: float) -> list[Proc]:
    procs = list(procs)
    deadline = time.monotonic() + timeout_s
    while True:
        left = [p for p in procs if alive(p)]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(_POLL_S)


def end(procs: Iterable[Proc], *, find_more: Callable[[], Iterable[Proc]] | None = None,
        grace_s: float = TERM_GRACE_S) -> list[Proc]:
    """End ``procs`` and whatever ``find_more()`` finds: SIGTERM (and SIGCONT, for a stopped one), up to ``grace_s``
    seconds to exit, then SIGKILL to what is left, found again each round (children born meanwhile included), until a
    round finds nothing alive (at most 5 rounds). Returns the processes still alive at the end (empty when all are
    gone). Never signals this process or its ancestors. Raises nothing."""
    mine = _ancestry()
    first = {p for p in procs if p.pid not in mine}
    if find_more is not None:
        first |= {p for p in find_more() if p.pid not in mine}
    targets = [p for p in first if alive(p)]
    for p in targets:
        _signal(p, signal.SIGTERM)
        _signal(p, signal.SIGCONT)
    left = _wait_gone(targets, grace_s) if targets else []
    for _ in range(KILL_ROUNDS):
        more = {p for p in (find_more() if find_more is not None else ()) if p.pid not in mine}
        left = [p for p in set(left) | more if alive(p)]
        if not left:
            return []
        for p in left:
            _signal(p, signal.SIGKILL)
        left = _wait_gone(left, KILL_WAIT_S)
    return left
