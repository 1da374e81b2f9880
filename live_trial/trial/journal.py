"""A trial's record on disk while it runs: ``trial-state.json`` (what a resume needs, schema-checked, written
atomically) and ``trial-log.jsonl`` (every decision with its evidence), and the event sink a caller watches.

The runner, its poll loop, its resume and its final judgement all write through one :class:`Journal`, so none of
them reaches into another's private state (README "What a trial leaves behind" lists both files). Every save also
writes the trial's facts (``facts``: what the trial established so far), so a resume after any phase continues from
what was established instead of guessing (README "Resuming a trial").
"""
from __future__ import annotations

import os
import signal
from typing import Any, Callable

from live_trial.clock import utc_now
from live_trial.jsonfile import append_jsonl
from live_trial.stop_reasons import unwritable
from live_trial.trial.facts import Facts
from live_trial.trial.state import TrialState
from live_trial.workdir_files import Workdir

EventSink = Callable[[str, dict[str, Any]], None]
#: Fault injection for the suite (README "Tests"): a harness whose environment names a phase here stops itself
#: (SIGSTOP) right after trial-state.json records that phase, so a test can kill it at exactly that point.
STOP_AT_PHASE_ENV = "LIVE_TRIAL_STOP_AT_PHASE"


class Journal:
    """``state``: the trial's :class:`~live_trial.trial.state.TrialState` (None until the workdir exists); ``wd``: the
    :class:`Workdir` or None; ``facts``: the trial's :class:`~live_trial.trial.facts.Facts` (saved with the state when
    set).

    :meth:`save` merges changes into ``state`` and writes it; :meth:`log` appends one decision to the log and
    passes it to the event sink as a ``decision`` event; :meth:`event` passes anything else (ticks, READY).
    Before the workdir exists nothing is written and events still reach the sink. :meth:`save` raises what
    :func:`live_trial.jsonfile.write_json` raises (SchemaInvalid: nothing written) and, when the disk refuses the
    write, a one-line :class:`~live_trial.errors.Blocked` (read-only or full: README "Whose failure it is").
    """

    def __init__(self, on_event: EventSink | None = None) -> None:
        self.on_event: EventSink = on_event or (lambda kind, data: None)
        self.wd: Workdir | None = None
        self.state: TrialState | None = None
        self.facts: Facts | None = None
        self._saved_phase: str | None = None
        #: The first write of the log that failed (a full or read-only disk): the log goes on to the sink only.
        self.log_error: OSError | None = None

    def event(self, kind: str, **data: Any) -> None:
        """Pass ``kind`` and ``data`` to the sink (progress lines, ``--json`` output)."""
        self.on_event(kind, data)

    def log(self, step: str, decision: str, **evidence: Any) -> None:
        """Append ``{at, step, decision, **evidence}`` to ``trial-log.jsonl`` and report it as a decision. A log line
        the disk refuses is not written (the first such error is kept in ``log_error``); this never raises for it."""
        record = {"at": utc_now(), "step": step, "decision": decision, **evidence}
        if self.wd is not None and self.log_error is None:
            try:
                append_jsonl(self.wd.trial_log, record)
            except OSError as exc:
                self.log_error = exc
        self.event("decision", **record)

    def save(self, **changes: Any) -> None:
        """Set ``changes`` (fields of :class:`~live_trial.trial.state.TrialState`) and the current facts on the
        state and write ``trial-state.json`` (validated, atomic). Nothing is done before the state exists."""
        if self.state is None:
            return
        self.state.update(**changes)
        if self.facts is not None:
            self.state.facts = self.facts.to_doc()
        if self.wd is None:
            return
        path = self.wd.trial_state
        try:
            self.state.save(path)
        except OSError as exc:
            raise unwritable(exc, path) from None
        phase, before = self.state.phase, self._saved_phase
        self._saved_phase = phase
        if phase != before and phase == os.environ.get(STOP_AT_PHASE_ENV):
            os.kill(os.getpid(), signal.SIGSTOP)
