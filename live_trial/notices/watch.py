"""The watch ledger: results that could not be confirmed yet are watched until they are (seed 000, rules 2-4).

``<eval-root>/watches.json`` (schema ``watch-ledger.schema.json``, atomic writes, a file lock around each
read-modify-write) holds every watch, open or closed, with its history::

    {id, objective, unverified, evidence, since, lastCheckAt: null, lastListedAt: null, checks: 0, ng: 0,
     status: open|confirmed|failed|expired|superseded, closedAt, target, workdir, closure, notified: [kind],
     history: [...]}

- ``record_result(ok)`` closes the watch and notifies once ("confirmed").
- ``record_result(ng)`` counts; the third ng notifies once ("not working"), closes the watch and records
  ``failed_check`` as the last history entry. A closed watch refuses further results, so nothing can be
  written after ``failed_check`` (seed 000: a later success record must not overwrite it).
- ``due_watches`` lists open watches whose lastCheckAt and lastListedAt are both at least 24 h old and
  stamps lastListedAt, so a watch is listed (and checked) at most once a day.
- ``check_due`` starts one check-only evaluator per due watch (the starter is injectable); each must end
  with one watch result. Listing alone is never a check.
- ``sweep`` closes open watches 7 days past ``since`` that were never confirmed, notifies once and records
  ``failed_check``.
- ``supersede`` closes open watches whose skill changed since (``closure``, the behaviour-closure digest the trial
  tested, differs from today's: plan finds them), quietly: what was watched no longer describes the skill, and the
  skill runs again (README "Planning many skills").
- ``daily_maintenance`` (called first by run, and by cron through ``watch daily``) first sends again the
  notices whose webhook failed (:func:`live_trial.notices.resend.resend_failed`, on every call, at most once an hour per
  notice), then does the sweep and the due checks at most once per UTC day; the last date is kept in the ledger.
Every function takes a ``clock`` returning an aware UTC datetime.
"""
from __future__ import annotations

import fcntl
import os
import secrets
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from live_trial.acceptance.watch_reuse import WATCH_DEADLINE
from live_trial.clock import iso_z, parse_iso_z
from live_trial.errors import RefusedInput
from live_trial.jsonfile import make_private_dirs, read_json, write_json
from live_trial.judge.evidence import check_evidence
from live_trial.notices.notify import notify
from live_trial.notices.resend import resend_failed
from live_trial.workdir_files import LEDGER_FILE

LOCK_FILE = ".watches.lock"
SCHEMA = "watch-ledger.schema.json"
DUE_AFTER = timedelta(hours=24)
EXPIRE_AFTER = WATCH_DEADLINE      # seed 000 rule 4: plan's reuse rule counts the same 7 days
NG_LIMIT = 3

Clock = Callable[[], datetime]
# starter(watch, eval_root) -> {"result": "ok"|"ng", "note": str} or None (no valid result)
Starter = Callable[[dict, Path], "dict | None"]


def system_clock() -> datetime:
    """Now, as an aware UTC datetime."""
    return datetime.now(timezone.utc)


def ledger_path(eval_root: Path) -> Path:
    """``<eval-root>/watches.json``."""
    return Path(eval_root) / LEDGER_FILE


def empty_ledger() -> dict:
    """A ledger with no watches."""
    return {"version": 1, "lastMaintenanceDate": None, "watches": []}


def load_ledger(eval_root: Path) -> dict:
    """The ledger (schema-validated), or an empty one when the file does not exist. Raises RefusedInput when bad."""
    path = ledger_path(eval_root)
    return read_json(path, SCHEMA) if path.exists() else empty_ledger()


@contextmanager
def _locked(eval_root: Path) -> Iterator[dict]:
    """Hold the ledger lock; yield the ledger; write it back (validated, atomic) if the block changed it."""
    root = Path(eval_root)
    make_private_dirs(root)
    with os.fdopen(os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600), "r+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            ledger = load_ledger(root)
            before = repr(ledger)
            yield ledger
            if repr(ledger) != before:
                write_json(ledger_path(root), ledger, SCHEMA)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _find(ledger: dict, watch_id: str) -> dict:
    for w in ledger["watches"]:
        if w["id"] == watch_id:
            return w
    raise RefusedInput("no watch with this id", where=f"--id {watch_id}", code="unknown_watch",
                       fix="see every watch with `live-trial watch list`")


