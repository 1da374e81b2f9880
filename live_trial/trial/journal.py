"""A trial's record on disk while it runs: ``trial-state.json`` (what a resume needs, schema-checked, written
atomically) and ``trial-log.jsonl`` (every decision with its evidence), and the event sink a caller watches.

The runner, its poll loop, its resume and its final judgement all write through one :class:`Journal`, so none of
them reaches into another's private state (README "What a trial leaves behind" lists both files).
"""
from __future__ import annotations

from typing import Any, Callable

from live_trial.jsonfile import append_jsonl, utc_now, write_json
from live_trial.trial.workdir import Workdir

EventSink = Callable[[str, dict], None]
STATE_FILE = "trial-state.json"
LOG_FILE = "trial-log.jsonl"
POLL_STATE_FILE = "poll-state.json"
STATE_SCHEMA = "trial-state.schema.json"


class Journal:
    """``state``: the trial-state dict (empty until the workdir exists); ``wd``: the :class:`Workdir` or None.

    :meth:`save` merges changes into ``state`` and writes it; :meth:`log` appends one decision to the log and
    passes it to the event sink as a ``decision`` event; :meth:`event` passes anything else (ticks, READY).
    Before the workdir exists nothing is written and events still reach the sink. Raises what
    :func:`live_trial.jsonfile.write_json` raises (SchemaInvalid: nothing written) and OSError.
    """

    def __init__(self, on_event: EventSink | None = None) -> None:
        self.on_event: EventSink = on_event or (lambda kind, data: None)
        self.wd: Workdir | None = None
        self.state: dict[str, Any] = {}

    def event(self, kind: str, **data: Any) -> None:
        """Pass ``kind`` and ``data`` to the sink (progress lines, ``--json`` output)."""
        self.on_event(kind, data)

    def log(self, step: str, decision: str, **evidence: Any) -> None:
        """Append ``{at, step, decision, **evidence}`` to ``trial-log.jsonl`` and report it as a decision."""
        record = {"at": utc_now(), "step": step, "decision": decision, **evidence}
        if self.wd is not None:
            append_jsonl(self.wd.path(LOG_FILE), record)
        self.event("decision", **record)

    def save(self, **changes: Any) -> None:
        """Merge ``changes`` into the state and write ``trial-state.json`` (validated, atomic)."""
        self.state.update(changes)
        if self.wd is not None:
            write_json(self.wd.path(STATE_FILE), self.state, STATE_SCHEMA)
