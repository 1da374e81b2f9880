"""Loop bounds of a trial and the size limit of its copied folder, from ``references/convergence-policy.json`` only
(ARCHITECTURE invariant 5).

``STALL_LIMIT`` and ``HARD_CAP`` (seconds) in the environment override the file (seed 001: the
script keeps the policy values as defaults that env can override).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import Any, Mapping

from live_trial.errors import RefusedInput
from live_trial.resources import read_reference


@dataclass(frozen=True)
class Policy:
    """Bounds of one trial. Units: seconds (``*_s``), counts, a ratio, bytes (``*_bytes``).

    ``copy_max_bytes``: the largest folder ``run --cwd DIR`` copies (``trial_folder.copy_max_bytes``; README "Running a
    real trial"): a larger one is refused before anything is created."""

    nudge_max: int
    stall_limit_s: float
    hard_cap_s: float
    poll_interval_s: float
    done_stable_ticks: int
    boot_timeout_s: float
    hard_cap_warn_ratio: float
    copy_max_bytes: int = 536_870_912
    max_cost_usd: float | None = None
    """The trial's budget: US dollars of the API list price estimate of what it used (README "Budgets";
    ``budget.max_cost_usd``, ``--max-cost-usd``); None: no budget."""
    plan_max_cost_usd: float | None = None
    """The budget of a whole ``run --plan`` (``budget.plan_max_cost_usd``, ``run --plan --max-cost-usd``)."""

    def with_overrides(self, **kw: Any) -> "Policy":
        """A copy with the given fields replaced (for tests and --stall-limit style flags)."""
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


def _env_seconds(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise RefusedInput(f"{name} must be a number of seconds, got {raw!r}", where=f"env {name}",
                           fix=f"set {name} to e.g. 300 or unset it") from None
    if value <= 0:
        raise RefusedInput(f"{name} must be greater than 0, got {raw!r}", where=f"env {name}",
                           fix=f"set {name} to a positive number of seconds")
    return value


def load_policy(env: Mapping[str, str] | None = None) -> Policy:
    """Return the trial_acceptance bounds, with env ``STALL_LIMIT`` / ``HARD_CAP`` applied.

    Raises :class:`RefusedInput` when an override is not a positive number.
    Source: seed 001, "ゴールシークループ" (loop_bounds.trial_acceptance is the single source of numbers).
    """
    env = os.environ if env is None else env
    doc = json.loads(read_reference("convergence-policy.json"))
    raw = doc["loop_bounds"]["trial_acceptance"]
    folder = doc.get("trial_folder") or {}
    budget = doc.get("budget") or {}
    policy = Policy(
        nudge_max=int(raw["nudge_max"]),
        stall_limit_s=float(raw["stall_limit_s"]),
        hard_cap_s=float(raw["hard_cap_s"]),
        poll_interval_s=float(raw["poll_interval_s"]),
        done_stable_ticks=int(raw["done_stable_ticks"]),
        boot_timeout_s=float(raw.get("boot_timeout_s", 60)),
        hard_cap_warn_ratio=float(raw.get("hard_cap_warn_ratio", 0.8)),
        copy_max_bytes=int(folder.get("copy_max_bytes", Policy.copy_max_bytes)),
        max_cost_usd=_budget(budget, "max_cost_usd"),
        plan_max_cost_usd=_budget(budget, "plan_max_cost_usd"),
    )
    return policy.with_overrides(stall_limit_s=_env_seconds(env, "STALL_LIMIT"),
                                 hard_cap_s=_env_seconds(env, "HARD_CAP"))


def _budget(doc: Mapping[str, Any], key: str) -> float | None:
    """``budget.<key>`` of the policy file: a positive number of US dollars, or None (absent or null). Raises
    :class:`RefusedInput` for anything else."""
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise RefusedInput(f"budget.{key} must be a positive number of US dollars or null, got {value!r}",
                           where="references/convergence-policy.json", fix=f"set budget.{key} to e.g. 2.5 or null")
    return float(value)


def blocked_retries_max() -> int:
    """How many times a case run tries again after a BLOCKED attempt (``repeats.blocked_retries_max`` of
    references/convergence-policy.json, default 2): a BLOCKED attempt is no sample of a repeated case, and the run
    stops BLOCKED once this bound is used up (references/suite-format.md "Repeats"). Raises :class:`RefusedInput` for
    a value that is not a whole number >= 0."""
    doc = json.loads(read_reference("convergence-policy.json"))
    value = (doc.get("repeats") or {}).get("blocked_retries_max", 2)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RefusedInput(f"repeats.blocked_retries_max must be a whole number >= 0, got {value!r}",
                           where="references/convergence-policy.json", fix="set it to e.g. 2")
    return value


def improvement_max_iterations() -> int:
    """The most rounds of the improvement loop after a trial's first judged verdict (seed 001 ``feedback_contract``
    ``max_iterations``: 3): ``loop_bounds.improvement.max_iterations`` of ``references/convergence-policy.json``; the
    harness skill's frontmatter states the same number (a unit test holds them equal)."""
    doc = json.loads(read_reference("convergence-policy.json"))
    return int(doc["loop_bounds"]["improvement"]["max_iterations"])
