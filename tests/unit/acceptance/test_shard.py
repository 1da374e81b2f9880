"""Sharding a plan (README "Sharding a plan over CI machines"): every trial of the plan is in exactly one shard for
any N, shards are balanced by the last recorded duration when the plan knows it and by count otherwise, the plan's
budget holds across shards, and a bad K/N is one line, exit 2, nothing created."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from live_trial.acceptance.shard import parse_shard, partition, shard_entries, trial_weights
from live_trial.errors import RefusedInput

ROOT = Path(__file__).resolve().parents[3]


def _plan(durations: list[float | None]) -> tuple[dict, list[dict]]:
    skills = [{"target": f"p:s{i}", "action": "run", "last_duration_s": d} for i, d in enumerate(durations)]
    entries = [{"target": s["target"], "plugins_root": "/x", "proof": False, "args": ""} for s in skills]
    return {"skills": skills}, entries


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(min_value=0.1, max_value=3600)), max_size=40),
       st.integers(min_value=1, max_value=12))
def test_shards_partition_the_plan_for_any_n(durations, n):
    plan, entries = _plan(durations)
    shards = [shard_entries(plan, entries, k, n) for k in range(1, n + 1)]
    targets = [e["target"] for shard in shards for e in shard]
    assert sorted(targets) == sorted(e["target"] for e in entries)          # each trial in exactly one shard
    assert len(targets) == len(set(targets))
    for shard in shards:                                                     # plan order kept inside a shard
        order = [entries.index(e) for e in shard]
        assert order == sorted(order)
    if all(d is None for d in durations):                                    # by count: sizes differ by <= 1
        sizes = [len(s) for s in shards]
        assert max(sizes) - min(sizes) <= 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=1, max_value=1000), min_size=1, max_size=30), st.integers(min_value=1, max_value=8))
def test_duration_balance_is_within_the_longest_trial(weights, n):
    """Greedy longest-first: no shard exceeds the ideal share by more than the longest single trial."""
    parts = partition(weights, n)
    loads = [sum(weights[i] for i in p) for p in parts]
    assert max(loads) <= sum(weights) / n + max(weights) + 1e-6


def test_durations_balance_better_than_count():
    plan, entries = _plan([600, 10, 10, 10, 10, 10])
    shards = [[e["target"] for e in shard_entries(plan, entries, k, 2)] for k in (1, 2)]
    assert shards == [["p:s0"], ["p:s1", "p:s2", "p:s3", "p:s4", "p:s5"]]
    plan, entries = _plan([None] * 6)
    assert [len(shard_entries(plan, entries, k, 2)) for k in (1, 2)] == [3, 3]


def test_unknown_duration_counts_as_the_mean_of_known_ones():
    plan, entries = _plan([100, None, 300])
    assert trial_weights(plan, entries) == [100, 200, 300]


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/3/4", ""])
def test_bad_shard_is_refused(text):
    with pytest.raises(RefusedInput, match="--shard must be K/N"):
        parse_shard(text)


@pytest.mark.parametrize("text,expected", [("1/1", (1, 1)), ("2/3", (2, 3)), (" 3 / 3 ", (3, 3))])
def test_good_shard(text, expected):
    assert parse_shard(text) == expected


def test_bad_shard_on_the_command_line_is_one_line_exit_2_nothing_created(tmp_path: Path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"not": "checked before the shard"}))
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = subprocess.run([sys.executable, "-m", "live_trial", "run", "--plan", str(plan), "--shard", "4/3",
                           "--junit", str(tmp_path / "j.xml"), "--eval-root", str(tmp_path / "eval")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "REFUSED: --shard must be K/N with 1 <= K <= N (got '4/3'); e.g. --shard 2/3 runs the second of three shards"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_plan_budget_applies_before_sharding(tmp_path: Path):
    """--max-live-trials is the plan's: three shards of a plan of 3 trials over 4 live skills that can run (the
    fifth, trialkit:choose, asks a question no suite answers) run 3 in all."""
    proc = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir",
                           str(ROOT / "tests" / "e2e" / "plugins" / "trialkit"), "--eval-root", str(tmp_path / "eval"),
                           "--max-live-trials", "3", "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    entries = [e for batch in plan["live_batches"] for e in batch]
    assert plan["counts"]["run"] == 3 and plan["counts"]["defer"] == 1 and plan["counts"]["needs_answer"] == 1
    shards = [shard_entries(plan, entries, k, 3) for k in (1, 2, 3)]
    assert sorted(e["target"] for s in shards for e in s) == sorted(e["target"] for e in entries)
    assert [len(s) for s in shards] == [1, 1, 1]


def test_the_ci_example_plans_once_shards_and_merges():
    """examples/ci/github-actions.yml: a plan job, one shard job per matrix entry running its own K/N of the same
    plan.json, and a merge job that restores the last merged eval-log, merges into it and keeps it."""
    import yaml

    doc = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())
    plan, shard, merge = doc["jobs"]["plan"], doc["jobs"]["shard"], doc["jobs"]["merge"]
    assert shard["strategy"]["matrix"]["shard"] == list(range(1, int(doc["env"]["SHARDS"]) + 1))
    runs = lambda job: "\n".join(step.get("run", "") for step in job["steps"])  # noqa: E731
    assert "live-trial plan" in runs(plan) and "plan.json" in runs(plan)
    assert "--shard ${{ matrix.shard }}/${{ env.SHARDS }}" in runs(shard) and "--junit" in runs(shard)
    assert shard["env"]["IS_SANDBOX"] == "1" and "secrets." in shard["env"]["ANTHROPIC_API_KEY"]
    assert "seed_config" in runs(shard)                       # the trusted folder is set up
    assert "live-trial merge eval-log shards/* --into eval-log" in runs(merge)   # the shards' queues of deferred cases
    assert "queue.json" not in runs(plan)      # a plan only reads it; its run records what it deferred
    uses = lambda job: [step.get("uses", "") for step in job["steps"]]  # noqa: E731
    assert any(u.startswith("actions/cache/restore") for u in uses(plan))
    assert any(u.startswith("actions/cache/restore") for u in uses(merge))
    assert any(u.startswith("actions/cache/save") for u in uses(merge))
    assert any(u.startswith("actions/upload-artifact") for u in uses(merge))


def test_plan_records_the_last_trial_duration_shards_balance_by(tmp_path: Path):
    wd = tmp_path / "eval" / "trialkit" / "mark" / "live-trial" / "20261201T100000-aaaa"
    wd.mkdir(parents=True)
    (wd / "verdict.json").write_text(json.dumps({"started_at": "2026-12-01T10:00:00Z",
                                                 "written_at": "2026-12-01T10:00:42.5Z"}))
    proc = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir",
                           str(ROOT / "tests" / "e2e" / "plugins" / "trialkit"), "--eval-root", str(tmp_path / "eval"),
                           "--max-live-trials", "5", "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    durations = {s["target"]: s.get("last_duration_s") for s in plan["skills"]}
    assert durations["trialkit:mark"] == 42.5 and durations["trialkit:mark2"] is None
    entries = [e for batch in plan["live_batches"] for e in batch]
    # the three skills with no duration count as the mean of the known ones (42.5 s): all weigh the same
    # (trialkit:choose asks a question no suite answers: it is not a trial)
    shards = [[e["target"] for e in shard_entries(plan, entries, k, 2)] for k in (1, 2)]
    assert sorted(len(s) for s in shards) == [2, 2]


def test_the_ci_example_checks_todays_claude_code_release_every_day():
    """examples/ci/github-actions.yml: a scheduled job installs @anthropic-ai/claude-code@latest and runs the drift
    check on it (README "Set-up"), and the trial jobs do not run on the schedule."""
    import yaml

    doc = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())
    on = doc.get("on", doc.get(True))                          # YAML 1.1 reads the key `on` as True
    assert on["schedule"] and on["schedule"][0]["cron"].split()[2:] == ["*", "*", "*"]   # daily
    drift = doc["jobs"]["drift"]
    runs = "\n".join(step.get("run", "") for step in drift["steps"])
    assert "@anthropic-ai/claude-code@latest" in runs
    assert 'live-trial doctor --cli "$PWD/claude-latest/node_modules/.bin/claude"' in runs
    assert "schedule" in drift["if"] and doc["jobs"]["plan"]["if"] == "github.event_name != 'schedule'"


def test_cases_are_the_unit_and_a_repeated_case_weighs_its_repeats() -> None:
    """references/suite-format.md "Repeats": a case runs whole on one shard; its weight is its own last duration (a
    case run's: all its attempts), else the mean of the known ones times its repeats."""
    plan = {"skills": [{"target": "p:s", "case": "one", "action": "run", "last_duration_s": 10},
                       {"target": "p:s", "case": "three", "action": "run", "last_duration_s": 60}]}
    entries = [{"target": "p:s", "case": "one"}, {"target": "p:s", "case": "three", "repeats": 3},
               {"target": "p:t", "case": "new", "repeats": 3}, {"target": "p:t"}]
    assert trial_weights(plan, entries) == [10, 60, 105, 35]
    assert trial_weights({"skills": []}, entries) == [1, 3, 3, 1]
    assert sorted(e["case"] if "case" in e else "-" for k in (1, 2) for e in shard_entries(plan, entries, k, 2)) == \
        sorted(["one", "three", "new", "-"])
