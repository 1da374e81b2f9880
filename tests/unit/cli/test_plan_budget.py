"""The budget of a whole ``run --plan`` (README "Budgets"): what is left is shared by the trials that run side by side,
never above a trial's own budget; once spent, the remaining trials are not started, each a BLOCKED ``budget`` row."""
from __future__ import annotations

import json

import pytest

from live_trial.cli.case_cmd import case_policy
from live_trial.cli.plan_run import budget_share, not_started
from live_trial.errors import ExitCode
from live_trial.policy import load_policy
from live_trial.stop_reasons import StopReason


def test_the_plans_budget_left_is_split_among_the_batch_and_capped_by_the_trials_own() -> None:
    policy = load_policy({})
    assert budget_share(policy, 0.0, 2) is None                      # no budget at all
    assert budget_share(policy.with_overrides(max_cost_usd=0.5), 0.0, 2) == 0.5
    plan = policy.with_overrides(plan_max_cost_usd=1.0)
    assert budget_share(plan, 0.2, 2) == pytest.approx(0.4)
    assert budget_share(plan.with_overrides(max_cost_usd=0.1), 0.2, 2) == 0.1
    assert budget_share(plan, 1.0, 2) == 0                          # spent: nothing more starts


def test_a_trial_not_started_for_the_budget_is_blocked_budget_and_says_what_was_spent() -> None:
    row = not_started(load_policy({}).with_overrides(plan_max_cost_usd=1.0), 1.25)
    assert row.code == StopReason.BUDGET and row.exit_code == ExitCode.BLOCKED
    assert "$1" in row.message and "$1.2500" in row.message


def test_the_policy_file_budget_is_read_and_a_bad_one_refused(tmp_path, monkeypatch) -> None:
    import live_trial.policy as policy_mod

    doc = json.loads(policy_mod.read_reference("convergence-policy.json"))
    assert doc["budget"] == {"max_cost_usd": None, "plan_max_cost_usd": None}
    doc["budget"] = {"max_cost_usd": 2.5, "plan_max_cost_usd": 10}
    monkeypatch.setattr(policy_mod, "read_reference", lambda name: json.dumps(doc))
    policy = policy_mod.load_policy({})
    assert (policy.max_cost_usd, policy.plan_max_cost_usd) == (2.5, 10.0)
    doc["budget"] = {"max_cost_usd": 0}
    with pytest.raises(policy_mod.RefusedInput, match="budget.max_cost_usd must be a positive number"):
        policy_mod.load_policy({})


@pytest.mark.parametrize("share, own, expected", [
    (0.4, 1.0, 0.4),            # a suite's budget is never above the plan's share
    (0.4, 0.1, 0.1),            # a lower one of its own holds
    (None, 0.3, 0.3),           # no plan budget: the case's own
    (0.4, None, 0.4),           # no case budget: the plan's share
    (None, None, None),
])
def test_a_cases_budget_is_never_above_the_plans_share(share, own, expected) -> None:
    trial_policy = load_policy({}).with_overrides(max_cost_usd=share)
    entry = {"max_cost_usd": own, "stall_limit_s": 7.0, "hard_cap_s": None}
    policy = case_policy(trial_policy, entry)
    assert policy.max_cost_usd == expected
    assert (policy.stall_limit_s, policy.hard_cap_s) == (7.0, trial_policy.hard_cap_s)     # its own bounds, else ours