def _event(w: dict, now: datetime, event: str, note: str = "") -> None:
    w["history"].append({"at": iso_z(now), "event": event, "note": note})


def open_watches(eval_root: Path, target: str | None = None) -> list[dict]:
    """Open watches (optionally only those of ``target`` "plugin:skill"); plan shows such a skill as watching."""
    return [w for w in load_ledger(eval_root)["watches"]
            if w["status"] == "open" and (target is None or w.get("target") == target)]


def register_watch(eval_root: Path, *, objective: str, unverified: str, evidence: str = "",
                   target: str | None = None, workdir: str | None = None, closure: str | None = None,
                   clock: Clock = system_clock) -> dict:
    """Register a watch for a PASS given with ``unverified`` (seed 000 rule 2); return the new watch. ``closure``: the
    behaviour-closure digest the trial tested (kept, so plan can tell when the skill changed since).

    Raises RefusedInput when ``unverified`` or ``objective`` is empty (nothing written).
    """
    if not (unverified or "").strip():
        raise RefusedInput("a watch needs what is still unconfirmed", where="--unverified", code="refused_input",
                           fix='give --unverified "<what cannot be checked yet>"')
    if not (objective or "").strip():
        raise RefusedInput("a watch needs the objective it watches", where="objective", code="refused_input")
    now = clock()
    watch: dict[str, Any] = {
        "id": f"w-{secrets.token_hex(4)}", "objective": objective.strip(), "unverified": unverified.strip(),
        "evidence": (evidence or "").strip(), "since": iso_z(now), "lastCheckAt": None, "lastListedAt": None,
        "checks": 0, "ng": 0, "status": "open", "closedAt": None, "target": target, "workdir": workdir,
        "notified": [], "history": []}
    if closure:
        watch["closure"] = closure
    _event(watch, now, "registered", watch["unverified"])
    with _locked(eval_root) as ledger:
        ledger["watches"].append(watch)
    return watch


def record_goal(eval_root: Path, goal_result: str, evidence: str | None, unverified: str | None, *,
                objective: str, target: str | None = None, workdir: str | None = None,
                clock: Clock = system_clock) -> dict:
    """Apply :func:`check_evidence`; for a PASS with ``unverified`` register a watch.

    Returns ``{"kind": "done"|"mostly_done"|"not_done", "watch": dict|None}``. Raises RefusedInput
    (evidence_required / proxy_evidence) before anything is written: the disk stays byte-for-byte unchanged.
    """
    kind = check_evidence(goal_result, evidence, unverified)
    watch = None
    if kind == "mostly_done":
        watch = register_watch(eval_root, objective=objective, unverified=unverified or "", evidence=evidence or "",
                               target=target, workdir=workdir, clock=clock)
    return {"kind": kind, "watch": watch}


