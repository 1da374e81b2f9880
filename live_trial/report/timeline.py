"""A trial's timeline from what it recorded: the phases (prepare, boot, send, the session's states, collect,
evaluate, verdict) as bars with their durations, and the moments (nudges, answered questions, STALL decisions,
warnings) as marks.

Sources, all in the workdir: ``trial-log.jsonl`` (every decision with its time; a ``state`` record each time what
the session does changes: its state, the tool it waits on, its background work), ``trial-state.json``
(``started_at``), ``poll-state.json`` (its exit history, for a trial whose log holds no ``state`` records) and the
verdict (``written_at``). Nothing is guessed: a span the records do not bound is not drawn, and the timeline says so
in its notes. Pure reading; a missing or damaged file gives a shorter timeline, never an error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from live_trial.clock import epoch_or_none
from live_trial.errors import PollExit
from live_trial.jsonfile import parse_json
from live_trial.stop_reasons import StopReason
from live_trial.workdir_files import POLL_STATE, TRIAL_LOG, TRIAL_STATE

PREPARE_STEPS = ("tools", "rehearsal", "folder", "watches", "harness")
LANES = ("prepare", "boot", "send", "session", "collect", "evaluate", "verdict")
#: Poll decisions that end the session's part of the trial.
POLL_ENDS = (PollExit.DONE, PollExit.HARD_CAP, StopReason.TRANSCRIPT_MOVED)
#: STALL decisions after which polling goes on.
STALL_GOES_ON = ("extend", "nudge")


@dataclass
class Bar:
    """One span: its ``lane`` (:data:`LANES`), ``label``, start and end in seconds from the trial's start, ``kind``
    (the phase, or the session's state in lower case: a CSS class) and a longer ``title``."""

    lane: str
    label: str
    start_s: float
    end_s: float
    kind: str
    title: str = ""

    @property
    def duration_s(self) -> float:
        """Seconds the span lasted (never negative)."""
        return max(0.0, self.end_s - self.start_s)


@dataclass
class Mark:
    """One moment: ``at_s`` seconds from the trial's start, what happened (``label``), its ``kind`` (nudge, gate,
    stall, warn, move)."""

    at_s: float
    label: str
    kind: str


@dataclass
class Timeline:
    """The trial's bars and marks; ``started_at`` (UTC ISO) is second 0; ``total_s`` the last second drawn;
    ``notes`` say what could not be drawn and why; ``state_totals`` seconds per session state."""

    started_at: str | None = None
    total_s: float = 0.0
    bars: list[Bar] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def lanes(self) -> list[str]:
        """The lanes that have a bar or a mark, in the order of :data:`LANES`."""
        used = {b.lane for b in self.bars} | ({"session"} if self.marks else set())
        return [lane for lane in LANES if lane in used]

    @property
    def state_totals(self) -> dict[str, float]:
        """Seconds spent in each state of the session, summed over its spans, longest first."""
        totals: dict[str, float] = {}
        for bar in self.bars:
            if bar.lane == "session":
                totals[bar.kind] = totals.get(bar.kind, 0.0) + bar.duration_s
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def read_json_dict(path: Path) -> dict | None:
    """A JSON object from ``path``, or None when it is missing, unreadable or not an object."""
    try:
        doc = parse_json(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read_log(workdir: Path) -> tuple[list[dict], int]:
    """``(records, skipped)``: the decision records of ``trial-log.jsonl`` that carry a time, in file order, and how
    many lines were not such a record."""
    try:
        lines = (Path(workdir) / TRIAL_LOG).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return [], 0
    out, skipped = [], 0
    for line in lines:
        if not line.strip():
            continue
        try:
            rec = parse_json(line)
        except ValueError:
            skipped += 1
            continue
        if isinstance(rec, dict) and epoch_or_none(rec.get("at")) is not None and isinstance(rec.get("step"), str):
            out.append(rec)
        else:
            skipped += 1
    return out, skipped


def _seconds(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def build(workdir: Path, verdict: dict | None = None) -> Timeline:
    """The :class:`Timeline` of the trial in ``workdir`` (``verdict``: its verdict.json when read already)."""
    workdir = Path(workdir)
    records, skipped = read_log(workdir)
    state = read_json_dict(workdir / TRIAL_STATE) or {}
    verdict = verdict or {}
    t0 = epoch_or_none(state.get("started_at")) or epoch_or_none(verdict.get("started_at")) or (
        epoch_or_none(records[0]["at"]) if records else None)
    tl = Timeline(started_at=state.get("started_at") or verdict.get("started_at"))
    if t0 is None:
        tl.notes.append(f"no {TRIAL_LOG} and no start time: nothing to draw")
        return tl
    if skipped:
        tl.notes.append(f"{skipped} line(s) of {TRIAL_LOG} were not decision records and are left out")
    _Walk(tl, t0).run(records, workdir, epoch_or_none(verdict.get("written_at")))
    return tl


class _Walk:
    """One pass over the decision records, in the order they were written."""

    def __init__(self, tl: Timeline, t0: float) -> None:
        self.tl, self.t0 = tl, t0
        self.cursor = 0.0             # where the next phase starts
        self.states: list[tuple[float, dict]] = []
        self.send_end: float | None = None
        self.poll_end: float | None = None

    def bar(self, lane: str, label: str, start: float, end: float, kind: str, title: str = "") -> None:
        self.tl.bars.append(Bar(lane, label, start, max(start, end), kind, title or label))

    def run(self, records: Iterable[dict], workdir: Path, written_at: float | None) -> None:
        prepare_end = None
        for rec in records:
            at = epoch_or_none(rec["at"])
            assert at is not None               # read_log keeps only records with a time
            t = at - self.t0
            step, decision = rec["step"], str(rec.get("decision") or "")
            if step in PREPARE_STEPS and self.send_end is None:
                prepare_end = t
            elif step == "boot":
                self._boot(rec, t, decision)
            elif step in ("send", "loading") and self.poll_end is None and not self.states:
                self._send(t, decision, step)
            elif step == "state":
                self.states.append((t, rec))
            elif step in ("poll", "stall", "nudge"):
                self._poll(rec, t, step, decision)
            elif step == "launch":
                self.tl.marks.append(Mark(t, f"launch {decision}: {rec.get('skill_calls') or ''}".rstrip(": "),
                                          "stall"))
            elif step in ("collect", "cleanup"):
                self._collect(t, decision)
            elif step == "evaluate":
                start = self.cursor
                self.bar("evaluate", f"evaluate: {decision}", start, t, "evaluate",
                         "; ".join(str(b) for b in rec.get("blockers") or []) or decision)
                self.cursor = t
        if prepare_end is not None and not any(b.lane in ("prepare", "boot") for b in self.tl.bars):
            self.bar("prepare", "prepare", 0.0, prepare_end, "prepare")
            self.cursor = max(self.cursor, prepare_end)
        self._session(workdir)
        if written_at is not None:
            end = written_at - self.t0
            self.bar("verdict", "verdict written", min(self.cursor, end), end, "verdict")
            self.cursor = max(self.cursor, end)
        self.tl.total_s = max([self.cursor] + [b.end_s for b in self.tl.bars] + [m.at_s for m in self.tl.marks])

    def _boot(self, rec: dict, t: float, decision: str) -> None:
        elapsed = _seconds(rec.get("elapsed_s"))
        start = t - elapsed if decision == "READY" and elapsed is not None else self.cursor
        if start > 0.0:
            self.bar("prepare", "prepare", 0.0, start, "prepare", "tools, folder, rehearsal server")
        self.bar("boot", f"boot: {decision}", start, t, "boot" if decision == "READY" else "fail",
                 f"boot {decision}" + (f": {rec.get('problem')}" if rec.get("problem") else ""))
        self.cursor = t

    def _send(self, t: float, decision: str, step: str) -> None:
        if step == "send" and self.send_end is None:
            self.bar("send", f"send: {decision}", self.cursor, t, "send" if decision == "delivered" else "fail")
        elif self.tl.bars and self.tl.bars[-1].lane == "send":
            self.tl.bars[-1].end_s = max(self.tl.bars[-1].end_s, t)    # the skill listing check ends the send
        self.send_end = self.cursor = t

    def _poll(self, rec: dict, t: float, step: str, decision: str) -> None:
        mark = None
        if step == "poll" and decision == PollExit.GATE:
            answer = rec.get("answered")
            mark = ("gate", f"question answered: {answer}" if answer else "question left unanswered")
            if not answer:
                self.poll_end = t
        elif step == "poll" and decision in POLL_ENDS:
            self.poll_end = t
            if decision != PollExit.DONE:
                mark = ("stall", decision)
        elif step == "poll" and decision in ("WARN", "warning"):
            mark = ("warn", str(rec.get("message") or rec.get("warning") or decision))
        elif step == "stall":
            mark = ("stall", f"STALL row {rec.get('row')}: {decision}")
            if decision not in STALL_GOES_ON:
                self.poll_end = t
        elif step == "nudge" and decision == "delivered":
            mark = ("nudge", f"nudge sent ({rec.get('file')})")
        if mark:
            self.tl.marks.append(Mark(t, mark[1], mark[0]))

    def _collect(self, t: float, decision: str) -> None:
        start = self.poll_end if self.poll_end is not None else self.cursor
        if self.tl.bars and self.tl.bars[-1].lane == "collect":
            self.tl.bars[-1].end_s = max(self.tl.bars[-1].end_s, t)
        else:
            if self.poll_end is None and self.states:
                self.poll_end = start = max(self.cursor, self.states[-1][0])
            self.bar("collect", f"collect: {decision}", start, t, "collect")
        self.cursor = max(self.cursor, t)

    def _session(self, workdir: Path) -> None:
        """The session's states as bars: each from its ``state`` record to the next, the last to the end of polling
        (or of the session's part when polling ended without a record saying so)."""
        collect_start = next((b.start_s for b in self.tl.bars if b.lane == "collect"), None)
        end = self.poll_end if self.poll_end is not None else collect_start
        if self.states:
            end = end if end is not None else self.cursor
            for i, (t, rec) in enumerate(self.states):
                until = self.states[i + 1][0] if i + 1 < len(self.states) else max(t, end)
                state = str(rec.get("decision") or "unknown")
                extra = ", ".join(f"{k} {rec[k]}" for k in ("tool", "background") if rec.get(k))
                self.bar("session", state + (f" · {extra}" if extra else ""), t, until, state.lower(),
                         f"{state}{f' ({extra})' if extra else ''}")
            return
        if self.send_end is not None and end is not None:
            self.bar("session", "polling", self.send_end, end, "polling",
                     "the session was polled; its state changes were not recorded")
            self.tl.notes.append("this trial's log has no state changes (written before they were recorded): the "
                                 "session is one bar, with the poll exits as marks")
        poll_state = read_json_dict(workdir / POLL_STATE) or {}
        for ex in poll_state.get("exits") or [] if not self.states else []:
            exit_at = epoch_or_none(ex.get("at")) if isinstance(ex, dict) else None
            if exit_at is not None:
                self.tl.marks.append(Mark(exit_at - self.t0, f"poll exit {ex.get('exit')}: {ex.get('reason')}",
                                          "stall"))
