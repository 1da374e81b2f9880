"""The two dialogs boot answers, and how (seed 001 "boot"; README "Running a real trial"): the bypass-permissions
warning, only with all four of its markers; and the folder-trust question, only for the one folder the caller says
the person already trusts (a folder the harness made under a folder trusted in that config) and only when the
dialog names exactly that folder. Every other dialog is left to boot's caller (a blocking screen, never answered).

Both dialogs start with the cursor on "No, exit". The answer is one Down, re-captured until the cursor is on the
"yes" option, then one Enter, waited on until the dialog is gone. A key is never pressed blind: the options wrap, so a
second Down taken late moves the cursor back, and a second Enter would land on the next screen (after the trust
question comes the bypass warning, whose cursor is on "No, exit"). 2.1.332 draws its trust question anew about 0.15 s
after it first appears, with the cursor back on "No, exit" (references/transcript-jsonl.md "Folder trust"), so the
trust question is answered only once it has been on screen for :data:`TRUST_SETTLE_S`, and its cursor is looked at
again before Enter. Pure over the backend it gets (tmux only through it).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from live_trial.errors import BootFail
from live_trial.session import dialogs, screen
from live_trial.session.backend import Backend
from live_trial.session.keys import ONE_PRESS, press_until
from live_trial.session.markers import MARKERS
from live_trial.stop_reasons import StopReason

DIALOG_POLL_S = 0.02         # re-capture after a key in a dialog
DIALOG_STEP_WAIT_S = 10.0    # wait for the cursor to move / the dialog to go after a key (generous: shared CPUs)
TRUST_SETTLE_S = 1.0         # the trust question is answered once on screen this long (2.1.332 draws it twice)
RECHECK_S = 0.3              # after Down on the trust question, the cursor is looked at again this long after
TAIL_LINES = 15
NO = "No, exit"


@dataclass(frozen=True)
class Answerable:
    """A dialog boot may answer: its name in messages, the label of the option it chooses, whether a capture shows
    it, and the stop reason of a failure to answer it."""

    name: str
    yes: str
    shown: Callable[[str], bool]
    code: StopReason
    #: Keys only once the dialog has been on screen this long, and its cursor looked at again before Enter: 2.1.332's
    #: bypass warning took its keys at once; its trust question is drawn anew right after it first appears
    dwell_s: float = 0.0


#: The bypass-permissions warning: all four markers (seed 001 "boot": accept only then).
BYPASS = Answerable("bypass-permissions dialog", "Yes, I accept", dialogs.bypass_dialog, StopReason.BYPASS_DIALOG)

#: The folder-trust question, answered only for a folder the person already trusts (:func:`trust_folder_shown`).
TRUST = Answerable("folder-trust question", "Yes, I trust this folder",
                   lambda capture: bool(MARKERS["trust"].search(capture or "")) and "Accessing workspace:" in capture,
                   StopReason.BLOCKING_SCREEN, dwell_s=TRUST_SETTLE_S)


def trust_folder_shown(capture: str) -> Path | None:
    """The folder a folder-trust question names (the first block of non-blank lines below ``Accessing workspace:``,
    joined: a long path wraps at the pane's width), or None when no such question is on screen. Seen on 2.1.332:
    `` Accessing workspace:`` / (blank) / `` /tmp/…/repo/sub`` / (blank) / `` Quick safety check: …``."""
    if not TRUST.shown(capture):
        return None
    lines = capture.splitlines()
    start = next(i for i, ln in enumerate(lines) if "Accessing workspace:" in ln) + 1
    while start < len(lines) and not lines[start].strip():
        start += 1
    parts = []
    for ln in lines[start:]:
        if not ln.strip():
            break
        parts.append(ln.strip())
    return Path("".join(parts)) if parts and parts[0].startswith("/") else None


def answer(kind: Answerable, backend: Backend, session: str, capture: str, probe: Callable[[], str], *,
           clock: Callable[[], float], sleep: Callable[[float], None], seen_at: float) -> str:
    """Answer the dialog ``kind`` on ``capture`` with its "yes" option; returns the first screen without it.
    ``probe()`` re-captures the pane; ``seen_at``: when the dialog was first seen. A dialog with a ``dwell_s`` (the
    trust question) is first watched until it has been on screen that long, and its cursor is looked at again just
    before Enter: 2.1.332 draws the trust question, then draws it anew about 0.15 s later with the cursor back on
    "No, exit", so a Down taken before that is undone and the Enter answers "No" (the CLI then exits: "this folder
    isn't trusted"); a Down is pressed again only on a screen that shows the cursor on "No, exit". Raises
    :class:`BootFail` (code ``kind.code``), nothing more pressed, when the dialog has no such option, its cursor is
    elsewhere than on one of its two options, the cursor does not move, or the dialog stays open after Enter."""
    def fail(what: str, shown: str, fix: str = "boot again; if it repeats, report the screen below") -> BootFail:
        return BootFail(f"{kind.name}: {what}", where=session, fix=fix, code=kind.code,
                        details={"screen": kind.name, "tail": screen.tail(shown, TAIL_LINES)})

    def cursor_on(label: str) -> Callable[[str], bool]:
        return lambda now: bool(kind.shown(now) and (box := screen.dialog(now)) and box.cursor_on(label))

    while clock() - seen_at < kind.dwell_s and kind.shown(capture):
        sleep(DIALOG_POLL_S)
        capture = probe()
    if not kind.shown(capture):
        return capture
    box = screen.dialog(capture)
    if box is None or box.option(kind.yes) is None or box.selected is None:
        raise fail(f"no \"{kind.yes}\" option; nothing was pressed", capture,
                   fix="run claude by hand once and check the dialog")
    for _ in range(2 if kind.dwell_s else 1):
        if cursor_on(kind.yes)(capture):
            break
        if not cursor_on(NO)(capture):
            raise fail(f"the cursor is on {box.selected.label!r}, expected \"{NO}\"; nothing was pressed", capture,
                       fix="run claude by hand once and check the dialog")
        capture = press_until(lambda: backend.send_keys(session, "Down"), probe, cursor_on(kind.yes),
                              cursor_on(NO), clock=clock, sleep=sleep, poll_s=DIALOG_POLL_S,
                              wait_s=DIALOG_STEP_WAIT_S, presses=ONE_PRESS)
        if not cursor_on(kind.yes)(capture):
            raise fail(f"the cursor did not move to \"{kind.yes}\"", capture)
        if kind.dwell_s:                  # look again: a dialog drawn anew puts the cursor back on "No, exit"
            sleep(RECHECK_S)
            capture = probe()
    if not cursor_on(kind.yes)(capture):
        raise fail(f"the cursor did not stay on \"{kind.yes}\"; Enter was not pressed", capture)
    return wait_gone(kind, backend, session, probe, clock=clock, sleep=sleep, enter=True)


def wait_gone(kind: Answerable, backend: Backend, session: str, probe: Callable[[], str], *,
              clock: Callable[[], float], sleep: Callable[[float], None], enter: bool = False) -> str:
    """Wait until the dialog ``kind`` is gone (pressing Enter first, once, with ``enter``: the cursor is on its
    "yes" option); returns the first screen without it. Raises :class:`BootFail` when it stays open."""
    def on_yes(now: str) -> bool:
        return bool(kind.shown(now) and (box := screen.dialog(now)) and box.cursor_on(kind.yes))

    press = (lambda: backend.send_keys(session, "Enter")) if enter else (lambda: None)
    capture = press_until(press, probe, lambda now: not kind.shown(now), on_yes if enter else (lambda now: False),
                          clock=clock, sleep=sleep, poll_s=DIALOG_POLL_S, wait_s=DIALOG_STEP_WAIT_S * 2,
                          presses=ONE_PRESS)
    if kind.shown(capture):
        raise BootFail(f"the {kind.name} stayed open after Enter on \"{kind.yes}\"", where=session,
                       fix="boot again; if it repeats, report the screen below", code=kind.code,
                       details={"screen": kind.name, "tail": screen.tail(capture, TAIL_LINES)})
    return capture
