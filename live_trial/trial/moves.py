"""A session that continues in a new transcript file: following it, and keeping both files as evidence.

``/clear`` (and, on later CLIs, automatic compaction and leaving plan mode) makes the CLI continue under a new session
id: ``sessions/<pid>.json`` names the new ``sessionId`` at once and the new ``<id>.jsonl`` appears next to the old
one (references/transcript-jsonl.md, "A moved transcript"). Poll follows it and records each move in its state file
(``moves``); the runner sends nudges to, and collects, the file the session writes now
(:mod:`live_trial.transcript.locator` says which), and keeps the earlier files under ``moved-from/`` in the workdir.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json
from live_trial.session.rules import pid_alive
from live_trial.stop_reasons import StopReason
from live_trial.transcript.locator import locate_current
from live_trial.transcript.paths import check_session_id, read_cli_session_status, subagents_dir
from live_trial.transcript.reader import copy_transcript
from live_trial.trial.context import TrialContext
from live_trial.workdir_files import MOVED_FROM

#: ``poll`` STALL reasons starting with this mean the session moved to a transcript that could not be found.
UNFOLLOWED = StopReason.TRANSCRIPT_MOVED.value


def move_note(move: Mapping[str, Any]) -> str:
    """The verdict note for one move: where the session went and why the harness followed it."""
    return (f"the session continued in a new transcript (session {move['to_session_id']}, after a /clear or a "
            f"similar command): the harness followed it, and the earlier transcript is kept in {MOVED_FROM}/")


def poll_moves(workdir_state_file: Path) -> list[dict[str, Any]]:
    """The moves poll recorded in its state file (``[]`` when there is none or it is unreadable)."""
    try:
        return list(read_json(workdir_state_file, "poll-state.schema.json").get("moves") or [])
    except Exception:  # noqa: BLE001 - a missing or old state file means no move was seen
        return []


def current_transcript(trial: TrialContext) -> Path:
    """The transcript file the trial's session writes now (:func:`live_trial.transcript.locator.locate_current`).

    The session id known to be its own is the last one poll followed, else the boot session id; the CLI's live
    ``sessions/<pane pid>.json`` (while that pid is alive) names a newer one. Used for nudges (send confirms delivery
    there) and collect.
    """
    config = trial.config_dir()
    assert trial.state is not None
    session_id = trial.state.session_id
    moves = poll_moves(trial.wd.poll_state) if trial.wd is not None else []
    if moves:
        session_id = moves[-1]["to_session_id"]
    pid = trial.state.pane_pid
    doc = read_cli_session_status(config, pid) if pid and pid_alive(int(pid)) else None
    return locate_current(session_id, trial.req.cwd, config, doc).path


def moved_source(move: Mapping[str, Any], config: Path) -> Path | None:
    """The transcript a move left, when poll-state.json's record of it names one the CLI of this session wrote: a file
    ``<config>/projects/<slug>/<from_session_id>.jsonl`` (``config``: the session's CLI config folder; the path
    resolved, so no link leads out), ``from_session_id`` (else the file's stem) a session id. None for any other
    path: poll-state.json lies in the workdir the session can write, and what collect copies into ``moved-from/`` is
    sealed as the session's record (README "What a trial leaves behind")."""
    sid = move.get("from_session_id") or Path(str(move.get("from_path") or "")).stem   # poll knew no id: the file's
    try:
        check_session_id(str(sid))
        src = Path(str(move.get("from_path") or "")).resolve()
        projects = (Path(config) / "projects").resolve()
    except (RefusedInput, OSError, RuntimeError):
        return None
    if src.parent.parent != projects or src.name != f"{sid}.jsonl" or not src.is_file():
        return None
    return src


def collect_moved(trial: TrialContext) -> list[str]:
    """Copy each transcript the session moved away from (and its subagents) into ``<workdir>/moved-from/``, add a
    note per move to the verdict and return the copied file names. Only a transcript in the CLI's projects folder of
    the session's config is copied (:func:`moved_source`); a move naming any other file is left out, with a note and a
    ``collect`` record in trial-log.jsonl. Never raises for a missing file."""
    assert trial.wd is not None
    copied = []
    config = trial.config_dir()
    for move in poll_moves(trial.wd.poll_state):
        src = moved_source(move, config)
        if src is None:
            note = (f"poll-state.json names a transcript the session left that is not one of this session's CLI "
                    f"({str(move.get('from_path'))[:200]}): it was not copied into {MOVED_FROM}/")
            if note not in trial.facts.notes:
                trial.facts.notes.append(note)
                trial.journal.log("collect", "moved_from_refused", from_path=str(move.get("from_path")),
                                  from_session_id=move.get("from_session_id"))
            continue
        dest = trial.wd.moved_from / src.name
        try:
            copy_transcript(src, dest)
            copied.append(dest.name)
            for sub in sorted(subagents_dir(src).glob("*.jsonl")):
                copy_transcript(sub, subagents_dir(dest) / sub.name)
        except OSError:
            continue
        note = move_note(move)
        if note not in trial.facts.notes:
            trial.facts.notes.append(note)
    return copied
