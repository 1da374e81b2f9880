"""The poll loop: wait for DONE, a GATE, a STALL or the HARD_CAP, with a resumable state file.

Spec: seed 001 "poll" (exit table) and "完了 = 二層判定". One tick:

1. HARD_CAP: elapsed since ``started_at`` (kept in the state file) >= ``hard_cap_s`` -> HARD_CAP (exit 1);
   a ``WARN: HARD_CAP 80%`` warning once at ``hard_cap_warn_ratio``.
2. The session: gone, or its pane dead -> STALL reason ``session_gone`` at once (exit 2).
3. Observe: the screen (masked by ``screen.mask_volatile``) and the transcript (grown since the stored
   byte offset?); classify the transcript's tail with the CLI's ``sessions/<pid>.json`` when that pid is alive and
   the background work the screen shows (``screen.background_work``). When that status file names another session id
   (``/clear``), follow the session into its new transcript (``trial.moves``; recorded in the state's ``moves``).
4. GATE (exit 4) when the state is GATE on ``done_stable_ticks`` consecutive ticks.
5. DONE (exit 0) when the marker file exists AND the state is IDLE_TURN_COMPLETE AND the screen shows no busy
   spinner: at once when the CLI itself said the turn ended (its ``turn_duration`` record and its live status
   ``idle``; nothing outstanding, or the state would not be IDLE_TURN_COMPLETE), else on ``done_stable_ticks``
   consecutive ticks spanning at least that many timed intervals (no live status to read, or a turn ended without
   ``turn_duration``).
6. Progress = the transcript grew, the masked screen changed, or the output file of a background task still running
   grew; none for ``stall_limit_s`` -> STALL (exit 2); its reason starts ``transcript_moved`` when the CLI named a
   new session whose transcript never appeared.
7. ``max_ticks`` ticks in this call -> TICK_BUDGET (exit 5): re-run the same command to continue.
tmux missing -> BLOCKED (exit 3). The state file is written (schema-validated, atomic) every tick.

Between ticks poll sleeps ``poll_interval_s`` or until the transcript, the CLI's status file or the marker changes
(``trial.wake``), whichever comes first; the tick after such a change judges at once. A screen still drawing the
spinner of a turn the CLI reported ended is looked at again after ``QUICK_RECHECK_S``.
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from live_trial.errors import Blocked, ExitCode, LiveTrialError, RefusedInput
from live_trial.jsonfile import read_json, write_json
from live_trial.policy import Policy
from live_trial.transcript.paths import config_dir, find_cli_session, locate, read_cli_session_status
from live_trial.transcript.reader import TAIL_MAX_BYTES, complete_end_offset, read_from, read_tail
from live_trial.transcript.records import is_human_prompt
from live_trial.transcript.status import BUSY_GENERATING, GATE, IDLE_TURN_COMPLETE, Status, classify, gate_from_screen
from live_trial.transcript.turn import TurnWindow
from live_trial.trial.moves import UNFOLLOWED, moved_session
from live_trial.trial.wake import FileWake

SCHEMA = "poll-state.schema.json"
STATE_VERSION = 1
EXIT_CODES = {"DONE": int(ExitCode.OK), "HARD_CAP": int(ExitCode.FAIL), "STALL": int(ExitCode.REFUSED),
              "BLOCKED": int(ExitCode.BLOCKED), "GATE": int(ExitCode.GATE), "TICK_BUDGET": int(ExitCode.TICK_BUDGET)}
NO_TRANSCRIPT = "NO_TRANSCRIPT"
EXIT_HISTORY_MAX = 200
#: A gate already reported (same tool_use id) is reported again only after it stayed this long: the answer
#: may take a moment to reach the transcript.
GATE_REPEAT_S = 5.0
#: The screen is looked at again this soon when it alone still shows a turn the CLI reported ended (it redraws
#: within about 10 ms on 2.1.197).
QUICK_RECHECK_S = 0.05


@dataclass
class PollConfig:
    """What to poll. ``marker``: the completion marker file; ``session``: tmux session name; ``session_id``:
    the CLI's session id (None: screen only); ``cwd``: the trial cwd (for the transcript slug); ``config_dir``:
    the CLI config folder (None: CLAUDE_CONFIG_DIR or ~/.claude); ``max_ticks``: ticks in this call (None: no
    budget); ``transcript_path`` overrides :func:`transcript.locate`."""

    marker: str | os.PathLike
    session: str
    session_id: str | None
    cwd: str | os.PathLike | None
    config_dir: str | os.PathLike | None
    state_file: str | os.PathLike
    policy: Policy
    max_ticks: int | None = None
    transcript_path: str | os.PathLike | None = None


@dataclass
class PollResult:
    """How a poll call ended. ``exit`` DONE|STALL|GATE|HARD_CAP|TICK_BUDGET|BLOCKED, ``code`` its exit code,
    ``reason`` (e.g. ``session_gone``, ``no_progress``), ``status`` the last classification (None without a
    transcript), ``state`` its state word (or NO_TRANSCRIPT / the screen's), ``question`` for GATE,
    ``capture_tail`` the last screen lines, ``elapsed_s`` since the state file's ``started_at``, ``moves`` every
    move of the session to a new transcript seen so far (``{from_session_id, to_session_id, from_path, to_path,
    at}``; ``transcript_path`` is the file followed now)."""

    exit: str
    code: int
    reason: str
    status: Status | None
    state: str | None
    question: str | None
    capture_tail: list[str]
    elapsed_s: float
    ticks: int
    since_change_s: float
    transcript_path: str | None
    marker: str
    warnings: list[str] = field(default_factory=list)
    moves: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready (``poll --json``)."""
        d = {k: v for k, v in self.__dict__.items() if k != "status"}
        d["status"] = self.status.to_dict() if self.status else None
        return d


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


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

    def records(self, path: Path, end: int) -> tuple[list[dict], int]:
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


def load_state(cfg: PollConfig, marker: Path, now: float) -> dict:
    """The state file's content, or a fresh state. Raises RefusedInput when the file belongs to another
    session or marker (nothing is written then)."""
    path = Path(cfg.state_file)
    if path.exists():
        state = read_json(path, SCHEMA)
        if state["session"] != cfg.session or state["marker"] != str(marker):
            raise RefusedInput("the state file belongs to another poll "
                               f"(session {state['session']}, marker {state['marker']})", where=str(path),
                               fix="use a new --state-file for a new session or marker")
        state["calls"] += 1
        state["gate_streak"] = 0      # a new call (after an answer) needs fresh observations of a gate
        return state
    return {"version": STATE_VERSION, "session": cfg.session, "session_id": cfg.session_id, "marker": str(marker),
            "started_at": _iso(now), "updated_at": _iso(now), "calls": 1, "ticks": 0, "transcript_path": None,
            "transcript_offset": 0, "last_change_at": _iso(now), "last_screen_hash": None, "last_state": None,
            "done_streak": 0, "done_since": None, "gate_streak": 0, "last_gate_id": None,
            "warned": {"hard_cap": False}, "exits": [], "moves": [], "move_pending": None, "background_outputs": {}}


def _cli_session_status(pane_pid: int | None, cfg: PollConfig, config: Path,
                        session_id: str | None = None) -> dict | None:
    """The CLI's sessions/<pid>.json, only when that pid is alive (it stays ``busy`` after SIGKILL).
    The pane's pid first (the CLI is the pane's command), else the file whose sessionId matches ``session_id``
    (default: the configured one)."""
    from live_trial.session.rules import pid_alive

    pid = pane_pid
    doc = read_cli_session_status(config, pid) if pid else None
    session_id = session_id or cfg.session_id
    if doc is None and session_id:
        found = find_cli_session(config, session_id)
        if found:
            pid, doc = found
    if doc is None or not pid or not pid_alive(int(pid)):
        return None
    return doc


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _outputs_grew(state: dict, status: Status) -> bool:
    """Whether the output file of a background task still running grew since the last tick (a background job's
    output is its progress, like the transcript's growth; references/transcript-jsonl.md "Background work").
    Keeps the sizes in ``state["background_outputs"]`` (only the files of tasks still running)."""
    known = state.get("background_outputs") or {}
    sizes: dict[str, int] = {}
    for task in (status.background or {}).get("tasks") or []:
        path = task.get("output_file")
        if path:
            try:
                sizes[path] = os.stat(path).st_size       # follows an agent's symlink to its subagent transcript
            except OSError:
                continue
    state["background_outputs"] = sizes
    return any(path in known and size != known[path] for path, size in sizes.items())


def _cli_ended_turn(status: Status | None) -> bool:
    """The CLI itself says the turn ended: its ``turn_duration`` record is the newest event and its live status is
    ``idle`` (which it writes first, about 0.1 s earlier on 2.1.197). Nothing is outstanding then, or the state
    would not be IDLE_TURN_COMPLETE: background work, queued prompts and Stop hooks all keep it busy."""
    return (status is not None and status.state == IDLE_TURN_COMPLETE and status.ended_by == "turn_duration"
            and status.session_status == "idle")


def poll(cfg: PollConfig, backend: Any, *, clock: Callable[[], float] = time.time,
         sleep: Callable[[float], None] = time.sleep, on_tick: Callable[[dict], None] | None = None,
         screen: Any = None, watch: bool | None = None) -> PollResult:
    """Poll until a terminal exit or the tick budget; returns a :class:`PollResult` (never prints).

    ``backend``: a :class:`live_trial.session.backend.Backend` (pane_alive, pane_pid, capture).
    ``clock``: epoch seconds (wall clock: the state file carries it across processes); ``sleep``: seconds.
    ``on_tick(progress)`` gets a dict per tick (tick, elapsed_s, since_progress_s, stall_in_s, hard_cap_in_s,
    state, pending_tool, background (the kind of background work running, or None), screen_busy, transcript_offset,
    new_records, done_streak) and ``{"warn": text}`` once for the HARD_CAP warning.
    ``screen``: the TUI marker module (default :mod:`live_trial.session.screen`). ``watch``: wake on file changes
    between ticks (:class:`live_trial.trial.wake.FileWake`; default: only with the real ``time.sleep``, so a test's
    fake clock stays in control); ``sleep(0)`` is still called after each such wait, so a caller's sleep can stop
    the poll. Raises RefusedInput for a state file of another poll. Spec: seed 001 "poll".
    """
    if screen is None:
        from live_trial.session import screen as screen_module
        screen = screen_module
    pol = cfg.policy
    if any(ch in str(cfg.marker) for ch in "*?"):
        raise RefusedInput(f"the marker must be the exact completion marker path, not a glob: {cfg.marker}",
                           where="marker", fix="pass e.g. <workdir>/out/status.json")
    marker = Path(cfg.marker).absolute()
    config = Path(cfg.config_dir) if cfg.config_dir else config_dir()
    now = clock()
    state = load_state(cfg, marker, now)
    started = _epoch(state["started_at"])
    tpath = Path(cfg.transcript_path) if cfg.transcript_path else (
        locate(cfg.session_id, cfg.cwd, config) if cfg.session_id else None)
    moves = state.setdefault("moves", [])
    current_id = moves[-1]["to_session_id"] if moves else cfg.session_id
    if moves and not cfg.transcript_path:
        tpath = Path(moves[-1]["to_path"])
    warnings: list[str] = []
    ticks_here = 0
    capture = ""
    status: Status | None = None
    shown_state: str | None = state.get("last_state")
    pane_pid: int | None = None       # asked once per call: a pane keeps its pid
    pane_id: str | None = None        # the real backend: one tmux call a tick (``probe``) once the pane is known
    cli_pid: int | None = None        # whose sessions/<pid>.json was read (for the file watch)
    turn_cache = TurnCache(Path(moves[-1]["from_path"]) if moves else None)
    use_probe = hasattr(backend, "probe") and hasattr(backend, "pane")
    waker = FileWake() if (watch if watch is not None else sleep is time.sleep) else None
    gate_since: float | None = None   # when this call first saw the gate it may report

    def arm(waker: FileWake) -> None:
        """Watch what the next tick decides on: the transcript, the marker, the CLI's status file, a moved-to file."""
        pending = state.get("move_pending")
        pid = cli_pid or pane_pid
        waker.watch([tpath, marker, Path(config) / "sessions" / f"{pid}.json" if pid else None,
                     locate(pending["to_session_id"], cfg.cwd, config) if pending else None])

    def finish(exit_word: str, reason: str, question: str | None = None) -> PollResult:
        if waker is not None:
            waker.close()
        t = clock()
        state["exits"] = (state["exits"] + [{"exit": exit_word, "at": _iso(t), "reason": reason,
                                             "state": shown_state, "ticks": state["ticks"]}])[-EXIT_HISTORY_MAX:]
        state["updated_at"] = _iso(t)
        write_json(Path(cfg.state_file), state, SCHEMA)
        tail = [ln for ln in capture.rstrip("\n").split("\n")][-15:] if capture else []
        return PollResult(exit=exit_word, code=EXIT_CODES[exit_word], reason=reason, status=status,
                          state=shown_state, question=question, capture_tail=tail, elapsed_s=round(t - started, 3),
                          ticks=state["ticks"], since_change_s=round(t - _epoch(state["last_change_at"]), 3),
                          transcript_path=str(tpath) if tpath else None, marker=str(marker), warnings=warnings,
                          moves=list(moves))

    while True:
        now = clock()
        state["ticks"] += 1
        ticks_here += 1
        elapsed = now - started
        if elapsed >= pol.hard_cap_s:
            return finish("HARD_CAP", f"elapsed {elapsed:.0f}s >= hard_cap_s {pol.hard_cap_s:.0f}s")
        if elapsed >= pol.hard_cap_warn_ratio * pol.hard_cap_s and not state["warned"]["hard_cap"]:
            state["warned"]["hard_cap"] = True
            text = (f"WARN: HARD_CAP {pol.hard_cap_warn_ratio:.0%} ({elapsed:.0f}s of {pol.hard_cap_s:.0f}s); "
                    "raise env HARD_CAP if the trial is progressing normally")
            warnings.append(text)
            if on_tick:
                on_tick({"warn": text})
        try:
            if use_probe:
                if pane_id is None:
                    row = backend.pane(cfg.session)
                    if row is None or row.dead:
                        return finish("STALL", "session_gone")
                    pane_id, pane_pid = row.pane_id, row.pane_pid or 0
                alive, capture = backend.probe(cfg.session, pane_id)     # one tmux call: alive + screen
                if not alive:
                    return finish("STALL", "session_gone")
            else:
                if not backend.pane_alive(cfg.session):     # False for a gone session too
                    return finish("STALL", "session_gone")
                capture = backend.capture(cfg.session)
        except Blocked as exc:
            return finish("BLOCKED", f"tmux_missing: {exc.message}")
        except RefusedInput as exc:
            if exc.code in ("session_gone", "refused_input"):
                return finish("STALL", "session_gone")
            raise
        new_records = 0
        screen_gate: str | None = None
        screen_hash = "sha256:" + hashlib.sha256(screen.mask_volatile(capture).encode("utf-8")).hexdigest()
        screen_busy = bool(screen.is_busy(capture))
        progress = screen_hash != state["last_screen_hash"]
        state["last_screen_hash"] = screen_hash

        if tpath is not None and not tpath.exists() and current_id and not cfg.transcript_path:
            tpath = locate(current_id, cfg.cwd, config)
        cli_doc = None
        if waker is not None:     # before reading them: a write from now on wakes the wait below
            arm(waker)
        if tpath is not None:
            if pane_pid is None:
                try:
                    pane_pid = backend.pane_pid(cfg.session) or 0
                except LiveTrialError:
                    pane_pid = 0
            cli_doc = _cli_session_status(pane_pid, cfg, config, current_id)
            cli_pid = _int_or_none((cli_doc or {}).get("pid")) or pane_pid or None
            new_id = moved_session(current_id, cli_doc) if not cfg.transcript_path else None
            if new_id:
                # /clear: the CLI continues under a new session id, in a new file next to the old one.
                new_path = locate(new_id, cfg.cwd, config)
                if new_path.exists():
                    moves.append({"from_session_id": current_id, "to_session_id": new_id, "from_path": str(tpath),
                                  "to_path": str(new_path), "at": _iso(now)})
                    current_id, tpath, state["move_pending"], progress = new_id, new_path, None, True
                    turn_cache.move_to(new_path)
                elif not state.get("move_pending"):
                    state["move_pending"] = {"to_session_id": new_id, "since": _iso(now)}
        if tpath is not None and tpath.exists():
            state["transcript_path"] = str(tpath)
            end = complete_end_offset(tpath)
            records, new_records = turn_cache.records(tpath, end)
            if end != state["transcript_offset"]:
                progress = True
                state["transcript_offset"] = end
            background_screen = screen.background_work(capture) if hasattr(screen, "background_work") else None
            status = classify(records, cli_doc, background_screen)
            if status.state != IDLE_TURN_COMPLETE:
                box = screen.dialog(capture)
                if box is not None:
                    status = gate_from_screen(status, box.kind, box.question, [o.label for o in box.options])
                    screen_gate = f"screen:{box.kind}:{box.question}"
            shown_state = status.state
            progress = _outputs_grew(state, status) or progress
        elif cfg.session_id:
            status, shown_state = None, (BUSY_GENERATING if screen_busy else NO_TRANSCRIPT)
        else:  # screen only: busy from the spinner line; a dialog is never idle
            dialog = screen.dialog(capture)
            status = None
            shown_state = BUSY_GENERATING if screen_busy else ("SCREEN_DIALOG" if dialog else IDLE_TURN_COMPLETE)
        state["last_state"] = shown_state
        if progress:
            state["last_change_at"] = _iso(now)

        is_gate = status is not None and status.state == GATE
        state["gate_streak"] = state["gate_streak"] + 1 if is_gate else 0
        gate_since = (gate_since if gate_since is not None else now) if is_gate else None
        gate_needed = max(1, pol.done_stable_ticks)
        gate_keys = [k for k in ((status.pending_tool_id if status else None), screen_gate) if k]
        # a gate reported already (its answer may be on its way) is reported again only after GATE_REPEAT_S
        gate_ready = not (is_gate and set(gate_keys) & set(state.get("last_gate_keys") or [state["last_gate_id"]])) \
            or now - gate_since >= GATE_REPEAT_S - 1e-6
        marker_there = marker.is_file()
        done_now = marker_there and shown_state == IDLE_TURN_COMPLETE and not screen_busy
        state["done_streak"] = state["done_streak"] + 1 if done_now else 0
        state["done_since"] = (state.get("done_since") or _iso(now)) if done_now else None
        since_change = now - _epoch(state["last_change_at"])
        state["updated_at"] = _iso(now)
        write_json(Path(cfg.state_file), state, SCHEMA)
        if on_tick:
            on_tick({"tick": state["ticks"], "elapsed_s": round(elapsed, 1),
                     "since_progress_s": round(since_change, 1),
                     "stall_in_s": round(max(0.0, pol.stall_limit_s - since_change), 1),
                     "hard_cap_in_s": round(max(0.0, pol.hard_cap_s - elapsed), 1),
                     "state": shown_state, "pending_tool": status.pending_tool if status else None,
                     "background": (status.background or {}).get("kind") if status else None,
                     "screen_busy": screen_busy, "transcript_offset": state["transcript_offset"],
                     "new_records": new_records, "done_streak": state["done_streak"]})
        stable = 1 if _cli_ended_turn(status) else max(1, pol.done_stable_ticks)
        # file events make ticks milliseconds apart: the fallback's stable ticks must span their timed intervals, or
        # the CLI's early idle (0.1 s before its last records) would pass for a turn cancelled before any response
        held = now - _epoch(state["done_since"]) + 1e-6 if done_now else 0.0
        if is_gate and state["gate_streak"] >= gate_needed and gate_ready:
            state["last_gate_id"] = status.pending_tool_id
            state["last_gate_keys"] = gate_keys
            return finish("GATE", status.gate_kind or "gate", status.question)
        if state["done_streak"] >= stable and (stable == 1 or held >= (stable - 1) * pol.poll_interval_s):
            return finish("DONE", "marker + IDLE_TURN_COMPLETE + screen not busy"
                          + (" (interrupted)" if status and status.interrupted else "")
                          + (f" (api_error {status.api_error})" if status and status.api_error is not None else ""))
        if since_change >= pol.stall_limit_s:
            pending = state.get("move_pending")
            if pending:
                return finish("STALL", f"{UNFOLLOWED}: the CLI continues as session {pending['to_session_id']} "
                                       f"(since {pending['since']}) but no transcript of it was found")
            return finish("STALL", f"no progress for {since_change:.0f}s (stall_limit_s {pol.stall_limit_s:.0f})")
        if cfg.max_ticks is not None and ticks_here >= cfg.max_ticks:
            return finish("TICK_BUDGET", f"{ticks_here} ticks in this call")
        # only the screen still shows the turn the CLI ended: look again soon, not a whole interval later
        interval = QUICK_RECHECK_S if (marker_there and screen_busy and _cli_ended_turn(status)) else pol.poll_interval_s
        if waker is None:
            sleep(interval)
            continue
        arm(waker)
        waker.wait(interval)
        sleep(0)      # the caller's sleep decides whether to go on (a runner's stop request raises there)
