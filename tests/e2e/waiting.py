"""Waiting on conditions, never on clocks: the one wait of the e2e tests (README "Tests").

:func:`wait_for` checks a condition until it holds and fails with what it saw last (the value, and whatever
``seen`` describes: a screen tail, the newest transcript records), so a test that times out says why. The timeouts
are generous (shared CPUs, a CPU hog in the load runs): they bound a broken test, they are not how long a test takes.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import pytest

#: How long a condition on the real CLI may take to come true under load before the test fails.
DEFAULT_TIMEOUT_S = 90.0


def wait_for(predicate: Callable[[], Any], *, what: str, timeout_s: float = DEFAULT_TIMEOUT_S,
             interval_s: float = 0.1, seen: Callable[[], str] | None = None, required: bool = True) -> Any:
    """Call ``predicate`` every ``interval_s`` seconds until it returns a truthy value, and return that value.

    After ``timeout_s`` seconds the test fails naming ``what`` it waited for, the last value and ``seen()`` (what the
    screen or the transcript showed then). ``required=False`` is for an event that may legitimately never come (a
    documented quirk of a tool): the last value is returned instead, and the caller asserts what each case means.
    An exception raised by ``predicate`` propagates at once.
    """
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            if not required:
                return last
            break
        time.sleep(interval_s)
    detail = ""
    if seen is not None:
        try:
            detail = "\n" + seen()
        except Exception as exc:  # noqa: BLE001 - the description must not hide the timeout
            detail = f"\n(could not describe what was seen: {exc!r})"
    pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what} (last: {last!r}){detail}", pytrace=False)


def screen_of(backend, session: str, lines: int = 20) -> Callable[[], str]:
    """A ``seen`` for :func:`wait_for`: the last ``lines`` non-empty lines of the session's screen."""
    from live_trial.session import screen

    def describe() -> str:
        return "screen tail:\n" + "\n".join(screen.tail(backend.capture(session), lines))
    return describe
