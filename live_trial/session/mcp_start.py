"""The wait before a task is pasted for the MCP servers a session's claude started (README "What a trial leaves
behind"; references/transcript-jsonl.md "What a plugin's hooks and MCP servers leave behind"): a task pasted at once
meets servers still connecting, which a person typing would not (2.1.197 then answers a call "No such tool
available"). The CLI's debug log (``--debug-file``, read by :mod:`live_trial.transcript.debug_log`) says when each
server began connecting and how its start went. A trial waits with it (``trial/activity.py``), and so does the
doctor's probe, which checks that the log still says so (``doctor/activity.py``)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from live_trial.transcript.debug_log import DebugTail


def await_servers(debug_log: Path, *, timeout_s: float, sleep: Callable[[float], None],
                  clock: Callable[[], float] = time.monotonic, step_s: float = 0.05) -> tuple[list[str], list[str]]:
    """Wait until every MCP server whose ``Starting connection`` the debug log at ``debug_log`` shows has said how its
    start went (connected or failed), at most ``timeout_s`` seconds, looking every ``step_s``. Returns ``(settled,
    still pending)`` server names; a log with no server (or no log) returns at once. ``sleep`` may raise (the harness
    asked to stop). Each byte of the log is read once."""
    end, tail = clock() + timeout_s, DebugTail(debug_log)
    while True:
        log = tail.read()
        pending = [n for n, s in log.servers.items() if s.starts and not s.outcomes]
        if not pending or clock() >= end:
            return [n for n, s in log.servers.items() if s.outcomes], pending
        sleep(step_s)
