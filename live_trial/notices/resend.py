"""Failed notices sent again: a notice whose webhook send failed is not left there (seed 000: a person is always
told the outcome in plain words).

:func:`resend_failed` is called on every ``run`` (through ``watch.daily_maintenance``), ``plan`` and
``watch daily``; each failed notice is sent again, the same text, at most once per :data:`RESEND_MIN_AGE_S`, until
one attempt gets through. Every attempt is one more record of ``notifications.jsonl``, naming the notice it
resends by :func:`notification_id` in ``refs["resend_of"]``.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.clock import as_utc, iso_z, parse_iso_z, utc_now
from live_trial.errors import LiveTrialError
from live_trial.jsonfile import append_jsonl, read_json, schema_errors, validate, write_json
from live_trial.notices.notify import WEBHOOK_ENV, read_notifications
from live_trial.notices.webhook import WEBHOOK_TIMEOUT_S, Poster, send_webhook
from live_trial.workdir_files import NOTIFICATIONS_FILE

RESEND_MIN_AGE_S = 3600  # a failed notice is sent again at most once an hour
RESEND_OF = "resend_of"  # the refs key naming the notice a record sends again
CLAIMS_FILE = "notifications.claims.json"
CLAIMS_SCHEMA = "notification-claims.schema.json"
CLAIM_S = 30.0  # how long a claim holds beyond the sending's own deadlines (a process that died lets go then)


def notification_id(record: Mapping[str, Any]) -> str:
    """The id of one notification record: ``"n-"`` + the first 12 hex digits of sha256 over its ``at``, ``kind``
    and ``text`` joined with a newline (UTF-8).

    Computed, never stored (notification.schema.json allows no extra field). A resend names the notice it sends
    again by this id in ``refs["resend_of"]``. Raises KeyError when one of the three fields is missing.
    """
    digest = hashlib.sha256("\n".join((str(record["at"]), str(record["kind"]), str(record["text"])))
                            .encode("utf-8")).hexdigest()
    return "n-" + digest[:12]


def _as_datetime(value: str | datetime) -> datetime:
    """An aware datetime from a datetime (naive is taken as UTC) or an ISO 8601 text (``Z`` allowed, blanks around it
    ignored: :func:`live_trial.clock.parse_iso_z`).

    Raises ValueError for a text that is not a timestamp.
    """
    if isinstance(value, datetime):
        return as_utc(value)
    return parse_iso_z(str(value).strip())


def _at(value: str | datetime) -> str:
    """``value`` as the record's ``at``: a text is kept as is; a datetime becomes :func:`live_trial.clock.iso_z`."""
    return value if isinstance(value, str) else iso_z(value)


def _pending(records: list[dict], now: datetime, min_age_s: float) -> list[dict]:
    named: set[str] = set()  # ids named in resend_of by a record later in the file
    pending: list[dict] = []
    seen: set[str] = set()
    for rec in reversed(records):
        refs = rec.get("refs") if isinstance(rec.get("refs"), dict) else {}
        if (isinstance(rec.get("webhook"), dict) and rec["webhook"].get("status") == "failed"
                and not schema_errors(rec, "notification.schema.json")):
            nid = notification_id(rec)
            try:
                old_enough = (now - _as_datetime(rec["at"])).total_seconds() >= min_age_s
            except ValueError:
                old_enough = False
            if nid not in named and nid not in seen and old_enough:
                pending.append(rec)
                seen.add(nid)
        if isinstance(refs.get(RESEND_OF), str):
            named.add(refs[RESEND_OF])
    pending.reverse()
    return pending


def pending_resends(eval_root: Path, now: str | datetime, min_age_s: float = RESEND_MIN_AGE_S) -> list[dict]:
    """The notices of ``<eval-root>/notifications.jsonl`` that still have to be sent again, oldest first.

    A record is pending when its webhook.status is "failed", no later record names its
    :func:`notification_id` in ``refs["resend_of"]``, and its ``at`` is at least ``min_age_s`` seconds before
    ``now`` (an aware datetime, a naive one taken as UTC, or an ISO 8601 text such as ``2026-11-30T09:00:00.000Z``),
    so a flapping webhook is tried at most once per ``min_age_s`` per notice. A resend that failed is itself
    pending later (the chain continues from it; the original stays named). Lines that are not JSON, and records
    that do not fit notification.schema.json, are skipped. No file -> []. Reads only; raises ValueError for a
    ``now`` that is not a timestamp. Rule: seed 000 (a person is always told the outcome).
    """
    return _pending(read_notifications(Path(eval_root)), _as_datetime(now), min_age_s)


