"""Repeated cases and a fair plan on the real claude CLI in real tmux, the model played by rehearsal scenarios
(references/suite-format.md "Repeats", README "Planning many skills").

- A suite case of 3 repeats whose scenario fails its second attempt ends FLAKY (exit 7) with a pass rate of 2/3, three
  workdirs kept and linked, one message with the pass rate; the next plan never reuses it. The case's own criterion
  reaches each attempt's evaluator and verdict.
- A case run whose first attempt is BLOCKED (the model's service down) tries it again: the BLOCKED attempt is no
  sample, its workdir is kept, and the case passes on 2 samples of 2.
- Four skills over two plans with a budget of 2, two of which keep failing: all four run within the two plans.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from live_trial.jsonfile import schema_errors
from tests.e2e.run_support import EXAMPLES, FAST, ROOT, SCENARIOS, final_json, run_cmd, workdirs

pytestmark = pytest.mark.e2e

HELLO = EXAMPLES / "plugins" / "hello"


def plan_cmd(tmp: Path, plugin_dir: Path, *extra: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir", str(plugin_dir),
                           "--eval-root", str(tmp / "eval"), "--json", *extra], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def case_verdict(tmp: Path) -> dict:
    (path,) = (tmp / "eval").glob("*/*/live-trial-cases/*/case-verdict.json")
    doc = json.loads(path.read_text())
    assert schema_errors(doc, "case-verdict.schema.json") == []
    return doc


@pytest.mark.budget(14)
def test_a_three_repeat_case_failing_one_attempt_is_flaky_two_of_three_and_never_reused(tmp_path: Path) -> None:
    shutil.copy(SCENARIOS / "greet-flaky.yaml", tmp_path / "greet-flaky.yaml")
    suite = tmp_path / "suite.yaml"
    suite.write_text("skills:\n  greet:\n    cases:\n"
                     "      - {name: thrice, repeats: 3, scenario: greet-flaky.yaml, stall_limit: 4, hard_cap: 90,\n"
                     "         criteria: [{id: S1, text: greeting.txt holds exactly the promised line}]}\n")
    reuse = ("--suite", str(suite), "--rehearsal-reuse", str(tmp_path / "greet-flaky.yaml"))
    first = plan_cmd(tmp_path, HELLO, *reuse, "--max-live-trials", "3", "--out", str(tmp_path / "plan.json"))
    (entry,) = [e for b in first["live_batches"] for e in b]
    assert (entry["repeats"], entry["criteria"]) == (3, [{"id": "S1", "text": "greeting.txt holds exactly the "
                                                                             "promised line"}])
    proc = run_cmd(tmp_path, "--plan", str(tmp_path / "plan.json"), "--rehearsal", str(tmp_path / "greet-flaky.yaml"),
                   "--lang", "en", "--junit", str(tmp_path / "junit.xml"), timeout=300)
    assert proc.returncode == 7, proc.stdout[-3000:] + proc.stderr[-3000:]          # FLAKY: never a PASS
    (row,) = [t for t in final_json(proc)["trials"] if t["status"] != "NEEDS_ANSWER"]    # greet-style: no case
    assert (row["target"], row["status"], row["pass_rate"]) == (
        "hello:greet [thrice]", "FLAKY", {"passed": 2, "samples": 3, "rate": 0.6667})
    doc = case_verdict(tmp_path)
    wds = workdirs(tmp_path)
    assert len(wds) == 3 and [a["verdict"] for a in doc["attempts"]] == ["PASS", "DEGRADED", "PASS"]
    assert sorted(str(tmp_path / "eval" / a["workdir"]) for a in doc["attempts"]) == [str(w) for w in wds]
    for wd, attempt in zip(sorted(wds), doc["attempts"]):
        verdict = json.loads((wd / "verdict.json").read_text())
        assert verdict["overall"]["verdict"] == attempt["verdict"]          # each attempt judged on its own
        state = json.loads((wd / "trial-state.json").read_text())
        assert state["case_run"]["attempt"] == attempt["n"]
        # the case's own criterion reached the evaluator's request and the verdict's criteria lines
        asked = json.loads((wd / "evaluation.json").read_text())["criteria"]
        assert asked == [{"id": "S1", "text": "greeting.txt holds exactly the promised line"}]
        assert [(c["id"], c["result"]) for c in verdict["criteria"]] == [
            ("S1", "pass" if attempt["verdict"] == "PASS" else "fail")]
        assert verdict["scenario_id"] == first["skills"][0]["scenario_id"]
    assert (wds[1] / "cwd" / "greeting.txt").read_text() == "Hello World\n"        # the failed one is kept
    notes = [json.loads(line) for line in (tmp_path / "eval" / "notifications.jsonl").read_text().splitlines()]
    assert [n["kind"] for n in notes] == ["flaky"] and "passed 2 of its 3 tries" in notes[0]["text"]
    assert 'type="FLAKY"' in (tmp_path / "junit.xml").read_text()
    page = Path(row["report"]).read_text()
    assert all(f"../../live-trial/{wd.name}/report.html" in page for wd in wds)
    again = plan_cmd(tmp_path, HELLO, *reuse)["skills"][0]
    assert again["action"] == "run" and "a FLAKY case is never reused as a PASS" in again["reason"]


@pytest.mark.budget(12)
def test_a_blocked_attempt_is_no_sample_and_is_tried_again(tmp_path: Path) -> None:
    proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", str(EXAMPLES / "plugins"), "--repeat", "2",
                   "--rehearsal", str(SCENARIOS / "greet-blocked-once.yaml"), "--lang", "en", *FAST,
                   env={"CLAUDE_CODE_MAX_RETRIES": "1"}, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = final_json(proc)
    assert (out["status"], out["pass_rate"]) == ("PASS", {"passed": 2, "samples": 2, "rate": 1.0})
    assert [(a["n"], a["verdict"], a["sample"], a["stop_reason"]) for a in out["attempts"]] == [
        (1, "BLOCKED", False, "model_unavailable"), (2, "PASS", True, None), (3, "PASS", True, None)]
    doc = case_verdict(tmp_path)
    assert doc["blocked_retries"] == {"used": 1, "max": 2}
    assert len(workdirs(tmp_path)) == 3 and all(Path(a["workdir"]).is_dir() for a in out["attempts"])
    assert doc["reasons"][0].startswith("attempt 1: BLOCKED (model_unavailable), not a sample")
    assert "were tried again" in out["notification"]


def fair_plugin(root: Path) -> Path:
    """A plugin of four live skills, each promising greeting.txt."""
    plugin = root / "fair"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "fair", "version": "1.0.0"}')
    for name in ("w1", "w2", "w3", "w4"):
        (plugin / "skills" / name).mkdir(parents=True)
        (plugin / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Writes greeting.txt holding Hello, World! in the working folder.\n"
            "allowed-tools: Skill, Write\n---\n\nWrite greeting.txt, then the completion marker, then DONE: ok.\n")
    for name in ("fair-pass.yaml", "fair-fail.yaml"):
        shutil.copy(SCENARIOS / name, plugin / name)
    (plugin / "live-trials.yaml").write_text(
        "skills:\n" + "".join(f"  {name}:\n    cases:\n      - {{name: one, scenario: {scen}, stall_limit: 4, "
                              "hard_cap: 90}\n"
                              for name, scen in (("w1", "fair-fail.yaml"), ("w2", "fair-fail.yaml"),
                                                 ("w3", "fair-pass.yaml"), ("w4", "fair-pass.yaml"))))
    return plugin


@pytest.mark.budget(10)
def test_four_skills_over_two_plans_of_budget_two_all_run_though_two_keep_failing(tmp_path: Path) -> None:
    plugin = fair_plugin(tmp_path / "plugins")
    ran: list[list[str]] = []
    for n in (1, 2):
        doc = plan_cmd(tmp_path, plugin, "--max-live-trials", "2", "--out", str(tmp_path / f"plan{n}.json"))
        proc = run_cmd(tmp_path, "--plan", str(tmp_path / f"plan{n}.json"), timeout=300)
        rows = final_json(proc)["trials"]
        ran.append(sorted(r["target"] for r in rows if r["status"] not in ("REUSED", "NEEDS_ANSWER")))
        if n == 1:
            assert {r["target"]: r["status"] for r in rows} == {"fair:w1 [one]": "DEGRADED",
                                                                "fair:w2 [one]": "DEGRADED"}, rows
        else:
            waited = {s["skill"]: s for s in doc["skills"]}
            assert waited["w3"]["fairness"] == {"rank": "waited", "plans_waited": 1,
                                                "waiting_since": waited["w3"]["fairness"]["waiting_since"],
                                                "last_trial": None}
            assert waited["w1"]["action"] == "defer" and waited["w1"]["fairness"]["rank"] == "failed"
    assert ran == [["fair:w1 [one]", "fair:w2 [one]"], ["fair:w3 [one]", "fair:w4 [one]"]]
    assert sorted({json.loads((w / "verdict.json").read_text())["target"] for w in workdirs(tmp_path)}) == [
        "fair:w1", "fair:w2", "fair:w3", "fair:w4"]
