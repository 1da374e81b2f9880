"""The plan's defer queue, ``<eval-root>/queue.json`` (seed 001 事前計画: "非該当は queue へ deferred 記録";
README "Planning many skills").

A case a plan defers over its budget waits here, with when it was first deferred, how many plans deferred it since,
and the run id of its newest trial at that time (``last_trial``). The next plan runs waiting cases before new ones and
re-runs of failures, longest-waiting first (:mod:`live_trial.acceptance.fair_plan`), so two skills that keep failing
never starve the others. A case waits until it has had a trial: once its newest trial is another than ``last_trial``
the entry is stale and goes. A case a plan chose but that never ran (the run stopped first) keeps waiting. Cases no
plan of this eval root names again keep their entries (a queue spans plans of other plugins).

``run --plan`` writes it before its first trial (schema-checked, atomic;
:func:`live_trial.acceptance.plan.record_deferrals`): the plan's deferrals are real once it runs, and ``plan`` only
reads it, so looking at a plan twice changes neither the queue nor the next plan. ``live-trial merge`` merges the
shards' copies: per case the entry that waited longer. Pure but for :func:`load_queue` and :func:`save_queue`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.jsonfile import read_json, write_json
from live_trial.workdir_files import QUEUE_FILE

SCHEMA = "queue.schema.json"
SCHEMA_VERSION = "live-trial-queue/1"


@dataclass(frozen=True)
class Waiting:
    """One deferred case (a line of queue.json)."""

    target: str                 #: plugin:skill
    case: str                   #: the suite case
    waiting_since: str          #: UTC ISO time of the first plan that deferred it
    plans_waited: int           #: plans that deferred it since
    last_deferred_at: str       #: UTC ISO time of the last plan that deferred it
    last_trial: str | None      #: the run id of its newest trial when it was first deferred (None: never tried)

    @property
    def key(self) -> tuple[str, str]:
        """``(target, case)``."""
        return self.target, self.case


Queue = dict[tuple[str, str], Waiting]


def from_doc(doc: Mapping[str, Any]) -> Queue:
    """The entries of a schema-valid queue document by ``(target, case)``."""
    out: Queue = {}
    for c in doc.get("cases") or []:
        w = Waiting(str(c["target"]), str(c["case"]), str(c["waiting_since"]), int(c["plans_waited"]),
                    str(c["last_deferred_at"]), c["last_trial"])
        out[w.key] = w
    return out


def to_doc(queue: Queue, now: str) -> dict[str, Any]:
    """The queue.json document (entries in ``(target, case)`` order)."""
    return {"schema_version": SCHEMA_VERSION, "updated_at": now,
            "cases": [asdict(queue[k]) for k in sorted(queue)]}


def load_queue(eval_root: Path) -> Queue:
    """The eval root's queue (empty without queue.json). Raises RefusedInput / SchemaInvalid (one line, nothing
    planned) for a file that is not valid JSON or does not fit its schema."""
    path = Path(eval_root) / QUEUE_FILE
    if not path.is_file():
        return {}
    return from_doc(read_json(path, SCHEMA))


def save_queue(eval_root: Path, doc: Mapping[str, Any]) -> Path:
    """Write ``<eval-root>/queue.json`` (schema-checked, atomic) and return its path. Raises SchemaInvalid, OSError."""
    path = Path(eval_root) / QUEUE_FILE
    write_json(path, dict(doc), SCHEMA)
    return path


def still_waiting(queue: Mapping[tuple[str, str], Waiting], target: str, case: str,
                  last_trial: str | None) -> Waiting | None:
    """The entry of a case that is still waiting: deferred before and without a trial since (its newest trial is the
    one recorded when it was first deferred); None otherwise."""
    found = queue.get((target, case))
    return found if found is not None and found.last_trial == last_trial else None


def next_queue(queue: Mapping[tuple[str, str], Waiting], rows: Iterable[tuple[str, str, str, str | None]],
               now: str) -> Queue:
    """The queue after a plan is run. ``rows``: ``(target, case, action, last_trial)`` of each planned case; ``now``:
    the plan's ``generated_at``. A deferred case waits (a new entry, or one more plan on its still-waiting entry; the
    same plan run again, or by each of its shards, counts once); a case chosen to run keeps a still-waiting entry (it
    waits until its trial happens); every other planned case leaves the queue. Cases the plan does not name keep their
    entries."""
    out = dict(queue)
    for target, case, action, last_trial in rows:
        old = still_waiting(queue, target, case, last_trial)
        if action == "defer" and old is not None and old.last_deferred_at == now:
            continue                    # this plan's deferral is recorded already
        if action == "defer":
            out[(target, case)] = Waiting(target, case, old.waiting_since if old else now,
                                          (old.plans_waited if old else 0) + 1, now, last_trial)
        elif action == "run" and old is not None:
            out[(target, case)] = old
        else:
            out.pop((target, case), None)
    return out


def merge_queues(docs: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """One queue from several eval-logs' queue.json documents (``live-trial merge``): per case the entry that waited
    more plans (then the earlier ``waiting_since``); ``updated_at`` the latest. None when there is none."""
    docs = list(docs)
    if not docs:
        return None
    merged: Queue = {}
    for doc in docs:
        for key, w in from_doc(doc).items():
            seen = merged.get(key)
            if seen is None or (w.plans_waited, seen.waiting_since) > (seen.plans_waited, w.waiting_since):
                merged[key] = w
    return to_doc(merged, max(str(d.get("updated_at") or "") for d in docs))
