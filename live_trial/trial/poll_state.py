"""What a poll is asked to watch (:class:`PollConfig`) and what it keeps across calls (:class:`PollState`, the state
file ``poll --state-file``; ``schemas/poll-state.schema.json``), loaded and saved here and nowhere else.

The state file holds the clocks HARD_CAP and STALL count from, the streaks, the gate last reported and the moves of
the session, so a poll continues after a TICK_BUDGET exit or a SIGKILL of the poller. Every write is schema-validated
and atomic (:func:`live_trial.jsonfile.write_json`). A file is written back byte for byte as it was read: its keys
keep their order, and a key that a poll of an older release did not write is added (at the end) when first set.
Spec: seed 001 "poll".
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.clock import iso_z
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json, write_json
from live_trial.policy import Policy

SCHEMA = "poll-state.schema.json"
STATE_VERSION = 1
EXIT_HISTORY_MAX = 200


@dataclass
class PollConfig:
    """What to poll. ``marker``: the completion marker file; ``session``: tmux session name; ``session_id``:
    the CLI's session id (None: screen only); ``cwd``: the trial cwd (for the transcript slug); ``config_dir``:
    the CLI config folder (None: CLAUDE_CONFIG_DIR or ~/.claude); ``max_ticks``: ticks in this call (None: no
    budget); ``transcript_path`` overrides :func:`live_trial.transcript.paths.locate`; ``turn_end``: the end of the
    turn is DONE without a completion marker (a prompt of an activation case, README "Does it start by itself?")."""

    marker: str | os.PathLike[str]
    session: str
    session_id: str | None
    cwd: str | os.PathLike[str] | None
    config_dir: str | os.PathLike[str] | None
    state_file: str | os.PathLike[str]
    policy: Policy
    max_ticks: int | None = None
    transcript_path: str | os.PathLike[str] | None = None
    turn_end: bool = False


@dataclass(frozen=True)
class Move:
    """The session continued in a new transcript (``/clear``): one item of the state's ``moves``."""

    from_session_id: str | None
    """The session id it left (None when poll had none)."""
    to_session_id: str
    """The session id the CLI writes now."""
    from_path: str
    """The transcript it left."""
    to_path: str
    """The transcript poll follows from then on."""
    at: str
    """When poll saw the move (ISO 8601, ``Z``)."""

    def to_doc(self) -> dict[str, Any]:
        """The JSON object (keys in the schema's order)."""
        return {"from_session_id": self.from_session_id, "to_session_id": self.to_session_id,
                "from_path": self.from_path, "to_path": self.to_path, "at": self.at}


@dataclass(frozen=True)
class PendingMove:
    """The CLI named a new session id whose transcript has not appeared yet (``move_pending``)."""

    to_session_id: str
    """The session id the CLI named."""
    since: str
    """When poll first saw it named (ISO 8601, ``Z``)."""

    def to_doc(self) -> dict[str, Any]:
        """The JSON object."""
        return {"to_session_id": self.to_session_id, "since": self.since}


@dataclass(frozen=True)
class ExitRecord:
    """One exit of a poll call (an item of ``exits``, the newest 200 kept)."""

    exit: str
    """DONE | STALL | GATE | HARD_CAP | TICK_BUDGET | BLOCKED."""
    at: str
    """When the call ended (ISO 8601, ``Z``)."""
    reason: str
    """The exit's reason (e.g. ``session_gone``)."""
    state: str | None
    """The state word shown then."""
    ticks: int
    """Ticks over all calls by then."""

    def to_doc(self) -> dict[str, Any]:
        """The JSON object."""
        return {"exit": self.exit, "at": self.at, "reason": self.reason, "state": self.state, "ticks": self.ticks}


@dataclass(frozen=True)
class CallCounters:
    """What one poll call keeps between its ticks and never saves."""

    max_ticks: int | None = None
    """The tick budget of this call (None: none)."""
    ticks: int = 0
    """Ticks of this call so far."""
    gate_since: float | None = None
    """When this call first saw the gate it may report (epoch seconds), None while no gate shows."""


