"""Which transcript a session writes now, following it when it continues under a new session id.

The rule (references/transcript-jsonl.md, "A moved transcript"): a session writes under the last session id known to
be its own (the id it booted with, or the last one it was followed to) until the CLI's live ``sessions/<pid>.json``
names another ``sessionId``; from then on it writes under that one. ``/clear`` (and, on later CLIs, automatic
compaction and leaving plan mode) switches that ``sessionId`` within 0.25 s, and the new ``<id>.jsonl`` appears next
to the old one about 0.3 s later; the old file gets nothing more. The status file keeps its last content after a
SIGKILL, so it is trusted only while its pid is alive (claude-cli-observed.md, pitfall 7): callers pass it only then.

The transcript of the session id is :func:`live_trial.transcript.paths.locate`'s; it may not exist yet. What a caller
does with a file that is not there yet is its own: poll keeps reading the old file until the new one appears (and
STALLs ``transcript_moved`` when it never does), send watches the new file at once (the next prompt lands there).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from live_trial.transcript.paths import locate

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs status's start-up)
    from typing import Any


class Located:
    """The session a CLI writes now and its transcript: ``session_id`` the id it writes under now, ``path`` its
    transcript ``<config>/projects/<slug>/<session_id>.jsonl`` (it may not exist yet), ``moved_from`` the known
    session id when the CLI names another one (the session moved), else None.

    A plain class, not a dataclass: ``status --pid`` uses it, and importing dataclasses would cost its start-up.
    """

    __slots__ = ("moved_from", "path", "session_id")

    def __init__(self, session_id: str, path: Path, moved_from: str | None = None) -> None:
        self.session_id, self.path, self.moved_from = session_id, path, moved_from

    def __repr__(self) -> str:
        return f"Located({self.session_id!r}, {str(self.path)!r}, moved_from={self.moved_from!r})"


def named_session(known_id: str | None, cli_doc: Mapping[str, Any] | None) -> str | None:
    """The session id the CLI's live ``sessions/<pid>.json`` (``cli_doc``) names when it is not ``known_id``, else
    None (also without a known id, a document or a ``sessionId`` string). Never raises."""
    new = cli_doc.get("sessionId") if isinstance(cli_doc, Mapping) else None
    if isinstance(new, str) and new and known_id and new != known_id:
        return new
    return None


def locate_current(known_id: str, cwd: str | os.PathLike[str] | None, config: str | os.PathLike[str] | None,
                   cli_doc: Mapping[str, Any] | None, known_path: Path | None = None) -> Located:
    """The session the CLI writes now and its transcript, by the rule of this module.

    ``known_id``: the last session id known to be the session's (the last move followed, else the boot id);
    ``cwd`` / ``config``: the session's folder and the CLI's config folder (as for ``locate``); ``cli_doc``: the CLI's
    ``sessions/<pid>.json`` (:func:`live_trial.transcript.paths.read_cli_session_status`) only while that pid is
    alive, else None; ``known_path``: the transcript of ``known_id`` when the caller holds it (returned as it is when
    the session did not move, not looked up again). Raises :class:`~live_trial.errors.RefusedInput` for a session id
    that is not a safe file name.
    """
    new = named_session(known_id, cli_doc)
    if new is None:
        return Located(known_id, known_path if known_path is not None else locate(known_id, cwd, config))
    return Located(new, locate(new, cwd, config), moved_from=known_id)
