"""What one poll tick sees (:class:`Observation`), read by an :class:`Observer` before anything is decided.

An observation is all the I/O of a tick, in this order: the pane (alive, and its screen, in one tmux call once the
pane is known), the transcript's location (``transcript.paths.locate``; after a ``/clear`` the file the CLI's live
``sessions/<pid>.json`` names, :mod:`live_trial.transcript.locator`), that status file (only while its pid is alive),
the transcript's current turn (:class:`TurnCache`) classified with it and with the background work the screen shows, the
sizes of the output files of background tasks still running, and whether the completion marker exists. The pure
rules of :mod:`live_trial.trial.poll_rules` decide on it. Spec: seed 001 "poll" and "完了 = 二層判定".
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from live_trial.errors import SESSION_GONE, Blocked, RefusedInput
from live_trial.session.protocols import Backend, Screen
from live_trial.session.rules import pid_alive
from live_trial.transcript.locator import locate_current
from live_trial.transcript.paths import cli_session_status_path, find_cli_session, locate, read_cli_session_status
from live_trial.transcript.reader import TAIL_MAX_BYTES, complete_end_offset, read_from, read_tail
from live_trial.transcript.records import is_human_prompt
from live_trial.transcript.status import BUSY_GENERATING, IDLE_TURN_COMPLETE, Status, classify, gate_from_screen
from live_trial.transcript.turn import TurnWindow
from live_trial.trial.poll_state import Move, PendingMove, PollConfig
from live_trial.trial.wake import FileWake

#: The state word while the session has an id but its transcript does not exist yet.
NO_TRANSCRIPT = "NO_TRANSCRIPT"
#: The state word of a screen-only poll (no session id) that shows a dialog.
SCREEN_DIALOG = "SCREEN_DIALOG"


@dataclass(frozen=True)
class Followed:
    """A move of the session to a new transcript that this tick followed (its file exists)."""

    from_session_id: str | None
    """The session id it left."""
    to_session_id: str
    """The session id the CLI writes now."""
    from_path: str
    """The transcript it left."""
    to_path: str
    """The transcript read from now on."""

    def move(self, at: str) -> Move:
        """The state file's record of this move, seen at ``at``."""
        return Move(self.from_session_id, self.to_session_id, self.from_path, self.to_path, at)


@dataclass(frozen=True)
class Observation:
    """Everything one tick saw. A gone session or a missing tmux ends the observation at once (the fields after
    ``blocked`` keep their defaults then)."""

    alive: bool
    """The session exists and its pane's process has not exited."""
    blocked: str | None = None
    """``tmux_missing: …`` when tmux could not be run, else None."""
    capture: str = ""
    """The pane's visible screen."""
    screen_hash: str | None = None
    """``sha256:<hex>`` of the screen masked by ``screen.mask_volatile`` (its change is progress)."""
    screen_busy: bool = False
    """A spinner line is on screen."""
    screen_retrying: str | None = None
    """The CLI's API-retry line (``screen.api_retry``) when it is on screen: it waits to send a failed request again."""
    transcript_path: str | None = None
    """The transcript followed after this tick (it may not exist yet); None without a session id."""
    transcript_end: int | None = None
    """Byte offset after that file's last complete line; None when the file does not exist."""
    new_records: int = 0
    """Records read this tick that the previous tick had not seen."""
    status: Status | None = None
    """The classification of the transcript's current turn (with a gate dialog on screen); None without one."""
    state: str | None = None
    """The state word: ``status.state``, else NO_TRANSCRIPT, BUSY_GENERATING, SCREEN_DIALOG or IDLE_TURN_COMPLETE."""
    screen_gate: str | None = None
    """``screen:<kind>:<question>`` of a gate dialog on screen that completed ``status``, else None."""
    followed: Followed | None = None
    """The move to a new transcript this tick followed, else None."""
    named_session: str | None = None
    """A new session id the CLI names whose transcript is not there yet, else None."""
    output_sizes: Mapping[str, int] | None = None
    """Size in bytes of each output file of a background task still running; None when no transcript was read."""
    marker_exists: bool = False
    """The completion marker file exists (always True when the poll has no marker: ``PollConfig.turn_end``)."""


@dataclass(frozen=True)
class _Reading:
    """What a tick read of the transcript (the same-named fields of :class:`Observation`)."""

    end: int | None = None
    new_records: int = 0
    status: Status | None = None
    screen_gate: str | None = None
    output_sizes: Mapping[str, int] | None = None


_UNREAD = _Reading()


