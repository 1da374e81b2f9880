"""What a verdict may rest on, on the real claude CLI in real tmux (README "The steps, one by one", "Evidence"): a PASS written by hand with no
evaluation is refused, nothing written, and one written with --override is never reused; a mostly-done PASS whose
watch failed runs again; a plugin whose hook command quotes its script's path plans, boots and has its hook run."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.run_support import EXAMPLES, FAST, PLUGINS, ROOT, SCENARIOS, final_json, run_cmd, workdirs

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent


def cli(*args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "live-trial"), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def plan_row(plugin_dir: Path, eval_root: Path, target: str, *extra: str) -> dict:
    proc = cli("plan", "--plugin-dir", str(plugin_dir), "--eval-root", str(eval_root), "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return next(s for s in json.loads(proc.stdout)["skills"] if s["target"] == target)


def readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- by-hand:start -->", 1)[1].split("<!-- by-hand:end -->", 1)[0]
    return block.split("```bash\n", 1)[1].rsplit("```", 1)[0]


#: After collect, with no evaluate: the verdict line prepare printed, claiming a PASS by hand; then with --override.
# The session still runs while the claims are tried (kill-session comes after): its CLI writes its own config and
# debug log meanwhile, so "nothing written" is read over every file but those two folders of the session's.
CLAIMS = r"""
VERDICT=$(grep '^live-trial verdict ' prepared.txt)
find eval-log -type f -not -path '*/claude-config/*' -not -path '*/claude-debug/*' -print0 | sort -z | xargs -0 sha256sum > before.sha
rc=0; eval "$VERDICT --goal-result PASS --evidence '1 file written with 1 line' --json" > refused.json || rc=$?
echo "REFUSED=$rc"
find eval-log -type f -not -path '*/claude-config/*' -not -path '*/claude-debug/*' -print0 | sort -z | xargs -0 sha256sum > after.sha
rc=0; eval "$VERDICT --completion FAIL" 2> contradicted.txt || rc=$?
echo "CONTRADICTED=$rc"
eval "$VERDICT --goal-result PASS --evidence '1 file written with 1 line' --override 'no evaluator ran here'"
live-trial plan --plugin-dir examples/plugins/hello --eval-root eval-log \
  --rehearsal-reuse examples/scenarios/greet-happy.yaml --json > plan.json
"""


@pytest.mark.budget(40)
def test_a_pass_written_by_hand_without_an_evaluation_is_refused_and_an_overridden_one_never_reused(tmp_path):
    shutil.copytree(EXAMPLES / "plugins", tmp_path / "examples" / "plugins")
    shutil.copytree(EXAMPLES / "scenarios", tmp_path / "examples" / "scenarios")
    block = readme_block()
    head, tail = block.split("live-trial evaluate ", 1)
    tail = tail.split("live-trial backend kill-session", 1)[1]
    script = head + CLAIMS + "live-trial backend kill-session" + tail           # the README's steps, evaluate left out
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=240,
                          env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"})
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert "REFUSED=2" in proc.stdout, proc.stdout[-2000:]
    refused = json.loads((tmp_path / "refused.json").read_text())
    assert refused["code"] == "not_judged" and "no evaluator judged the goal" in refused["message"], refused
    assert (tmp_path / "before.sha").read_text() == (tmp_path / "after.sha").read_text()    # nothing written
    assert "CONTRADICTED=2" in proc.stdout
    said = (tmp_path / "contradicted.txt").read_text().strip().splitlines()
    assert len(said) == 1 and "--completion FAIL contradicts the poll's record: its last poll exit is DONE" in said[0]
    [verdict] = (tmp_path / "eval-log").glob("hello/greet/live-trial/*/verdict.json")
    doc = json.loads(verdict.read_text())
    assert (doc["launch"], doc["completion"], doc["poll_exit"]) == ("PASS", "PASS", "DONE")   # read, not claimed
    assert doc["overall"]["verdict"] == "PASS" and doc["override"]["why"] == "no evaluator ran here"
    assert doc["evaluation_file"] is None
    row = next(s for s in json.loads((tmp_path / "plan.json").read_text())["skills"] if s["target"] == "hello:greet")
    assert row["action"] == "run" and "--override" in row["reason"] and "never reused" in row["reason"], row


@pytest.mark.budget(20)
def test_a_mostly_done_pass_whose_watch_failed_runs_again(tmp_path):
    scenario = SCENARIOS / "report-mailed.yaml"
    proc = run_cmd(tmp_path, "trialkit:report", "--plugins-root", str(PLUGINS), "--rehearsal", str(scenario), *FAST)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(Path(final_json(proc)["verdict_path"]).read_text())
    assert (doc["overall"]["verdict"], doc["goal_ledger"]) == ("PASS", "mostly_done") and doc["watch_id"]
    reuse = ("--rehearsal-reuse", str(scenario), "--max-live-trials", "9")     # trialkit's other skills run too
    first = plan_row(PLUGINS / "trialkit", tmp_path / "eval", "trialkit:report", *reuse)
    assert first["action"] == "reuse" and f"its watch {doc['watch_id']} is open until" in first["reason"], first
    ledger = workdirs(tmp_path)[0] / "rehearsal-watches"
    for _ in range(3):
        told = cli("watch", "--id", doc["watch_id"], "--result", "ng", "--note", "0 mails reached the customer",
                   "--eval-root", str(ledger))
        assert told.returncode == 0, told.stderr
    again = plan_row(PLUGINS / "trialkit", tmp_path / "eval", "trialkit:report", *reuse)
    assert again["action"] == "run", again
    assert f"its watch {doc['watch_id']} failed (3 × ng)" in again["reason"], again["reason"]


@pytest.mark.budget(20)
def test_a_plugin_whose_hook_command_quotes_its_path_plans_boots_and_runs_its_hook(tmp_path):
    plugins = tmp_path / "plugins"
    shutil.copytree(PLUGINS / "hookkit", plugins / "hookkit")
    row = plan_row(plugins / "hookkit", tmp_path / "eval", "hookkit:mark")
    assert row["action"] == "run", row                      # not refused: "missing file named by a hook command"
    proc = run_cmd(tmp_path, "hookkit:mark", "--plugins-root", str(plugins), "--rehearsal",
                   str(SCENARIOS / "mark-happy.yaml"), *FAST)
    result = final_json(proc)
    assert proc.returncode == 0, proc.stderr[-3000:] + json.dumps(result)[-2000:]
    doc = json.loads(Path(result["verdict_path"]).read_text())
    assert doc["overall"]["verdict"] == "PASS" and doc["skill_dir_tree_sha"] == row["skill_dir_tree_sha"]
    assert not [n for n in doc["notes"] if "could not be read as the shell reads it" in n], doc["notes"]
    assert (plugins / "hookkit" / "hook-ran.log").read_text().strip(), "the CLI never ran the quoted hook command"
