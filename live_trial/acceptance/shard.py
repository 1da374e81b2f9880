"""Sharding a plan over CI machines: ``run --plan plan.json --shard K/N`` runs shard K of N (README "Sharding a plan
over CI machines").

The plan is made once (plan.json is the artifact every shard job reads), so its budget (``--max-live-trials``)
already applies to the plan as a whole: sharding only splits the trials the plan chose to run. Every trial of
``live_batches`` goes to exactly one shard. The split is a pure function of the plan, so N machines reading the
same plan.json agree on it without talking to each other:

- Cases are the unit: a case (a repeated one with all its attempts) runs whole on one shard.
- When the plan knows the last recorded duration of a case (``skills[].last_duration_s``), cases are placed longest
  first on the shard with the least total time so far (greedy longest-processing-time); a case with no known
  duration counts as the mean of the known ones (times its ``repeats``).
- When no duration is known, the same rule with weight 1 balances by count (shard sizes differ by at most one).

Ties go to the lowest shard number; each shard keeps its trials in plan order.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Sequence, TypeVar

from live_trial.acceptance.case_plan import entry_trials
from live_trial.errors import RefusedInput

Entry = TypeVar("Entry", bound=Mapping[str, Any])     #: a plan entry, as the caller holds it
_SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``1 <= K <= N``. Raises :class:`RefusedInput` (exit 2) otherwise."""
    match = _SHARD_RE.match(str(text))
    k, n = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if not match or n < 1 or not 1 <= k <= n:
        raise RefusedInput(f"--shard must be K/N with 1 <= K <= N (got {text!r})", code="bad_shard",
                           fix="e.g. --shard 2/3 runs the second of three shards")
    return k, n


def partition(weights: Sequence[float], n: int) -> list[list[int]]:
    """Split item indexes ``0..len(weights)-1`` into ``n`` lists (one per shard, each in ascending order) so that the
    sums of weights are balanced: heaviest first onto the lightest shard (ties: lower index first, lower shard
    first). Every index is in exactly one list. Raises ValueError when ``n < 1``."""
    if n < 1:
        raise ValueError("n must be at least 1")
    loads = [0.0] * n
    shards: list[list[int]] = [[] for _ in range(n)]
    for i in sorted(range(len(weights)), key=lambda j: (-float(weights[j]), j)):
        target = min(range(n), key=lambda s: (loads[s], len(shards[s]), s))
        shards[target].append(i)
        loads[target] += float(weights[i])
    return [sorted(s) for s in shards]


def _key(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row.get("target")), str(row.get("case") or "default")


def trial_weights(plan: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> list[float]:
    """The weight of each entry (a case: the unit a shard runs whole): its case's ``last_duration_s`` from the plan
    (a repeated case's: its last case run's, all attempts), the mean of the known ones for a case with none, and 1
    for every entry when no duration is known (balance by count); a repeated case with no duration of its own counts
    its ``repeats`` times that."""
    known = {_key(s): float(s["last_duration_s"]) for s in plan.get("skills") or []
             if isinstance(s.get("last_duration_s"), (int, float)) and s["last_duration_s"] > 0}
    repeats = [entry_trials(e) for e in entries]
    if not known:
        return [float(k) for k in repeats]
    mean = sum(known.values()) / len(known)
    return [known.get(_key(e), mean * k) for e, k in zip(entries, repeats)]


def shard_entries(plan: Mapping[str, Any], entries: Sequence[Entry], k: int, n: int) -> list[Entry]:
    """The trial entries (from the plan's ``live_batches``, flattened in plan order) that shard ``k`` of ``n`` runs,
    in plan order."""
    parts = partition(trial_weights(plan, entries), n)
    return [entries[i] for i in parts[k - 1]]
