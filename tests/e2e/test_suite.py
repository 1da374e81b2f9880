"""A suite of trials through ``plan`` and ``run --plan`` on the real claude CLI in real tmux, the model played by
rehearsal scenarios (README "Planning many skills", references/suite-format.md).

A case with arguments is run once and reused on the next plan (its ``scenario_id`` holds its args); a skill that asks
a question is answered from the suite file; a case that gives no answer to a skill that asks is a ``needs_answer``
row and no trial starts for it.
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
from tests.e2e.run_support import EXAMPLES, FAST, PLUGINS, ROOT, SCENARIOS, final_json, run_cmd, workdirs

pytestmark = pytest.mark.e2e


def plan_cmd(tmp: Path, plugin_dir: Path, *extra: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir", str(plugin_dir),
                           "--eval-root", str(tmp / "eval"), "--json", *extra], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert schema_errors(doc, "plan.schema.json") == []
    return doc


def row(doc: dict, target: str, case: str) -> dict:
    return next(s for s in doc["skills"] if s["target"] == target and s.get("case") == case)


@pytest.mark.budget(10)
def test_a_case_with_args_is_run_once_then_reused(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "plugins" / "hello", tmp_path / "hello")
    scenario = tmp_path / "greet-happy.yaml"
    shutil.copy(EXAMPLES / "scenarios" / "greet-happy.yaml", scenario)
    suite = tmp_path / "suite.yaml"
    suite.write_text("skills:\n  greet:\n    cases:\n      - name: ada\n        args: Ada\n"
                     "        scenario: greet-happy.yaml\n")
    reuse = ("--suite", str(suite), "--rehearsal-reuse", str(scenario))
    first = plan_cmd(tmp_path, tmp_path / "hello", *reuse, "--out", str(tmp_path / "plan.json"))
    assert [(s["target"], s["case"], s["action"]) for s in first["skills"] if s["skill"] == "greet"] == [
        ("hello:greet", "ada", "run")]
    assert first["live_batches"] == [[{"target": "hello:greet", "plugins_root": str(tmp_path), "proof": False,
                                       "args": "Ada", "case": "ada", "rehearsal": str(scenario)}]]
    proc = run_cmd(tmp_path, "--plan", str(tmp_path / "plan.json"), "--rehearsal", str(scenario), *FAST,
                   timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert [(t["target"], t["status"]) for t in final_json(proc)["trials"] if t["status"] != "NEEDS_ANSWER"] == [
        ("hello:greet [ada]", "PASS")]
    wd, = workdirs(tmp_path)
    assert 'args: "Ada"' in (wd / "task.md").read_text()        # the case's args reached the skill's call
    verdict = json.loads((wd / "verdict.json").read_text())
    assert verdict["scenario_id"] == first["skills"][0]["scenario_id"]

    again = row(plan_cmd(tmp_path, tmp_path / "hello", *reuse), "hello:greet", "ada")
    assert again["action"] == "reuse", again["reason"]
    # the same skill with other args is another contract: run, not reused
    suite.write_text(suite.read_text().replace("args: Ada", "args: Bob"))
    other = row(plan_cmd(tmp_path, tmp_path / "hello", *reuse), "hello:greet", "ada")
    assert (other["action"], other["reason"]) == ("run", "task contract (scenario_id) changed since the last PASS")


@pytest.mark.budget(10)
def test_a_question_is_answered_from_the_suite_and_an_unanswered_one_starts_no_trial(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    shutil.copy(SCENARIOS / "choose-gate.yaml", tmp_path / "choose-gate.yaml")
    suite.write_text("skills:\n  trialkit:choose:\n    cases:\n"
                     "      - name: casual\n        answers: [{answer: Casual, kind: contractual}]\n"
                     "        expect: gate\n        scenario: choose-gate.yaml\n"
                     "      - name: unanswered\n        scenario: choose-gate.yaml\n")
    doc = plan_cmd(tmp_path, PLUGINS / "trialkit", "--suite", str(suite), "--max-live-trials", "1",
                   "--out", str(tmp_path / "plan.json"))
    assert row(doc, "trialkit:choose", "casual")["action"] == "run"
    unanswered = row(doc, "trialkit:choose", "unanswered")
    assert unanswered["action"] == "needs_answer"
    assert unanswered["reason"].startswith("needs an answer to its question (allowed-tools name AskUserQuestion)")
    assert [[e["case"] for e in b] for b in doc["live_batches"]] == [["casual"]]
    proc = run_cmd(tmp_path, "--plan", str(tmp_path / "plan.json"), "--max-concurrency", "1", *FAST, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {t["target"]: t["status"] for t in final_json(proc)["trials"]}
    assert rows == {"trialkit:choose [casual]": "PASS", "trialkit:choose [unanswered]": "NEEDS_ANSWER"}
    wd, = workdirs(tmp_path)                                    # one trial: the unanswered case never started
    verdict = json.loads((wd / "verdict.json").read_text())
    assert (verdict["gate_kind"], verdict["overall"]["verdict"]) == ("contractual", "PASS")
    assert [a["answer"] for a in verdict["gate_answers"]] == ["Casual"]
    assert verdict["gate_contract_evidence"] == ["frontmatter allowed-tools: AskUserQuestion"]
