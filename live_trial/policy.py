"""Loop bounds of a trial, from ``references/convergence-policy.json`` only (ARCHITECTURE invariant 5).

``STALL_LIMIT`` and ``HARD_CAP`` (seconds) in the environment override the file (seed 001: the
script keeps the policy values as defaults that env can override).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import Mapping

from live_trial.errors import RefusedInput
from live_trial.resources import read_reference


@dataclass(frozen=True)
class Policy:
    """Bounds of one trial. Units: seconds (``*_s``), counts, a ratio."""

    nudge_max: int
    stall_limit_s: float
    hard_cap_s: float
    poll_interval_s: float
    done_stable_ticks: int
    boot_timeout_s: float
    hard_cap_warn_ratio: float

    def with_overrides(self, **kw) -> "Policy":
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
    raw = json.loads(read_reference("convergence-policy.json"))["loop_bounds"]["trial_acceptance"]
    policy = Policy(
        nudge_max=int(raw["nudge_max"]),
        stall_limit_s=float(raw["stall_limit_s"]),
        hard_cap_s=float(raw["hard_cap_s"]),
        poll_interval_s=float(raw["poll_interval_s"]),
        done_stable_ticks=int(raw["done_stable_ticks"]),
        boot_timeout_s=float(raw.get("boot_timeout_s", 60)),
        hard_cap_warn_ratio=float(raw.get("hard_cap_warn_ratio", 0.8)),
    )
    return policy.with_overrides(stall_limit_s=_env_seconds(env, "STALL_LIMIT"),
                                 hard_cap_s=_env_seconds(env, "HARD_CAP"))