class TurnCache:
    """The transcript records of the current turn, kept between the ticks of one :func:`poll` call.

    The first tick reads the tail back to the newest human prompt (:func:`live_trial.transcript.reader.read_tail`),
    later ticks only the complete lines written since (:func:`~live_trial.transcript.reader.read_from`), a tick with
    none reads nothing. A trial is one long turn: re-reading its tail every tick cost 110 ms on a 13 MB turn, against
    about 30 ms with this cache (benchmarks/status.py, "one long turn"). The records are kept as a
    :class:`live_trial.transcript.turn.TurnWindow` (the newest assistant message and the older records that still
    matter), so classifying them costs the same on the turn's first tool call and its thousandth. The tail is read
    afresh when the file shrinks or is replaced, or when the records read since were parsed from more than
    ``REREAD_BYTES`` (an over-long line counts only the bytes of its summary).
    """

    REREAD_BYTES = TAIL_MAX_BYTES + TAIL_MAX_BYTES // 4

    def __init__(self, previous: Path | None = None) -> None:
        self.path: Path | None = None
        self.previous = previous
        self.start = self.end = self.held = 0
        self.window = TurnWindow()

    def move_to(self, path: Path) -> None:
        """The session continues in ``path`` (a moved transcript): keep the records read so far (the turn the new
        file continues) and read the new file from its start."""
        self.previous, self.path, self.start, self.end = self.path, path, 0, 0

    def records(self, path: Path, end: int) -> tuple[list[dict[str, Any]], int]:
        """``(records, how many are new since the last call)`` for ``path`` whose complete lines end at byte
        ``end``; records in file order (the classifier orders them). A moved-to file whose tail holds no human
        prompt yet is read after the tail of the file it moved from (``previous``). Never raises for I/O (a missing
        file reads as no records)."""
        if path == self.path and end == self.end:
            return self.window.records(), 0
        if path != self.path or end < self.end or self.held + (end - self.end) > self.REREAD_BYTES:
            first = self.path is None
            tail = read_tail(path)
            self.path, self.start, self.end, items = path, tail.start_offset, tail.end_offset, tail.records
            self.held = tail.parsed_bytes
            if self.previous is not None and self.previous != path and not any(map(is_human_prompt, items)):
                earlier = read_tail(self.previous)
                items, self.held = earlier.records + items, self.held + earlier.parsed_bytes
            self.window = TurnWindow(items)
            return self.window.records(), len(items) if first else 0
        new, new_end = read_from(path, self.end, until=end)
        self.held, self.end = self.held + new_end - self.end, new_end
        self.window.add(new)
        return self.window.records(), len(new)


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def output_sizes(status: Status) -> dict[str, int]:
    """Size in bytes of the output file of each background task still running (``status.background``); a file that
    cannot be stat'ed is left out. Follows an agent's symlink to its subagent transcript."""
    sizes: dict[str, int] = {}
    for task in (status.background or {}).get("tasks") or []:
        path = task.get("output_file")
        if path:
            try:
                sizes[path] = os.stat(path).st_size
            except OSError:
                continue
    return sizes


