"""A backend that keeps the screens it captured: the doctor reports a changed screen with what it showed, also one
that boot captured and judged before it gave up. It stands in for :class:`~live_trial.session.backend.Backend`
(every other method is the wrapped backend's); it never presses a key of its own."""
from __future__ import annotations

from typing import Any

from live_trial.session.backend import Backend

KEEP_CAPTURES = 400


class Recording:
    """A backend that keeps the visible screens it captured (boot's probes included), newest last, at most
    :data:`KEEP_CAPTURES`."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self.captures: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def _keep(self, capture: str) -> str:
        self.captures.append(capture)
        del self.captures[:-KEEP_CAPTURES]
        return capture

    def probe(self, name: str, pane_id: str | None = None) -> tuple[bool, str]:
        """The wrapped backend's ``probe``; the screen kept."""
        alive, capture = self._backend.probe(name, pane_id)
        return alive, self._keep(capture)

    def capture(self, name: str, scrollback: bool = False) -> str:
        """The wrapped backend's ``capture``; a visible screen kept (scrollback is not)."""
        capture = self._backend.capture(name, scrollback=scrollback)
        return capture if scrollback else self._keep(capture)
