"""A plan spread over CI machines (README "Sharding a plan over CI machines"), on the real CLI in real tmux: three
shard processes of one rehearsal plan, each with its own eval-log, then ``merge``, give the same verdicts as one
unsharded run of the plan; every trial ran in exactly one shard; the JUnit files count what the verdicts say; the
GitHub annotation names the failing skill's SKILL.md; and merge refuses eval-logs that disagree, writing nothing."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import JUnitXml

from .run_support import FAST, PLUGINS, ROOT, SCENARIOS


def _cli(*args: str, env: dict | None = None, timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, **(env or {})})


def _run_plan(plan: Path, eval_root: Path, *extra: str, env: dict | None = None) -> subprocess.Popen:
    argv = [sys.executable, "-m", "live_trial", "run", "--plan", str(plan), "--plugins-root", str(PLUGINS),
            "--rehearsal", str(SCENARIOS / "mark-happy.yaml"), "--eval-root", str(eval_root), "--json", *FAST, *extra]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, **(env or {})})


def _verdicts(eval_root: Path) -> list[tuple[str, str]]:
    out = []
    for path in sorted(eval_root.glob("*/*/live-trial/*/verdict.json")):
        doc = json.loads(path.read_text())
        out.append((doc["target"], doc["overall"]["verdict"]))
    return sorted(out)


#: trialkit:choose asks nothing in these scenarios: its case says so (answers: [])
QUIET = Path(__file__).resolve().parent / "suites" / "trialkit-quiet.yaml"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.budget(45)
def test_three_shards_and_merge_give_the_verdicts_of_one_run(tmp_path: Path) -> None:
    made = _cli("plan", "--plugin-dir", str(PLUGINS / "trialkit"), "--eval-root", str(tmp_path / "plan-eval"),
                "--suite", str(QUIET), "--max-live-trials", "4", "--max-concurrency", "2", "--json", timeout=60)
    assert made.returncode == 0, made.stderr
    plan = json.loads(made.stdout)
    # one skill of the plan plays a session that never writes its marker: a FAIL among the PASSes
    for batch in plan["live_batches"]:
        for entry in batch:
            if entry["target"] == "trialkit:mark2":
                entry["rehearsal"] = str(SCENARIOS / "mark-no-marker.yaml")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    to_run = sorted(e["target"] for batch in plan["live_batches"] for e in batch)
    assert len(to_run) == 4 and plan["counts"]["defer"] == 1

    summary = tmp_path / "step-summary.md"
    whole = _run_plan(plan_file, tmp_path / "whole", "--junit", str(tmp_path / "whole.xml"), "--github-annotations",
                      env={"GITHUB_STEP_SUMMARY": str(summary)})
    shards = [_run_plan(plan_file, tmp_path / f"shard{k}", "--shard", f"{k}/3", "--max-concurrency", "1",
                        "--junit", str(tmp_path / f"shard{k}.xml")) for k in (1, 2, 3)]
    outs = [(p, *p.communicate(timeout=400)) for p in [whole, *shards]]
    for k, (proc, out, err) in enumerate(outs):
        ran = [t for t, _ in _verdicts(tmp_path / ("whole" if k == 0 else f"shard{k}"))]
        worst = 1 if "trialkit:mark2" in ran else 0                   # the worst verdict of what it ran
        assert proc.returncode == worst, f"exit {proc.returncode}: {out[-2000:]} {err[-2000:]}"
    table = [ln for ln in summary.read_text().splitlines() if ln.startswith("| trialkit:")]
    assert len(table) == 5 and sum("❌ FAIL" in ln for ln in table) == 1 and sum("✅ PASS" in ln for ln in table) == 3

    expected = _verdicts(tmp_path / "whole")
    assert [t for t, _ in expected] == to_run
    assert dict(expected)["trialkit:mark2"] == "FAIL" and {v for t, v in expected if t != "trialkit:mark2"} == {"PASS"}
    per_shard = [[t for t, _ in _verdicts(tmp_path / f"shard{k}")] for k in (1, 2, 3)]
    assert sorted(t for s in per_shard for t in s) == to_run            # each trial in exactly one shard
    assert sorted(len(s) for s in per_shard) == [1, 1, 2]               # balanced by count (no duration known)

    # the annotation of the failing skill, on the unsharded run's stdout
    whole_out = outs[0][1]
    notes = [ln for ln in whole_out.splitlines() if ln.startswith("::")]
    assert len(notes) == 1 and notes[0].startswith("::error file=tests/e2e/plugins/trialkit/skills/mark2/SKILL.md,")

    # JUnit: counts per outcome are those of the verdicts; the deferred skill is reported once, by shard 1
    def counts(path: Path) -> tuple[int, int, int, int]:
        suite = next(iter(JUnitXml.fromfile(str(path))))
        return suite.tests, suite.failures, suite.errors, suite.skipped
    assert counts(tmp_path / "whole.xml") == (5, 1, 0, 1)
    shard_counts = [counts(tmp_path / f"shard{k}.xml") for k in (1, 2, 3)]
    assert [sum(c[i] for c in shard_counts) for i in range(4)] == [5, 1, 0, 1]
    assert shard_counts[0][3] == 1

    merged = tmp_path / "merged"
    proc = _cli("merge", *(str(tmp_path / f"shard{k}") for k in (1, 2, 3)), "--into", str(merged), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["trials"] == 4
    assert _verdicts(merged) == expected
    notes = [json.loads(ln) for ln in (merged / "notifications.jsonl").read_text().splitlines()]
    shard_notes = sum(len((tmp_path / f"shard{k}" / "notifications.jsonl").read_text().splitlines()) for k in (1, 2, 3))
    assert len(notes) == shard_notes == 4

    # a shard's eval-log that disagrees with another (an edited verdict) is refused whole
    bad = tmp_path / "bad"
    shutil.copytree(tmp_path / "shard1", bad)
    verdict = next(bad.glob("*/*/live-trial/*/verdict.json"))
    verdict.write_text(verdict.read_text() + " ")
    before = _tree(merged)
    refused = _cli("merge", str(bad), str(tmp_path / "shard1"), "--into", str(merged))
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1 and "the eval-logs disagree" in refused.stderr
    assert _tree(merged) == before