def record_result(eval_root: Path, watch_id: str, result: str, note: str, *, clock: Clock = system_clock,
                  lang: str | None = None, env: Mapping[str, str] | None = None, post=None) -> dict:
    """Record one check result (``watch --id ID --result ok|ng --note TEXT``); return the watch afterwards.

    ok: closes (status confirmed), notifies "confirmed" once. ng: counts; at the third, closes (status
    failed), records failed_check last and notifies "not working" once. Raises RefusedInput (nothing
    written) for an unknown id, a closed watch (code watch_closed), a result other than ok/ng, or an empty note.
    """
    if result not in ("ok", "ng"):
        raise RefusedInput(f"result must be ok or ng, not {result!r}", where="--result", code="refused_input")
    if not (note or "").strip():
        raise RefusedInput("a check result needs a note saying what was seen, counted", where="--note",
                           code="refused_input", fix='e.g. --note "2 replies found in the log since Monday"')
    if not ledger_path(eval_root).exists():
        raise RefusedInput("no watch with this id (there are no watches here)", where=f"--id {watch_id}",
                           code="unknown_watch", fix="check --eval-root")
    pending: list[tuple[str, dict]] = []
    with _locked(eval_root) as ledger:
        w = _find(ledger, watch_id)
        if w["status"] != "open":
            raise RefusedInput(f"this watch is closed ({w['status']})", where=f"--id {watch_id}", code="watch_closed",
                               fix="a closed watch keeps its last record; register a new one if needed")
        now = clock()
        w["checks"] += 1
        w["lastCheckAt"] = iso_z(now)
        _event(w, now, result, note.strip())
        if result == "ok":
            w.update(status="confirmed", closedAt=iso_z(now))
            pending.append(("confirmed", w))
        else:
            w["ng"] += 1
            if w["ng"] >= NG_LIMIT:
                w.update(status="failed", closedAt=iso_z(now))
                _event(w, now, "failed_check", f"{w['ng']} failed checks; last: {note.strip()}")
                pending.append(("watch_failed", w))
        for kind, watch in pending:
            watch["notified"].append(kind)
        snapshot = dict(w)
    for kind, watch in pending:
        notify(eval_root, kind, watch["objective"], note.strip(), lang, env=env, post=post,
               refs=_refs(watch), clock=lambda: iso_z(clock()))
    return snapshot


def _refs(w: dict) -> dict:
    return {k: v for k, v in {"watch_id": w["id"], "target": w.get("target"), "workdir": w.get("workdir")}.items() if v}


def _older(stamp: str | None, now: datetime, age: timedelta) -> bool:
    return stamp is None or now - parse_iso_z(stamp) >= age


def due_watches(eval_root: Path, *, clock: Clock = system_clock, stamp: bool = True) -> list[dict]:
    """Open watches whose lastCheckAt and lastListedAt are both >= 24 h old (or never set).

    With ``stamp`` (the default) each listed watch gets lastListedAt = now and a "listed" history entry,
    so it is not listed again for 24 h. No ledger file -> [] and nothing is created.
    """
    if not ledger_path(eval_root).exists():
        return []
    now = clock()
    with _locked(eval_root) as ledger:
        due = [w for w in ledger["watches"] if w["status"] == "open"
               and _older(w["lastCheckAt"], now, DUE_AFTER) and _older(w["lastListedAt"], now, DUE_AFTER)]
        if stamp:
            for w in due:
                w["lastListedAt"] = iso_z(now)
                _event(w, now, "listed")
        return [dict(w) for w in due]


def check_due(eval_root: Path, starter: Starter | None = None, *, clock: Clock = system_clock,
              lang: str | None = None, env: Mapping[str, str] | None = None, post=None) -> list[dict]:
    """Start one check-only evaluator per due watch and record the one result each must end with.

    Returns ``[{"id", "result": "ok"|"ng"|None, "note"}]``. A starter that gives no valid result leaves a
    "check_no_result" history entry (the watch stays listed for today, so it is not started again today).
    The default starter is :func:`live_trial.judge.evaluator.check_starter` (a ``claude -p`` with read-only tools).
    """
    if starter is None:
        from live_trial.judge.evaluator import check_starter
        starter = check_starter(env=env)
    out = []
    for w in due_watches(eval_root, clock=clock):
        answer = None
        try:
            answer = starter(w, Path(eval_root))
        except Exception as exc:  # noqa: BLE001 - one bad check must not stop the others
            answer = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        if answer and answer.get("result") in ("ok", "ng") and (answer.get("note") or "").strip():
            after = record_result(eval_root, w["id"], answer["result"], answer["note"], clock=clock,
                                  lang=lang, env=env, post=post)
            out.append({"id": w["id"], "result": answer["result"], "note": answer["note"], "status": after["status"]})
        else:
            reason = (answer or {}).get("error") or "the check gave no ok/ng result"
            with _locked(eval_root) as ledger:
                _event(_find(ledger, w["id"]), clock(), "check_no_result", reason)
            out.append({"id": w["id"], "result": None, "note": reason, "status": "open"})
    return out


