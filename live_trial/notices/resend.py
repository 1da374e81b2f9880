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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.jsonfile import append_jsonl, schema_errors, utc_now, validate
from live_trial.notices.notify import (
    NOTIFICATIONS_FILE,
    WEBHOOK_ENV,
    WEBHOOK_TIMEOUT_S,
    Poster,
    read_notifications,
    send_webhook,
)

RESEND_MIN_AGE_S = 3600  # a failed notice is sent again at most once an hour
RESEND_OF = "resend_of"  # the refs key naming the notice a record sends again


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
    """An aware UTC datetime from a datetime (naive is taken as UTC) or an ISO 8601 text (``Z`` allowed).

    Raises ValueError for a text that is not a timestamp.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    dt = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _iso_z(value: str | datetime) -> str:
    """``value`` as the record's ``at``: a text is kept as is; a datetime becomes UTC ISO 8601, milliseconds, ``Z``."""
    if isinstance(value, str):
        return value
    return _as_datetime(value).astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
    retry, ``timeout_s`` seconds per attempt) and one record is appended: same kind, lang, text, objective,
    detail and check; refs = the original refs + ``{"resend_of": notification_id(original)}``; at = ``clock()``
    (an ISO ``...Z`` text or an aware datetime); webhook = the new outcome. A resend that fails is itself pending
    ``min_age_s`` seconds later. With ``stop_after_failure`` (the default) the first resend that fails ends this
    call: the webhook is most likely still down, and the others wait for the next call rather than holding up
    the ``run`` that called this for ``timeout_s`` x 2 each.

    When env LIVE_TRIAL_WEBHOOK_URL is not set (``env`` defaults to os.environ), or there is no
    notifications.jsonl, returns [] and creates or writes nothing. Otherwise an exclusive ``fcntl.flock`` on
    notifications.jsonl itself is held from reading what is pending until the last append, so two processes at
    once never resend the same notice twice (the second one sees the first one's records). Malformed lines are
    skipped. Never raises for a network or HTTP failure; may raise OSError for the file, and SchemaInvalid if a
    built record does not fit notification.schema.json (nothing is appended for it). Never prints.
    """
    env = os.environ if env is None else env
    url = (env.get(WEBHOOK_ENV) or "").strip()
    path = Path(eval_root) / NOTIFICATIONS_FILE
    if not url or not path.exists():
        return []
    out: list[dict] = []
    with open(path, "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            now = clock()
            for original in _pending(read_notifications(Path(eval_root)), _as_datetime(now), min_age_s):
                webhook = send_webhook(url, original["text"], timeout_s=timeout_s, post=post, sleep=sleep)
                record = {
                    "at": _iso_z(clock()), "kind": original["kind"], "lang": original["lang"],
                    "text": original["text"], "objective": original["objective"], "detail": original["detail"],
                    "refs": {**original["refs"], RESEND_OF: notification_id(original)},
                    "check": dict(original["check"]), "webhook": webhook,
                }
                validate(record, "notification.schema.json", what=NOTIFICATIONS_FILE)
                append_jsonl(path, record)
                out.append(record)
                if webhook["status"] != "sent" and stop_after_failure:
                    break
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out
