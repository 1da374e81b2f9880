"""A child process that never outlives the harness that started it (Linux ``prctl(PR_SET_PDEATHSIG)``): the fresh
evaluator (:mod:`live_trial.judge.evaluator`) is started with :func:`die_with_parent` as its ``preexec_fn``, so a
harness killed even by SIGKILL leaves no evaluator running on its own (README "Nothing left running")."""
from __future__ import annotations

import os
import signal
from typing import Callable

PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when the harness dies, even by SIGKILL (Linux
    ``prctl(PR_SET_PDEATHSIG)``; the signal is sent when the thread that started the child ends, and the harness starts
    it from the thread that waits for it). Resolved before the fork; None where there is no prctl."""
    import ctypes
    import ctypes.util

    try:
        prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:       # the harness died before the signal was armed: follow it now
            os.kill(os.getpid(), signal.SIGKILL)
    return arm
