"""Whether a "mostly done" PASS may still be reused: only while the watch it opened is open and within its deadline
(seed 000 rules 2-4: what the trial could not show is watched for 7 days, three failed checks close it).
A watch that failed (three ``ng``) or expired unchecked, or that the ledger no longer knows, means the PASS rests on
something nobody confirmed: the skill runs again, and its plan row says why. A confirmed watch makes the PASS whole.

Pure over the watches it is given (:func:`watch_standing`); :func:`rehearsal_ledger` reads the one ledger plan reads
itself, a rehearsal's own (``<workdir>/rehearsal-watches/watches.json``: a rehearsal's watch never goes to the eval
root's ledger, :mod:`live_trial.notices.verdict_watch`).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.clock import iso_z, parse_iso_z
from live_trial.jsonfile import parse_json
from live_trial.workdir_files import LEDGER_FILE, REHEARSAL_WATCHES

#: How long a watch stays open unconfirmed before it expires (seed 000 rule 4: 7 days from ``since``).
WATCH_DEADLINE = timedelta(days=7)


def deadline_of(watch: Mapping[str, Any]) -> datetime | None:
    """When ``watch`` expires unconfirmed (``since`` + 7 days), None when its ``since`` cannot be read."""
    try:
        return parse_iso_z(str(watch["since"])) + WATCH_DEADLINE
    except (KeyError, ValueError):
        return None


def past_deadline(watch: Mapping[str, Any], now: datetime) -> bool:
    """True for an open watch whose deadline has passed (the daily sweep has not closed it yet)."""
    deadline = deadline_of(watch)
    return watch.get("status") == "open" and deadline is not None and now >= deadline


def watch_standing(doc: Mapping[str, Any], watches: Iterable[Mapping[str, Any]], now: datetime) -> tuple[bool, str]:
    """``(reusable, why)`` for the PASS ``doc`` (a verdict document) as far as its watch goes: a PASS that is not
    mostly done (``goal_ledger`` done) needs none; a mostly-done PASS is reusable while its watch (``watch_id``, looked
    up in ``watches``: the ledger's watches, open and closed) is open and within its deadline, or after it confirmed
    what the trial could not show; not after it failed, expired, was superseded, or when it is unknown."""
    if doc.get("goal_ledger") != "mostly_done":
        return True, ""
    wid = doc.get("watch_id")
    if not wid:
        return False, "the last PASS was mostly done and registered no watch: nobody confirms what it could not show"
    watch = next((w for w in watches if w.get("id") == wid), None)
    if watch is None:
        return False, f"the last PASS was mostly done and its watch {wid} is not in the ledger"
    status = watch.get("status")
    if status == "confirmed":
        return True, f"its watch {wid} confirmed what it could not show"
    if status == "failed":
        return False, (f"the last PASS was mostly done and its watch {wid} failed ({watch.get('ng', 0)} × ng): "
                       f"{watch.get('unverified')} was not confirmed, so the skill runs again")
    if status == "expired" or past_deadline(watch, now):
        deadline = deadline_of(watch)
        on = f" on {iso_z(deadline, timespec='seconds')}" if deadline else ""
        return False, (f"the last PASS was mostly done and its watch {wid} expired unchecked{on}: "
                       f"{watch.get('unverified')} was never confirmed, so the skill runs again")
    if status != "open":
        return False, f"the last PASS was mostly done and its watch {wid} is {status}"
    deadline = deadline_of(watch)
    return True, f"its watch {wid} is open until {iso_z(deadline, timespec='seconds') if deadline else '?'}"


def rehearsal_ledger(workdir: Path) -> list[Mapping[str, Any]]:
    """The watches of a rehearsal's own ledger in ``workdir`` (empty when it has none or it cannot be read: then a
    mostly-done PASS's watch is not found, and the skill runs again)."""
    path = Path(workdir) / REHEARSAL_WATCHES / LEDGER_FILE
    try:
        doc = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    watches = doc.get("watches") if isinstance(doc, dict) else None
    return [w for w in watches if isinstance(w, dict)] if isinstance(watches, list) else []