def resend_failed(eval_root: Path, *, env: Mapping[str, str] | None = None,
                  clock: Callable[[], str | datetime] = utc_now, post: Poster | None = None,
                  sleep: Callable[[float], None] = time.sleep, timeout_s: float = WEBHOOK_TIMEOUT_S,
                  min_age_s: float = RESEND_MIN_AGE_S, stop_after_failure: bool = True) -> list[dict]:
    """Send every pending failed notice (:func:`pending_resends`) again; return the new records, oldest first.

    Seed 000: a person is always told the outcome in plain words, so a notice whose webhook failed is
    not left there. For each pending record the SAME text goes to the webhook again (:func:`send_webhook`: one
    deadline of ``timeout_s`` seconds per attempt) and one record is appended: same kind, lang, text, objective,
    detail and check; refs = the original refs + ``{"resend_of": notification_id(original)}``; at = ``clock()``
    (an ISO ``...Z`` text or an aware datetime); webhook = the new outcome. A resend that fails is itself pending
    ``min_age_s`` seconds later. With ``stop_after_failure`` (the default) the first resend that fails ends this
    call: the webhook is most likely still down, and the others wait for the next call.

    One notice at a time is claimed, sent and recorded: under an exclusive ``fcntl.flock`` on notifications.jsonl
    the notice is claimed in ``notifications.claims.json`` (schema ``notification-claims.schema.json``); the lock is
    released while the webhook is called; under the lock again the record is appended and the claim dropped. So a
    slow webhook holds up only the caller, never another process waiting for the lock, and two processes at once
    never send the same notice twice (the other one skips a claimed notice). A claim left by a process that died
    expires after :data:`CLAIM_S` seconds; the notice is then pending again.

    When env LIVE_TRIAL_WEBHOOK_URL is not set (``env`` defaults to os.environ), or there is no
    notifications.jsonl, returns [] and creates or writes nothing. Malformed lines are skipped. Never raises for a
    network or HTTP failure; may raise OSError for the files, and SchemaInvalid if a built record does not fit
    notification.schema.json (nothing is appended for it). Never prints.
    """
    env = os.environ if env is None else env
    url = (env.get(WEBHOOK_ENV) or "").strip()
    path = Path(eval_root) / NOTIFICATIONS_FILE
    if not url or not path.exists():
        return []
    out: list[dict] = []
    tried: set[str] = set()
    while True:
        with _locked(path):
            now = clock()
            claims = _claims(path, now)
            original = next((r for r in _pending(read_notifications(Path(eval_root)), _as_datetime(now), min_age_s)
                             if notification_id(r) not in claims and notification_id(r) not in tried), None)
            if original is None:
                return out
            nid = notification_id(original)
            tried.add(nid)
            claims[nid] = {"pid": os.getpid(),
                           "until": iso_z(_as_datetime(now) + timedelta(seconds=CLAIM_S + 2 * timeout_s))}
            _save_claims(path, claims)
        webhook: dict | None = None
        try:
            webhook = send_webhook(url, original["text"], timeout_s=timeout_s, post=post, sleep=sleep)
        finally:                                   # drop the claim even when interrupted; record what was sent
            with _locked(path):
                claims = _claims(path, clock())
                claims.pop(nid, None)
                _save_claims(path, claims)
                if webhook is not None:
                    record = {
                        "at": _at(clock()), "kind": original["kind"], "lang": original["lang"],
                        "text": original["text"], "objective": original["objective"], "detail": original["detail"],
                        "refs": {**original["refs"], RESEND_OF: nid},
                        "check": dict(original["check"]), "webhook": webhook,
                    }
                    validate(record, "notification.schema.json", what=NOTIFICATIONS_FILE)
                    append_jsonl(path, record)
                    out.append(record)
        if webhook["status"] != "sent" and stop_after_failure:
            return out


class _locked:
    """Hold the notifications lock (an exclusive ``fcntl.flock`` on notifications.jsonl itself) for a block."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        self.fh = open(self.path, "rb")
        fcntl.flock(self.fh, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        try:
            fcntl.flock(self.fh, fcntl.LOCK_UN)
        finally:
            self.fh.close()


def _claims_path(path: Path) -> Path:
    return path.with_name(CLAIMS_FILE)


def _claims(path: Path, now: str | datetime) -> dict[str, dict]:
    """The claims that still hold at ``now`` (an unreadable claims file holds none)."""
    file = _claims_path(path)
    if not file.exists():
        return {}
    try:
        claims = read_json(file, CLAIMS_SCHEMA)["claims"]
    except LiveTrialError:
        return {}
    at = _as_datetime(now)
    return {nid: c for nid, c in claims.items() if _as_datetime(c["until"]) > at}


def _save_claims(path: Path, claims: dict[str, dict]) -> None:
    file = _claims_path(path)
    if claims:
        write_json(file, {"version": 1, "claims": claims}, CLAIMS_SCHEMA)
    elif file.exists():
        file.unlink()
