"""Pressing a dialog key and waiting until the dialog takes it (boot's bypass acceptance, send's gate answers).

A dialog of 2.1.332 drops the Enter pressed in its first ~0.3 s: Enter pressed at once on AskUserQuestion or a
permission dialog leaves it unanswered, Enter 0.3 s later answers it; 2.1.197 took every key at once
(references/transcript-jsonl.md "Screen and boot on 2.1.197 and 2.1.332"). So Enter on a gate may be pressed again
when the screen still shows the dialog as it was, a bounded number of times.

A cursor key is never pressed again: the options wrap (Down on the last option goes to the first, seen on both
versions), so a second Down after a first one the CLI took late (a busy machine draws the move after the retry
delay) moves the cursor back, and the Enter that follows answers the option the harness did not choose. Down and Up
were taken at once on both versions. Pure over the callables it gets (no tmux here).
"""
from __future__ import annotations

from typing import Callable

KEY_RETRY_S = 0.6     # a key the dialog did not take within this long is pressed again
KEY_PRESSES = 3       # at most this many presses of Enter on a gate
ONE_PRESS = 1         # a cursor key (Down/Up), and every key of boot: pressed once (see above)


def press_until(press: Callable[[], None], look: Callable[[], str], done: Callable[[str], bool],
                unchanged: Callable[[str], bool], *, clock: Callable[[], float], sleep: Callable[[float], None],
                retry_s: float = KEY_RETRY_S, presses: int = KEY_PRESSES, poll_s: float = 0.05,
                wait_s: float = 10.0) -> str:
    """Press a key (``press()``) until ``done(screen)``; returns the last screen ``look()`` gave.

    A dialog of 2.1.332 drops keys pressed in its first ~0.3 s (AskUserQuestion and permission dialogs: Enter;
    references/transcript-jsonl.md "Screen and boot"). So when the screen still shows the dialog as it was
    (``unchanged(screen)``) ``retry_s`` seconds after a press, the key is pressed again, at most ``presses`` times in
    all; a screen that changed otherwise is waited on, never pressed into. Gives up ``wait_s`` seconds after the last
    press once no press is left or the screen changed (the caller judges the screen it gets back). ``clock`` and
    ``sleep`` are injected (seconds)."""
    count, pressed_at = 1, clock()
    press()
    while True:
        sleep(poll_s)
        now = look()
        if done(now):
            return now
        waited = clock() - pressed_at
        if unchanged(now) and count < presses:
            if waited >= retry_s:
                press()
                count, pressed_at = count + 1, clock()
        elif waited > wait_s:
            return now