def sweep(eval_root: Path, *, clock: Clock = system_clock, lang: str | None = None,
          env: Mapping[str, str] | None = None, post=None) -> list[dict]:
    """Close open watches 7 days past ``since`` (seed 000 rule 4); notify each once; return the closed watches.

    Each gets status expired, a failed_check history entry and one "watch_expired" notification. A second
    sweep finds them closed and notifies nothing. No ledger file -> [] and nothing is created.
    """
    if not ledger_path(eval_root).exists():
        return []
    now = clock()
    closed = []
    with _locked(eval_root) as ledger:
        for w in ledger["watches"]:
            if w["status"] == "open" and now - parse_iso_z(w["since"]) >= EXPIRE_AFTER:
                w.update(status="expired", closedAt=iso_z(now))
                _event(w, now, "failed_check", f"7 days without confirmation: {w['unverified']}")
                w["notified"].append("watch_expired")
                closed.append(dict(w))
    for w in closed:
        notify(eval_root, "watch_expired", w["objective"], w["unverified"], lang, env=env, post=post,
               refs=_refs(w), clock=lambda: iso_z(clock()))
    return closed


def supersede(eval_root: Path, watch_ids: list[str], *, clock: Clock = system_clock) -> list[str]:
    """Close the open watches ``watch_ids`` as superseded (their skill's behaviour closure changed since they were
    opened), with no notification; return the ids closed. Unknown or already closed ids are left alone. No ledger ->
    [] and nothing is created."""
    if not watch_ids or not ledger_path(eval_root).exists():
        return []
    now = clock()
    closed = []
    with _locked(eval_root) as ledger:
        for w in ledger["watches"]:
            if w["id"] in watch_ids and w["status"] == "open":
                w.update(status="superseded", closedAt=iso_z(now))
                _event(w, now, "superseded", "the skill's behaviour closure changed since the watch was opened")
                closed.append(w["id"])
    return closed


def daily_maintenance(eval_root: Path, starter: Starter | None = None, *, clock: Clock = system_clock,
                      lang: str | None = None, env: Mapping[str, str] | None = None, post=None,
                      force: bool = False) -> dict:
    """Resend failed notices, then sweep and check due watches at most once per UTC day (seed 000 rule 3's trap:
    nobody checks).

    run calls this first; cron calls ``live-trial watch daily``. Returns ``{"ran": bool, "date": "YYYY-MM-DD",
    "reason", "swept": [ids], "checked": [results], "resent": [ids]}``.

    ``resent`` lists the :func:`live_trial.notices.resend.notification_id` of each notice whose webhook had failed and
    that was sent again now (:func:`live_trial.notices.resend.resend_failed`; seed 000: a person is always told the
    outcome). That step runs on every call, before and regardless of the once-a-day stamp and of the
    ledger existing: it limits itself (at most once an hour per notice, only when the webhook is configured)
    and only appends to notifications.jsonl when there is something failed to resend. An exception in it is
    swallowed so it never stops the maintenance (``resent`` is then []).

    The date is stamped in the ledger before the checks start, so two processes on the same day do not both
    start them. No ledger is created when there is none (the sweep and checks are skipped).
    """
    now = clock()
    today = now.astimezone(timezone.utc).date().isoformat()
    result: dict = {"ran": False, "date": today, "reason": "", "swept": [], "checked": [], "resent": []}
    try:
        resent = resend_failed(eval_root, env=env, clock=clock, post=post)
        result["resent"] = [r["refs"]["resend_of"] for r in resent]
    except Exception:  # noqa: BLE001 - resending a notice must never stop the maintenance
        result["resent"] = []
    if not ledger_path(eval_root).exists():
        result["reason"] = "no watches"
        return result
    with _locked(eval_root) as ledger:
        if ledger.get("lastMaintenanceDate") == today and not force:
            result["reason"] = "already done today"
            return result
        ledger["lastMaintenanceDate"] = today
    result["ran"] = True
    result["swept"] = [w["id"] for w in sweep(eval_root, clock=clock, lang=lang, env=env, post=post)]
    result["checked"] = check_due(eval_root, starter, clock=clock, lang=lang, env=env, post=post)
    return result
