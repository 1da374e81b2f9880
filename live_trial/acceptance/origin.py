"""Where a trial's scenario came from, read from the workdir itself (seed 001: rehearsal verdicts are never
reused as a live PASS).

A workdir is a rehearsal's when its ``trial-state.json`` has a non-null ``rehearsal`` field, or when it holds a
``claude-config/`` folder (the isolated claude configuration only rehearsals seed). Nothing a caller says can
turn such a workdir into a live one: ``verdict`` overrides a claimed ``live`` origin and ``plan`` never reuses a
verdict whose recorded origin disagrees with its workdir.

Pure reads: nothing here writes.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.errors import RefusedInput
from live_trial.jsonfile import parse_json
from live_trial.rehearsal.config import REHEARSAL_MESSAGE_PREFIX
from live_trial.workdir_files import CLAUDE_CONFIG, TRANSCRIPT, TRIAL_STATE


@dataclass(frozen=True)
class WorkdirOrigin:
    """``origin`` is ``live`` or ``rehearsal``; ``why`` names the fact that made it rehearsal (None for live);
    ``state`` is the parsed ``trial-state.json`` (None when there is none); ``scenario`` the rehearsal scenario
    path it records (None when unknown)."""

    origin: str
    why: str | None
    state: Mapping[str, Any] | None
    scenario: Path | None


def trial_folder(workdir: Path) -> Path:
    """The resolved trial workdir ``workdir`` names, for the step commands that write into one (``verdict``,
    ``collect``). Refused (:class:`RefusedInput`, code ``bad_workdir``, nothing written) when the path is a symlink
    (it would write into wherever it points), is not a folder, or holds no ``trial-state.json`` as a regular file (it
    is no folder ``run`` made: ``verdict`` would write verdict.json into any folder)."""
    path = Path(workdir)
    if path.is_symlink():
        raise RefusedInput("the workdir is a symlink", where=str(path), code="bad_workdir",
                           fix=f"pass the trial's folder itself ({path.resolve()})")
    if not path.is_dir():
        raise RefusedInput("workdir is not a folder", where=str(path.absolute()), code="bad_workdir",
                           fix="pass the trial's workdir eval-log/<plugin>/<skill>/live-trial/<run-id>")
    state = path / TRIAL_STATE
    if state.is_symlink() or not state.is_file():
        raise RefusedInput(f"not a trial workdir (no {TRIAL_STATE})", where=str(path.resolve()), code="bad_workdir",
                           fix="pass a folder `live-trial run` made: eval-log/<plugin>/<skill>/live-trial/<run-id>")
    return path.resolve()


def read_trial_state(workdir: Path) -> dict[str, Any] | None:
    """The workdir's ``trial-state.json`` as a dict, or None when there is none.

    Raises :class:`RefusedInput` (``bad_trial_state``) naming the file when it exists but is not a JSON object:
    the workdir's origin and target cannot then be told.
    """
    path = Path(workdir) / TRIAL_STATE
    if not path.is_file():
        return None
    try:
        doc = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RefusedInput(f"{TRIAL_STATE} is not readable JSON ({type(exc).__name__})", where=str(path),
                           code="bad_trial_state",
                           fix="restore the file or judge a workdir whose state is intact") from None
    if not isinstance(doc, dict):
        raise RefusedInput(f"{TRIAL_STATE} is not a JSON object", where=str(path), code="bad_trial_state",
                           fix="restore the file or judge a workdir whose state is intact")
    return doc


def workdir_origin(workdir: Path, scripted: Callable[[Path], bool] | None = None) -> WorkdirOrigin:
    """Derive the scenario origin from ``workdir``: rehearsal when ``trial-state.json`` says ``rehearsal`` (non-null),
    a ``claude-config/`` folder is there, or ``transcript.jsonl`` holds a reply of the rehearsal server (message id
    ``msg_rehearsal_…``: a workdir copied without its state, or a hand-run rehearsal whose ``verdict`` was not told);
    live otherwise. ``scripted(transcript path) -> bool`` answers the last question from a read the caller makes
    anyway (verdict's hash pass, plan's transcript cache); by default the transcript's tail is read. Raises
    :class:`RefusedInput` for an unreadable state."""
    workdir = Path(workdir)
    state = read_trial_state(workdir)
    rehearsal = state.get("rehearsal") if state else None
    scenario = None
    if isinstance(rehearsal, Mapping) and isinstance(rehearsal.get("scenario"), str):
        scenario = Path(rehearsal["scenario"])
    if rehearsal not in (None, False, "", {}):
        return WorkdirOrigin("rehearsal", f"{TRIAL_STATE} records a rehearsal", state, scenario)
    if (workdir / CLAUDE_CONFIG).is_dir():
        return WorkdirOrigin("rehearsal", f"the workdir holds {CLAUDE_CONFIG}/ (the rehearsal's isolated "
                                          "claude config)", state, scenario)
    transcript = workdir / TRANSCRIPT
    if transcript.is_file() and (scripted or _scripted_transcript)(transcript):
        return WorkdirOrigin("rehearsal", f"{TRANSCRIPT} holds replies of the rehearsal server (message ids "
                                          f"{REHEARSAL_MESSAGE_PREFIX}...)", state, scenario)
    return WorkdirOrigin("live", None, state, None)


def is_rehearsal_reply(rec: Mapping[str, Any]) -> bool:
    """True for an assistant record the rehearsal server wrote (its message id starts with ``msg_rehearsal_``)."""
    msg = rec.get("message") if rec.get("type") == "assistant" else None
    return isinstance(msg, dict) and str(msg.get("id") or "").startswith(REHEARSAL_MESSAGE_PREFIX)


def _scripted_transcript(path: Path) -> bool:
    from live_trial.transcript.reader import read_tail

    return any(is_rehearsal_reply(rec) for rec in read_tail(path).records)


def check_state_target(state: Mapping[str, Any] | None, plugin: str | None, skill: str, qualified: str) -> None:
    """Refuse (``target_mismatch``) a target that is not the one the workdir's ``trial-state.json`` recorded.

    Compares ``plugin`` and ``skill`` with the state's ``plugin``/``skill`` fields (or, when those are missing,
    ``qualified`` with its ``target``). No state: nothing to compare.
    """
    if not state:
        return
    if "skill" in state:
        same = state.get("skill") == skill and state.get("plugin") == plugin
        recorded = f"{state['plugin']}:{state['skill']}" if state.get("plugin") else str(state.get("skill"))
    elif "target" in state:
        recorded = str(state["target"])
        same = recorded == qualified
    else:
        return
    if not same:
        raise RefusedInput(f"--target-skill {qualified} does not match the workdir's trial ({recorded}, "
                           f"from {TRIAL_STATE})", code="target_mismatch",
                           fix=f"pass --target-skill {recorded} with its skill folder, or the workdir of {qualified}")
