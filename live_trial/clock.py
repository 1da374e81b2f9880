"""UTC times as the harness writes and reads them: ISO 8601 with a ``Z`` (``2026-12-01T09:42:37.123Z``).

Every time in a record the harness writes (trial-state.json, trial-log.jsonl, poll-state.json, verdict.json,
evaluation.json, the watch ledger, notifications.jsonl) is :func:`iso_z` of a moment, with milliseconds; a time a
person reads in a sentence carries whole seconds (``timespec="seconds"``). :func:`parse_iso_z` and :func:`epoch_of`
read such a text back, and any other ISO 8601 text with an offset; :func:`epoch_or_none` is the reading that never
raises (a transcript's ``timestamp``, a record of unknown shape).

Bottom floor: every subpackage may import it; it imports nothing of the package.
"""
from __future__ import annotations

import math
from datetime import datetime, timezone

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any

#: ``timespec`` values :func:`iso_z` accepts: the records' milliseconds, or whole seconds for a sentence.
TIMESPECS = ("milliseconds", "seconds")
#: The UTC time at the start of a run id (``20261201T094237-a1b2``) and of a doctor's session name.
RUN_ID_TIME_FORMAT = "%Y%m%dT%H%M%S"


def as_utc(when: datetime) -> datetime:
    """``when`` as an aware datetime in UTC: a naive one is taken as UTC (every time the harness writes is)."""
    return when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc)


def run_id_time(when: datetime | None = None) -> str:
    """``20261201T094237``: ``when`` (default now) in UTC as the start of a run id (:data:`RUN_ID_TIME_FORMAT`)."""
    return as_utc(when or datetime.now(timezone.utc)).strftime(RUN_ID_TIME_FORMAT)


def parse_run_id_time(text: str) -> datetime:
    """The aware UTC datetime of a run id's time part (``20261201T094237``). Raises ValueError for another text."""
    return datetime.strptime(text, RUN_ID_TIME_FORMAT).replace(tzinfo=timezone.utc)


def iso_z(when: datetime | float, *, timespec: str = "milliseconds") -> str:
    """``when`` as UTC ISO 8601 ending in ``Z``: ``2026-12-01T09:42:37.123Z`` (``timespec="milliseconds"``, the
    default) or ``2026-12-01T09:42:37Z`` (``"seconds"``); a finer part is cut, never rounded.

    ``when`` is an aware datetime (converted to UTC), a naive one (taken as UTC) or epoch seconds (int or float).
    Raises ValueError for another ``timespec``; what :meth:`datetime.fromtimestamp` raises for an epoch out of range
    (OverflowError, OSError, ValueError)."""
    if timespec not in TIMESPECS:
        raise ValueError(f"timespec must be one of {TIMESPECS}, not {timespec!r}")
    if isinstance(when, datetime):
        dt = as_utc(when)
    else:
        seconds = math.floor(when) if timespec == "seconds" else when
        dt = datetime.fromtimestamp(seconds, timezone.utc)
    return dt.astimezone(timezone.utc).isoformat(timespec=timespec).replace("+00:00", "Z")


def utc_now() -> str:
    """Now as :func:`iso_z` writes it (milliseconds, ``Z``): the time stamp of every record the harness writes."""
    return iso_z(datetime.now(timezone.utc))


def parse_iso_z(text: str) -> datetime:
    """An aware datetime from an ISO 8601 text: ``...Z`` as :func:`iso_z` writes it, or any offset (``+09:00``); a
    text without one is taken as UTC. Raises ValueError for a text that is no such time (``""``, ``"soon"``) and
    AttributeError for a value that is not a string."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return dt if dt.tzinfo else as_utc(dt)


def epoch_of(text: str) -> float:
    """Epoch seconds of an ISO 8601 text (:func:`parse_iso_z`; raises what it raises)."""
    return parse_iso_z(text).timestamp()


def epoch_or_none(value: Any) -> float | None:
    """Epoch seconds of ``value`` when it is a string :func:`epoch_of` reads; None for anything else (None, a
    number, an empty or unreadable text). Never raises."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return epoch_of(value)
    except ValueError:
        return None