#: The keys of a fresh state, in the order they are written.
FRESH_KEYS = ("version", "session", "session_id", "marker", "started_at", "updated_at", "calls", "ticks",
              "transcript_path", "transcript_offset", "last_change_at", "last_screen_hash", "last_state", "done_streak",
              "done_since", "gate_streak", "last_gate_id", "warned", "exits", "moves", "move_pending",
              "background_outputs")


@dataclass(frozen=True)
class PollState:
    """The state file of one poll, field for field (``schemas/poll-state.schema.json``). Times are ISO 8601 strings
    with ``Z`` as stored; change it with :meth:`changed` (a new value, never in place)."""

    version: int
    """Format version (1)."""
    session: str
    """The tmux session polled."""
    session_id: str | None
    """The CLI's session id given to the first call (None: screen only)."""
    marker: str
    """Absolute path of the completion marker."""
    started_at: str
    """First tick of the first call: HARD_CAP counts from here."""
    updated_at: str
    """Last write."""
    calls: int
    """How many poll calls used this file."""
    ticks: int
    """Ticks over all calls."""
    transcript_path: str | None
    """The transcript read last (None before one existed)."""
    transcript_offset: int
    """Byte offset after the last complete transcript line seen."""
    last_change_at: str
    """Last progress (transcript grew, masked screen changed, a background output grew): STALL counts from here."""
    last_screen_hash: str | None
    """``sha256:<hex>`` of the last masked screen."""
    last_state: str | None
    """The state word of the last tick."""
    done_streak: int
    """Consecutive ticks that met DONE's conditions."""
    done_since: str | None
    """When the current DONE streak began."""
    gate_streak: int
    """Consecutive ticks of this call that saw GATE."""
    last_gate_id: str | None
    """tool_use id of the last gate reported."""
    warned_hard_cap: bool
    """The ``WARN: HARD_CAP 80%`` line was given (``warned.hard_cap``)."""
    exits: tuple[ExitRecord, ...]
    """Every call's exit, oldest first (at most 200)."""
    moves: tuple[Move, ...] = ()
    """Each move of the session to a new transcript, oldest first."""
    move_pending: PendingMove | None = None
    """A new session id the CLI named whose transcript has not appeared yet."""
    background_outputs: Mapping[str, int] = field(default_factory=dict)
    """Size in bytes of each output file of a background task still running, at the last tick."""
    last_gate_keys: tuple[str, ...] | None = None
    """What identified the last gate reported (its tool_use id, the dialog on screen); None before any."""
    keys: tuple[str, ...] = field(default=FRESH_KEYS, compare=False, repr=False)
    """The keys the file holds, in its order (not a key of the file)."""
    call: CallCounters = field(default_factory=CallCounters, compare=False)
    """This call's own counters (never saved)."""

    @classmethod
    def fresh(cls, cfg: PollConfig, marker: Path, now: float) -> PollState:
        """The state of a first call (no state file yet) at epoch ``now``."""
        t = iso_z(now)
        return cls(version=STATE_VERSION, session=cfg.session, session_id=cfg.session_id, marker=str(marker),
                   started_at=t, updated_at=t, calls=1, ticks=0, transcript_path=None, transcript_offset=0,
                   last_change_at=t, last_screen_hash=None, last_state=None, done_streak=0, done_since=None,
                   gate_streak=0, last_gate_id=None, warned_hard_cap=False, exits=(),
                   call=CallCounters(max_ticks=cfg.max_ticks))

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> PollState:
        """A state from the JSON object of a state file (already schema-valid)."""
        pending = doc.get("move_pending")
        return cls(version=doc["version"], session=doc["session"], session_id=doc["session_id"], marker=doc["marker"],
                   started_at=doc["started_at"], updated_at=doc["updated_at"], calls=doc["calls"], ticks=doc["ticks"],
                   transcript_path=doc["transcript_path"], transcript_offset=doc["transcript_offset"],
                   last_change_at=doc["last_change_at"], last_screen_hash=doc["last_screen_hash"],
                   last_state=doc["last_state"], done_streak=doc["done_streak"], done_since=doc.get("done_since"),
                   gate_streak=doc["gate_streak"], last_gate_id=doc["last_gate_id"],
                   warned_hard_cap=doc["warned"]["hard_cap"], exits=tuple(ExitRecord(**e) for e in doc["exits"]),
                   moves=tuple(Move(**m) for m in doc.get("moves") or ()),
                   move_pending=PendingMove(**pending) if pending else None,
                   background_outputs=dict(doc.get("background_outputs") or {}),
                   last_gate_keys=tuple(doc["last_gate_keys"]) if "last_gate_keys" in doc else None, keys=tuple(doc))

    def to_doc(self) -> dict[str, Any]:
        """The JSON object of the state file: the keys of :attr:`keys`, in that order."""
        mine = self.__dict__
        return {k: (_DOC_OF[k](self) if k in _DOC_OF else mine[k]) for k in self.keys}

    def changed(self, **changes: Any) -> PollState:
        """A copy with ``changes`` (field names; ``warned`` is ``warned_hard_cap``); a key the file did not hold yet
        is added after the others, in the order given. Raises TypeError for a name that is not a field. A copy of
        the instance dict, not :func:`dataclasses.replace`: poll changes its state a few times a tick, and replace
        costs ten times as much."""
        unknown = changes.keys() - _FIELD_NAMES
        if unknown:
            raise TypeError(f"PollState has no field {sorted(unknown)[0]!r}")
        new = object.__new__(PollState)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        missing = [_KEY_OF.get(k, k) for k in changes if _KEY_OF.get(k, k) not in self.keys and k not in _NOT_KEYS]
        if missing:
            new.__dict__["keys"] = self.keys + tuple(dict.fromkeys(missing))
        return new

    def ended(self, exit_word: str, reason: str, at: str) -> PollState:
        """A copy of this state with the call's exit recorded (the newest 200 kept) and ``updated_at`` = ``at``."""
        record = ExitRecord(exit=exit_word, at=at, reason=reason, state=self.last_state, ticks=self.ticks)
        return self.changed(exits=(self.exits + (record,))[-EXIT_HISTORY_MAX:], updated_at=at)

    @classmethod
    def load(cls, path: str | os.PathLike[str], cfg: PollConfig, marker: Path, now: float) -> PollState:
        """The state file at ``path`` for a new call (``calls`` + 1, the gate streak reset: a new call, after an
        answer, needs fresh observations of a gate), or a fresh state when there is none. Raises RefusedInput when
        the file is unreadable or not JSON or belongs to another session or marker, SchemaInvalid when it does not
        fit the schema (nothing is written then)."""
        path = Path(path)
        if not path.exists():
            return cls.fresh(cfg, marker, now)
        doc = read_json(path, SCHEMA)
        if doc["session"] != cfg.session or doc["marker"] != str(marker):
            raise RefusedInput("the state file belongs to another poll "
                               f"(session {doc['session']}, marker {doc['marker']})", where=str(path),
                               fix="use a new --state-file for a new session or marker")
        state = cls.from_doc(doc)
        return state.changed(calls=state.calls + 1, gate_streak=0, moves=state.moves,
                             call=CallCounters(max_ticks=cfg.max_ticks))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the state file (schema-validated, atomic). Raises SchemaInvalid before touching the disk."""
        write_json(Path(path), self.to_doc(), SCHEMA)


_FIELD_NAMES = frozenset(f.name for f in fields(PollState))
_KEY_OF = {"warned_hard_cap": "warned"}          # field -> the state file's key, where they differ
_NOT_KEYS = frozenset({"keys", "call"})
#: The state file's keys whose JSON is not the field's value as it is.
_DOC_OF: dict[str, Callable[[PollState], Any]]
_DOC_OF = {"warned": lambda s: {"hard_cap": s.warned_hard_cap}, "exits": lambda s: [e.to_doc() for e in s.exits],
           "moves": lambda s: [m.to_doc() for m in s.moves],
           "move_pending": lambda s: s.move_pending.to_doc() if s.move_pending else None,
           "background_outputs": lambda s: dict(s.background_outputs),
           "last_gate_keys": lambda s: list(s.last_gate_keys or ())}
