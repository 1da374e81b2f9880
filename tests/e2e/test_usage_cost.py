"""What a trial used and cost, on the real CLI in real tmux (README "What a trial costs", "Budgets"): every reply of
``mark-usage.yaml`` scripts its own usage, so the verdict's totals must be exactly the sum of the replies the session
was served, each once (a reply of two content blocks is two transcript records; the subagent writes its own file;
2.1.332's cost-state record repeats the sums), with the evaluator's usage and cost as its CLI reported them. A budget
below the first response's cost ends the trial BLOCKED ``budget`` before the next response; plan estimates the next
trial from the last recorded cost.

The flow differs by CLI (references/transcript-jsonl.md "Usage and cost"): 2.1.197 runs the Agent in the foreground,
2.1.332 in the background (one more reply: the model says it waits, then is woken). The transcript says which ran.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .run_support import FAST, PLUGINS, ROOT, SCENARIOS, final_json, run_cmd, workdirs

SCENARIO = SCENARIOS / "mark-usage.yaml"
SONNET = "claude-sonnet-4-5"

# The scripted usage of each reply (input, output, cache read, cache write): mark-usage.yaml.
SKILL_CALL, PROBE, AFTER_AGENT, WOKEN, DONE = ((1000, 100, 10000, 500), (2000, 200, 20000, 600),
                                               (3000, 300, 30000, 700), (5000, 500, 50000, 900),
                                               (4000, 400, 40000, 800))
SUBAGENT = (50, 5, 0, 0)
EVALUATOR = (7000, 700, 0, 0)
KINDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _sum(*replies: tuple[int, int, int, int]) -> dict[str, int]:
    return {k: sum(r[i] for r in replies) for i, k in enumerate(KINDS)} | {"responses": len(replies)}


def _sonnet_usd(t: dict[str, int]) -> float:
    return (t["input_tokens"] * 3 + t["output_tokens"] * 15 + t["cache_read_input_tokens"] * 0.3
            + t["cache_creation_input_tokens"] * 3.75) / 1e6


@pytest.mark.budget(16)
def test_the_verdict_adds_each_scripted_response_once_and_the_evaluators_reported_cost(tmp_path: Path) -> None:
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal", str(SCENARIO), *FAST)
    out = final_json(proc)
    assert out["status"] == "PASS", out
    [wd] = workdirs(tmp_path)
    verdict = json.loads((wd / "verdict.json").read_text())
    usage = verdict["usage"]
    assert out["usage"] == usage
    background = "Async agent launched" in (wd / "transcript.jsonl").read_text()
    served = (SKILL_CALL, PROBE, AFTER_AGENT, WOKEN, DONE) if background else (SKILL_CALL, PROBE, AFTER_AGENT, DONE)
    assert list((wd / "subagents").glob("*.jsonl")), "the subagent's transcript was collected"
    assert usage["session"]["by_model"] == {SONNET: _sum(*served), "claude-haiku-4-5": _sum(SUBAGENT)}
    assert usage["session"]["responses"] == len(served) + 1
    # the CLI's own figure for the session: 2.1.332 writes it in a cost-state record at the end, 2.1.197 none
    wrote_cost_state = '"type":"cost-state"' in (wd / "transcript.jsonl").read_text().replace('": "', '":"')
    session_cli = usage["session"]["cli_total_cost_usd"]
    assert (session_cli is not None) == wrote_cost_state, (session_cli, verdict["environment"])
    assert session_cli is None or session_cli > 0

    # the evaluator: its tokens and its cost as the CLI reported it (priced by the model the CLI requested)
    evaluator = usage["evaluator"]
    assert [dict(t, responses=1) for t in evaluator["by_model"].values()] == [_sum(EVALUATOR)]
    cli_usd = evaluator["cli_total_cost_usd"]
    assert cli_usd and cli_usd > 0
    haiku = (SUBAGENT[0] * 1 + SUBAGENT[1] * 5) / 1e6
    assert usage["estimate_usd"] == pytest.approx(_sonnet_usd(_sum(*served)) + haiku + cli_usd, abs=1e-6)
    assert usage["billed"] is False and usage["cost_usd"] == 0 and usage["unpriced_models"] == []

    # plan estimates the skill's next trial from this recorded cost
    plan = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir", str(PLUGINS / "trialkit"),
                           "--eval-root", str(tmp_path / "eval"), "--profile", "exhaustive", "--max-live-trials",
                           "20", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert plan.returncode == 0, plan.stderr
    doc = json.loads(plan.stdout)
    mark = next(s for s in doc["skills"] if s["target"] == "trialkit:mark")
    assert mark["last_cost_usd"] == pytest.approx(usage["estimate_usd"])
    batched = [e["target"] for batch in doc["live_batches"] for e in batch]
    assert "trialkit:mark" in batched
    assert doc["estimated_cost_usd"] == pytest.approx(usage["estimate_usd"])
    assert sorted(doc["cost_unknown"]) == sorted(t for t in batched if t != "trialkit:mark")


@pytest.mark.budget(12)
def test_a_budget_below_the_first_response_ends_the_trial_blocked_budget_before_the_next(tmp_path: Path) -> None:
    first = _sonnet_usd(_sum(SKILL_CALL))       # $0.009375 at list price
    budget = round(first / 2, 6)
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal", str(SCENARIO), *FAST,
                   "--max-cost-usd", str(budget))
    out = final_json(proc)
    assert proc.returncode == 3 and out["status"] == "BLOCKED" and out["stop_reason"] == "budget", out
    [wd] = workdirs(tmp_path)
    verdict = json.loads((wd / "verdict.json").read_text())
    usage = verdict["usage"]
    # the response that crossed the budget is counted; at most the one already asked for when it was seen may
    # follow (the scenario delays it 1 s, so it normally never comes): the trial ends within one response
    served = usage["session"]["by_model"][SONNET]
    assert served in (_sum(SKILL_CALL), _sum(SKILL_CALL, PROBE)), served
    assert usage["evaluator"] is None and usage["cost_usd"] == 0
    assert usage["estimate_usd"] == pytest.approx(_sonnet_usd(served), abs=1e-6)
    note = next(n for n in verdict["notes"] if "budget" in n)
    assert f"${budget:g}" in note and "a rehearsal costs nothing" in note
    assert f"${first:.4f}" in note or f"${_sonnet_usd(served):.4f}" in note
    log = [json.loads(line) for line in (wd / "trial-log.jsonl").read_text().splitlines()]
    assert any(r.get("step") == "budget" and r.get("max_cost_usd") == budget for r in log)


@pytest.mark.budget(10)
def test_a_plans_budget_spent_by_its_first_trial_starts_no_other(tmp_path: Path) -> None:
    plan = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir", str(PLUGINS / "trialkit"),
                           "--eval-root", str(tmp_path / "eval"), "--json"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    doc = json.loads(plan.stdout)
    entry = {"target": "trialkit:mark", "plugins_root": str(PLUGINS), "proof": False, "args": ""}
    doc["live_batches"] = [[entry], [dict(entry, target="trialkit:mark2")]]
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(doc))
    budget = round(_sonnet_usd(_sum(SKILL_CALL)) / 2, 6)
    proc = run_cmd(tmp_path, "--plan", str(plan_file), "--rehearsal", str(SCENARIO), *FAST,
                   "--max-cost-usd", str(budget))
    out = final_json(proc)
    assert proc.returncode == 3, out
    first, second = [t for t in out["trials"] if t["status"] != "NEEDS_ANSWER"]    # trialkit:choose: no trial
    assert (first["target"], first["status"], first["stop_reason"]) == ("trialkit:mark", "BLOCKED", "budget")
    assert second["target"] == "trialkit:mark2" and second["status"] == "BLOCKED"
    assert "not started: the plan's budget" in second["summary"]
    [wd] = workdirs(tmp_path)                               # the second trial never started
    # as for one trial's budget: the response that crossed it, and at most the one already asked for when it was seen
    served = json.loads((wd / "verdict.json").read_text())["usage"]["session"]["by_model"][SONNET]
    assert served in (_sum(SKILL_CALL), _sum(SKILL_CALL, PROBE)), served
    assert out["cost"]["trials"] == 1 and out["cost"]["estimate_usd"] == pytest.approx(_sonnet_usd(served))