class Observer:
    """The I/O of one poll call's ticks: :meth:`observe` reads a tick, :meth:`watch` arms the file wake.

    It keeps what a pane and a transcript keep between ticks: the pane id and pid (asked once: a pane keeps them),
    the transcript followed and the session id it belongs to (the last move's, when the state has moves), the
    records of the current turn, and whose ``sessions/<pid>.json`` was read last (for the file wake).
    """

    def __init__(self, cfg: PollConfig, backend: Backend, screen: Screen, marker: Path, config: Path,
                 moves: Sequence[Move], waker: FileWake | None = None) -> None:
        self.cfg, self.backend, self.screen, self.marker, self.config = cfg, backend, screen, marker, config
        #: Woken by writes to the files the next tick decides on (:meth:`watch`); None: the timed tick only.
        self.waker = waker
        self.path: Path | None = Path(cfg.transcript_path) if cfg.transcript_path else (
            locate(cfg.session_id, cfg.cwd, config) if cfg.session_id else None)
        self.current_id = moves[-1].to_session_id if moves else cfg.session_id
        if moves and not cfg.transcript_path:
            self.path = Path(moves[-1].to_path)
        self.turns = TurnCache(Path(moves[-1].from_path) if moves else None)
        self.pane_id: str | None = None
        self.pane_pid: int | None = None
        self.cli_pid: int | None = None

    def watch(self, pending: PendingMove | None) -> None:
        """Watch what the next tick decides on: the transcript, the marker, the CLI's status file, and the file of
        the session the CLI named whose transcript has not appeared (the state's ``pending`` move). No-op without a
        waker."""
        if self.waker is None:
            return
        pid = self.cli_pid or self.pane_pid
        self.waker.watch([self.path, self.marker, cli_session_status_path(self.config, pid) if pid else None,
                          locate(pending.to_session_id, self.cfg.cwd, self.config) if pending else None])

    def observe(self, pending: PendingMove | None) -> Observation:
        """One tick's observation; ``pending``: the state's pending move (watched from now on). Raises RefusedInput
        from the backend for anything but a gone session; a missing tmux is observed (``blocked``), not raised."""
        try:
            capture = self._screen()
        except Blocked as exc:
            return Observation(alive=False, blocked=f"tmux_missing: {exc.message}")
        except RefusedInput as exc:
            if exc.code in (SESSION_GONE, "refused_input"):
                return Observation(alive=False)
            raise
        if capture is None:
            return Observation(alive=False)
        screen_hash = "sha256:" + hashlib.sha256(self.screen.mask_volatile(capture).encode("utf-8")).hexdigest()
        busy = bool(self.screen.is_busy(capture))
        retrying = self.screen.api_retry(capture)
        if self.path is not None and not self.path.exists() and self.current_id and not self.cfg.transcript_path:
            self.path = locate(self.current_id, self.cfg.cwd, self.config)
        self.watch(pending)       # before reading them: a write from now on wakes the wait after this tick
        cli_doc, followed, named = self._follow() if self.path is not None else (None, None, None)
        read = self._read(self.path, capture, cli_doc) if self.path is not None and self.path.exists() else _UNREAD
        if read.status is not None:
            state = read.status.state
        elif self.cfg.session_id:
            state = BUSY_GENERATING if busy else NO_TRANSCRIPT
        else:  # screen only: busy from the spinner line; a dialog is never idle
            dialog = self.screen.dialog(capture)
            state = BUSY_GENERATING if busy else (SCREEN_DIALOG if dialog else IDLE_TURN_COMPLETE)
        return Observation(alive=True, capture=capture, screen_hash=screen_hash, screen_busy=busy,
                           screen_retrying=retrying,
                           transcript_path=str(self.path) if self.path else None, transcript_end=read.end,
                           new_records=read.new_records, status=read.status, state=state, screen_gate=read.screen_gate,
                           followed=followed, named_session=named, output_sizes=read.output_sizes,
                           marker_exists=self.cfg.turn_end or self.marker.is_file())

    def _screen(self) -> str | None:
        """The visible screen, or None when the session is gone or its pane dead (one tmux call once the pane is
        known)."""
        if self.pane_id is None:
            row = self.backend.pane(self.cfg.session)
            if row is None or row.dead:
                return None
            self.pane_id, self.pane_pid = row.pane_id, row.pane_pid or 0
        alive, capture = self.backend.probe(self.cfg.session, self.pane_id)
        return capture if alive else None

    def _cli_status(self) -> dict[str, Any] | None:
        """The CLI's sessions/<pid>.json, only when that pid is alive (it stays ``busy`` after SIGKILL): the pane's
        pid first (the CLI is the pane's command), else the file whose sessionId is the session followed now."""
        pid = self.pane_pid
        doc = read_cli_session_status(self.config, pid) if pid else None
        session_id = self.current_id or self.cfg.session_id
        if doc is None and session_id:
            found = find_cli_session(self.config, session_id)
            if found:
                pid, doc = found
        if doc is None or not pid or not pid_alive(int(pid)):
            return None
        return doc

    def _follow(self) -> tuple[dict[str, Any] | None, Followed | None, str | None]:
        """``(CLI status, the move followed, a session named whose file is missing)``. When the status names another
        session id (``/clear``), the CLI continues in a new file next to the old one
        (:mod:`live_trial.transcript.locator`): read that one from now on, once it exists."""
        cli_doc = self._cli_status()
        self.cli_pid = _int_or_none((cli_doc or {}).get("pid")) or self.pane_pid or None
        if self.cfg.transcript_path or not self.current_id or self.path is None:
            return cli_doc, None, None
        now = locate_current(self.current_id, self.cfg.cwd, self.config, cli_doc, known_path=self.path)
        if now.moved_from is None:
            return cli_doc, None, None
        if not now.path.exists():
            return cli_doc, None, now.session_id
        followed = Followed(self.current_id, now.session_id, str(self.path), str(now.path))
        self.current_id, self.path = now.session_id, now.path
        self.turns.move_to(now.path)
        return cli_doc, followed, None

    def _read(self, path: Path, capture: str, cli_doc: dict[str, Any] | None) -> _Reading:
        """The transcript's part of the observation (``path`` exists): its end, the new records, the classification
        (completed by a gate dialog on screen), the background outputs' sizes."""
        end = complete_end_offset(path)
        records, new = self.turns.records(path, end)
        status = classify(records, cli_doc, self.screen.background_work(capture))
        gate = None
        if status.state != IDLE_TURN_COMPLETE:
            box = self.screen.dialog(capture)
            if box is not None:
                status = gate_from_screen(status, box.kind, box.question, [o.label for o in box.options])
                gate = f"screen:{box.kind}:{box.question}"
        return _Reading(end, new, status, gate, output_sizes(status))
