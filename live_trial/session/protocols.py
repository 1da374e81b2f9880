"""What the floors above read of a live session, as :class:`typing.Protocol` types: a tmux :class:`Backend` and the
:class:`Screen` markers.

:class:`live_trial.session.backend.Backend` implements :class:`Backend` and the module :mod:`live_trial.session.screen`
implements :class:`Screen`; a test fake implements the same Protocol (``tests/unit/fakes.py``), so a caller typed
with one never asks whether a method is there.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from live_trial.session.dialogs import Dialog
from live_trial.session.rules import PaneRow


@runtime_checkable
class Backend(Protocol):
    """Reading one live session by its tmux session name. ``poll`` asks :meth:`pane` once and then :meth:`probe`
    each tick (one tmux call); the one-question forms serve the STALL table and ``send``."""

    def pane(self, name: str) -> PaneRow | None:
        """The pane of exactly this session (id, pid, dead flag); None when the session is gone."""
        ...

    def probe(self, name: str, pane_id: str | None = None) -> tuple[bool, str]:
        """``(alive, visible screen)`` in one tmux call; ``(False, "")`` when the session is gone."""
        ...

    def pane_alive(self, name: str) -> bool:
        """True when the session exists and its pane's process has not exited."""
        ...

    def pane_pid(self, name: str) -> int | None:
        """Pid of the pane's process (the claude process); None when the session is gone."""
        ...

    def capture(self, name: str, scrollback: bool = False) -> str:
        """The pane's text (with ``scrollback`` its whole history); raises RefusedInput when the session is gone."""
        ...


@runtime_checkable
class Screen(Protocol):
    """The screen markers a poll reads a capture with (pure functions of the capture text)."""

    def mask_volatile(self, capture: str) -> str:
        """The capture with what changes on an idle-but-alive screen masked (same line count)."""
        ...

    def is_busy(self, capture: str) -> bool:
        """True when a spinner line (or the API-retry line) is on screen."""
        ...

    def api_retry(self, capture: str) -> str | None:
        """The CLI's API-retry line when it is on screen, else None."""
        ...

    def background_work(self, capture: str) -> dict[str, int]:
        """``{"shells": n, "agents": m}``: the background work the screen shows running."""
        ...

    def dialog(self, capture: str) -> Dialog | None:
        """The open dialog, or None."""
        ...
