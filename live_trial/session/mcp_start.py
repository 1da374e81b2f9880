"""The wait before a task is pasted for the MCP servers a session's claude started (README "What a trial leaves
behind"; references/transcript-jsonl.md "What a plugin's hooks and MCP servers leave behind"): a task pasted at once
meets servers still connecting, which a person typing would not (2.1.197 then answers a call "No such tool
available"). The CLI's debug log (``--debug-file``, read by :mod:`live_trial.transcript.debug_log`) says when each
server began connecting and how its start went. A trial waits with it (``trial/activity.py``), and so does the
doctor's probe, which checks that the log still says so (``doctor/activity.py``)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from live_trial.transcript.debug_log import DebugTail

#: how long, in seconds, a server the session was declared may take to show its start in the debug log before the
#: task is pasted without it. The log is written some time after its lines' own time (tens of milliseconds seen under
#: CI load), and the CLI may never start a declared server at all (one disabled in the person's settings, one whose
#: sign-in is pending): that one costs this much of every trial, so it is kept short.
START_GRACE_S = 5.0


def await_servers(debug_log: Path, *, timeout_s: float, sleep: Callable[[float], None],
                  expected: Iterable[str] = (), start_grace_s: float = START_GRACE_S,
                  clock: Callable[[], float] = time.monotonic, step_s: float = 0.05) -> tuple[list[str], list[str]]:
    """Wait until every MCP server whose ``Starting connection`` the debug log at ``debug_log`` shows, and every
    server of ``expected`` (the names the CLI gives the servers it was declared: ``plugin:<plugin>:<server>`` and the
    stand-ins), has said how its start went (connected or failed; a plugin's server the CLI suppressed as a duplicate
    of a stand-in never starts), at most ``timeout_s`` seconds, looking every
    ``step_s``. An expected server the log has not shown starting within ``start_grace_s`` seconds is no longer
    waited for (the CLI may leave one unstarted). The CLI writes its debug log in bursts, so a log read at once can
    show no server although both have begun: waiting only for what it shows pasted a task into servers still
    connecting. Returns ``(settled, still pending)`` server names, those expected but never seen among the pending;
    a log with no server and nothing expected (or no log) returns at once. ``sleep`` may raise (the harness asked to
    stop). Each byte of the log is read once."""
    start, tail, wanted = clock(), DebugTail(debug_log), list(dict.fromkeys(expected))
    end, grace_end = start + timeout_s, start + min(start_grace_s, timeout_s)
    while True:
        log = tail.read()
        pending = [n for n, s in log.servers.items() if s.starts and not s.settled]
        unseen = [n for n in wanted if n not in log.servers or not (log.servers[n].starts or log.servers[n].settled)]
        now = clock()
        if (not pending and (not unseen or now >= grace_end)) or now >= end:
            return [n for n, s in log.servers.items() if s.settled], pending + unseen
        sleep(step_s)
