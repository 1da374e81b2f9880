"""The one writer of a nudge's file (seed 001 STALL table row 4: the fixed text written to ``nudge-<n>.md``, then
sent as a file), used by ``run``'s poll loop (:mod:`live_trial.trial.loop`) and by ``backend nudge``
(:mod:`live_trial.trial.nudge`)."""
from __future__ import annotations

from pathlib import Path

from live_trial.jsonfile import write_text_atomic
from live_trial.notices.catalogue import nudge_text
from live_trial.workdir_files import Workdir


def write_nudge(files: Workdir, n: int, lang: str) -> Path:
    """Write the n-th nudge (1-based) of the trial in ``files`` with the fixed text in ``lang``
    (:func:`live_trial.notices.catalogue.nudge_text`) and return its path."""
    path = files.nudge(n)
    write_text_atomic(path, nudge_text(lang))
    return path
