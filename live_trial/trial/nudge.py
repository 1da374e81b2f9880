"""A nudge sent by hand to a prepared trial's session (``live-trial backend nudge SESSION --workdir W``; seed 001 STALL
table row 4): the fixed text written to ``nudge-<n>.md``, pasted as a file through the session's named buffer as
``send`` pastes the task, counted in trial-state.json, and refused past ``nudge_max``. ``run`` nudges with the same
text through the same writer (:func:`live_trial.trial.nudge_file.write_nudge`); ``verdict`` by hand counts these
nudges without a ``--nudge-count`` claim (:func:`live_trial.acceptance.claims.counted_nudges`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from live_trial.errors import RefusedInput
from live_trial.jsonfile import write_json
from live_trial.notices.catalogue import resolve_lang
from live_trial.policy import load_policy
from live_trial.trial.byhand import prepared_state
from live_trial.trial.nudge_file import write_nudge
from live_trial.trial.state import STATE_SCHEMA
from live_trial.workdir_files import Workdir


@dataclass(frozen=True)
class Nudged:
    """A nudge sent: its number (1-based), its file, and the bound it counts against."""

    n: int
    path: Path
    nudge_max: int


def nudge_by_hand(workdir: Path, session: str, *, deliver: Callable[[Path], object],
                  reachable: Callable[[], str | None] = lambda: None) -> Nudged:
    """Write the next ``nudge-<n>.md`` of the prepared ``workdir`` (the language of its notices: trial-state ``lang``,
    else env ``LIVE_TRIAL_LANG``, else ja), count it in trial-state.json, then ``deliver(path)`` (the file pasted
    through the named buffer and its arrival confirmed, as ``send``). The count is saved before the paste: a nudge
    that may have reached the session is never left uncounted; so ``reachable()`` is asked first (None: the session
    can take it; else why not, e.g. no such tmux session or its CLI exited), and a nudge that cannot be pasted is
    neither written nor counted. Raises :class:`RefusedInput` (exit 2, nothing written) when the workdir was not
    prepared for ``session``, the session cannot take a nudge, or ``nudge_max`` nudges were sent already (then STALL
    row 4 stops the trial: ``--stall-row 4``); what ``deliver`` raises."""
    workdir = Path(workdir)
    state = prepared_state(workdir, session)
    bound = int((state.get("policy") or {}).get("nudge_max", load_policy().nudge_max))
    n = int(state.get("nudge_count") or 0) + 1
    if n > bound:
        raise RefusedInput(f"{n - 1} nudge(s) were sent already, the most a trial takes (nudge_max {bound})",
                           where=f"--workdir {workdir}", code="nudge_limit",
                           fix="stop nudging: the STALL table's row 4 ends here (collect, then verdict with "
                               "--stall-row 4)")
    gone = reachable()
    if gone is not None:
        raise RefusedInput(f"the session cannot take a nudge: {gone}", where=session, code="session_gone",
                           fix="a nudge goes to a running session: boot it first, or collect what it left")
    files = Workdir.of(workdir)
    path = write_nudge(files, n, resolve_lang(state.get("lang")))
    write_json(files.trial_state, {**state, "nudge_count": n}, STATE_SCHEMA)
    deliver(path)
    return Nudged(n=n, path=path, nudge_max=bound)


def why_unreachable(backend: Any, session: str) -> str | None:
    """Why ``session`` cannot take a pasted nudge (no such tmux session; its CLI exited, with its status), or None
    when it can. ``backend``: the session backend (``has_session``, ``pane_alive``, ``pane_dead_status``)."""
    if not backend.has_session(session):
        return f"no tmux session named {session}"
    if not backend.pane_alive(session):
        return f"the CLI in {session} exited (status {backend.pane_dead_status(session)})"
    return None
