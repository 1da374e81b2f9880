"""``run --plan --suite FILE`` (README "Planning many skills"): a bad suite, or one changed since the plan was made
from it, is refused (exit 2) before any trial starts and nothing is written."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd)


def test_a_suite_changed_since_the_plan_or_a_bad_one_is_refused_before_any_trial(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples" / "plugins" / "hello", tmp_path / "hello")
    suite = tmp_path / "suite.yaml"
    suite.write_text("skills:\n  greet:\n    cases: [{name: ada, args: Ada}]\n")
    made = cli("plan", "--plugin-dir", str(tmp_path / "hello"), "--suite", str(suite), "--eval-root",
               str(tmp_path / "eval"), "--out", str(tmp_path / "plan.json"), "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    doc = json.loads(made.stdout)
    assert [s["path"] for s in doc["suites"]] == [str(suite.resolve())]
    shutil.rmtree(tmp_path / "eval", ignore_errors=True)
    run = ("run", "--plan", str(tmp_path / "plan.json"), "--suite", str(suite), "--json")
    suite.write_text("skills:\n  greet:\n    cases: [{name: ada, args: Bob}]\n")
    changed = cli(*run, cwd=tmp_path)
    assert changed.returncode == 2 and json.loads(changed.stdout)["code"] == "suite_changed", changed.stdout
    suite.write_text("skills:\n  greet:\n    cases: [{name: ada, args: Ada, hardcap: 5}]\n")
    bad = cli(*run, cwd=tmp_path)
    out = json.loads(bad.stdout)
    assert bad.returncode == 2 and out["code"] == "bad_suite"
    assert f"{suite.resolve()}:3 skills.greet.cases[0].hardcap: unknown key 'hardcap'" in out["message"]
    assert not (tmp_path / "eval").exists()


def test_suite_without_plan_is_a_usage_error(tmp_path: Path) -> None:
    proc = cli("run", "hello:greet", "--suite", str(tmp_path / "s.yaml"), cwd=tmp_path)
    assert proc.returncode == 64 and "--suite need --plan" in proc.stderr


def test_a_plan_run_refuses_a_concurrency_of_zero_and_a_stand_in_naming_the_suite_as_its_place(tmp_path: Path) -> None:
    """--max-concurrency 0 is refused, not read as "the plan's own"; --mcp-fixture with --plan points to the suite's
    per-case mcp_fixtures (README "The suite of trials"). Exit 2, nothing written."""
    shutil.copytree(ROOT / "examples" / "plugins" / "hello", tmp_path / "hello")
    made = cli("plan", "--plugin-dir", str(tmp_path / "hello"), "--eval-root", str(tmp_path / "eval"), "--out",
               str(tmp_path / "plan.json"), "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    shutil.rmtree(tmp_path / "eval", ignore_errors=True)
    zero = cli("run", "--plan", str(tmp_path / "plan.json"), "--max-concurrency", "0", "--json", cwd=tmp_path)
    assert zero.returncode == 2 and "--max-concurrency must be a whole number >= 1 (got 0)" in zero.stdout, zero.stdout
    stand_in = cli("run", "--plan", str(tmp_path / "plan.json"), "--mcp-fixture", "db=true", "--json", cwd=tmp_path)
    out = json.loads(stand_in.stdout)
    assert stand_in.returncode == 2 and out["code"] == "per_skill_option_with_plan"
    assert "write them per case in the suite file" in out["message"] and "questions" not in out["message"]
    assert not (tmp_path / "eval").exists()


def test_an_activation_case_refuses_a_concurrency_of_zero(tmp_path: Path) -> None:
    proc = cli("run", "hello:greet", "--case", "natural", "--suite",
               str(ROOT / "examples" / "plugins" / "hello" / "live-trials.yaml"), "--plugins-root",
               str(ROOT / "examples" / "plugins"), "--eval-root", str(tmp_path / "eval"), "--max-concurrency", "0",
               "--json", cwd=tmp_path)
    assert proc.returncode == 2 and "--max-concurrency must be a whole number >= 1 (got 0)" in proc.stdout, proc.stdout
    assert not (tmp_path / "eval").exists()


def test_a_case_with_its_own_scenario_refuses_another_one_instead_of_dropping_it(tmp_path: Path) -> None:
    """README "The suite of trials": a case that names its scenario is played from it; a --rehearsal given beside it
    would be silently unused, so it is refused (exit 2, nothing written)."""
    proc = cli("run", "hello:greet", "--case", "ada", "--suite",
               str(ROOT / "examples" / "plugins" / "hello" / "live-trials.yaml"), "--plugins-root",
               str(ROOT / "examples" / "plugins"), "--eval-root", str(tmp_path / "eval"), "--rehearsal",
               str(ROOT / "examples" / "scenarios" / "greet-happy.yaml"), "--json", cwd=tmp_path)
    out = json.loads(proc.stdout)
    assert proc.returncode == 2 and "is played from its own scenario" in out["message"], proc.stdout
    assert "drop --rehearsal" in out["message"] and not (tmp_path / "eval").exists()


def test_a_plan_run_refuses_a_queue_file_that_does_not_fit_and_writes_nothing(tmp_path: Path) -> None:
    """run --plan records the plan's deferred cases in queue.json before its first trial (README "A fair plan: the
    defer queue"): a queue.json that does not fit its schema refuses the run, exit 2, the file as it was."""
    shutil.copytree(ROOT / "examples" / "plugins" / "hello", tmp_path / "hello")
    made = cli("plan", "--plugin-dir", str(tmp_path / "hello"), "--eval-root", str(tmp_path / "eval"), "--out",
               str(tmp_path / "plan.json"), "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert not (tmp_path / "eval" / "queue.json").exists()             # a plan only reads the queue
    (tmp_path / "eval").mkdir(exist_ok=True)
    (tmp_path / "eval" / "queue.json").write_text('{"cases": 3}')
    before = sorted(str(p) for p in (tmp_path / "eval").rglob("*"))
    proc = cli("run", "--plan", str(tmp_path / "plan.json"), "--json", cwd=tmp_path)
    assert proc.returncode == 2 and "queue.json" in proc.stdout + proc.stderr, (proc.stdout, proc.stderr)
    assert (tmp_path / "eval" / "queue.json").read_text() == '{"cases": 3}'
    assert sorted(str(p) for p in (tmp_path / "eval").rglob("*")) == before
