"""The order in which a transcript's records happened, which is not the order of its lines.

The 2.1.197 CLI can write a session's first turn out of order: the assistant record (even its tool_use, and
``turn_duration``) lands before the ``user``/``attachment`` records it answers, and timestamps are not strictly
monotonic either (attachments are stamped 1 ms before the record they follow). Seen in 5 of 27 sessions in
``../shared/reference/claude-cli-observed.md`` ("Surprises" 1) and again in a CI run of this project, where a
trial's ``Write`` tool_use was the 4th line of the file and the ``Skill`` call it followed was the 11th.

Everything that reasons about "what came after what" (the classifier, the evaluator's transcript index, the
tests) reads records through :func:`causal_order`; the collected ``transcript.jsonl`` itself stays byte-for-byte
what the CLI wrote.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from live_trial.transcript.records import record_time

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any


def causal_order(records: Iterable[Mapping[str, Any]], *, sidechains: bool = False) -> list[dict[str, Any]]:
    """Records sorted into the order they happened.

    Key, per record: its timestamp raised to at least its parent's (so a record never sorts before the record
    its ``parentUuid`` names), then its depth in the ``parentUuid`` chain, then its line number. A record with
    no timestamp (``file-history-snapshot``, ``ai-title``...) takes the previous line's. Parent cycles and
    parents missing from ``records`` (a tail read) are tolerated: the walk stops there.

    ``records``: parsed JSONL records in file order (non-dicts are dropped). ``sidechains``: keep
    ``isSidechain: true`` records (subagent turns); the classifier leaves them out. Returns a new list of the
    same dict objects; raises nothing. O(n) in the number of records, no recursion.
    """
    recs = [r for r in records if isinstance(r, dict) and (sidechains or r.get("isSidechain") is not True)]
    by_uuid = {r["uuid"]: r for r in recs if isinstance(r.get("uuid"), str)}
    raw_t: dict[int, float] = {}
    last_t = float("-inf")
    for rec in recs:
        t = record_time(rec)
        last_t = last_t if t is None else t
        raw_t[id(rec)] = last_t
    known: dict[str, tuple[float, int]] = {}       # uuid -> (effective time, depth)

    def place(rec: Mapping[str, Any]) -> tuple[float, int]:
        chain, cur, seen = [], rec, set()
        while True:
            uid = cur.get("uuid")
            if not isinstance(uid, str) or uid in seen or uid in known:
                break
            seen.add(uid)
            chain.append(cur)
            parent = cur.get("parentUuid")
            if not isinstance(parent, str) or parent not in by_uuid:
                cur = {}
                break
            cur = by_uuid[parent]
        uid = cur.get("uuid")
        t, depth = known[uid] if isinstance(uid, str) and uid in known else (float("-inf"), -1)
        for node in reversed(chain):
            t, depth = max(t, raw_t[id(node)]), depth + 1
            known[node["uuid"]] = (t, depth)
        uid = rec.get("uuid")
        return known[uid] if isinstance(uid, str) and uid in known else (raw_t[id(rec)], 0)

    keyed = [(*place(rec), i, rec) for i, rec in enumerate(recs)]
    keyed.sort(key=lambda k: (k[0], k[1], k[2]))
    return [k[3] for k in keyed]
