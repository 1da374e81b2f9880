"""The suite file (references/suite-format.md): a bad file is refused whole with its file, line and key; a good one
gives each skill its named cases; ``plan`` refuses a suite naming a skill the plugin does not have."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from live_trial.acceptance.plan_inputs import plan_suites
from live_trial.acceptance.suite import SUITE_FILE, load_suite
from live_trial.errors import RefusedInput

ROOT = Path(__file__).resolve().parents[3]


def refused(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / SUITE_FILE
    path.write_text(text)
    with pytest.raises(RefusedInput) as caught:
        load_suite(path)
    assert caught.value.code == "bad_suite"
    return caught.value.details["problems"]


@pytest.mark.parametrize("text,line,key,words", [
    ("skills:\n  greet:\n    cases:\n      - name: a\n        arg: World\n", 5, "skills.greet.cases[0].arg",
     "unknown key 'arg'"),
    ("skills:\n  greet:\n    case: []\n", 3, "skills.greet.case", "unknown key 'case'"),
    ("skill: {}\n", 1, "skill", "unknown key 'skill'"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        stall_limit: 0\n", 5,
     "skills.greet.cases[0].stall_limit", "0 is less than or equal to the minimum of 0"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        answers:\n          - {answer: Casual, kind: contract}\n",
     6, "skills.greet.cases[0].answers[0].kind", "'contract' is not one of"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        answers:\n          - {answer: Casual}\n",
     6, "skills.greet.cases[0].answers[0]", "'kind' is a required property"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        expect: DONE\n", 5, "skills.greet.cases[0].expect",
     "'DONE' is not one of ['PASS', 'gate']"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n      - name: a\n", 5, "skills.greet.cases[1].name",
     "case name 'a' is used twice"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        kind: judged\n", 5, "skills.greet.cases[0].kind",
     "'judged' is not one of ['task', 'activation']"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        kind: activation\n", 5, "skills.greet.cases[0].kind",
     "an activation case needs prompts"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        repeats: 0\n", 5, "skills.greet.cases[0].repeats",
     "0 is less than the minimum of 1"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        repeats: 1000\n", 5, "skills.greet.cases[0].repeats",
     "1000 is greater than the maximum of 100"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        scenario: nosuch.yaml\n", 5,
     "skills.greet.cases[0].scenario", "no scenario file"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        cwd: nosuch\n", 5, "skills.greet.cases[0].cwd",
     "no fixture folder"),
    ("skills:\n  greet:\n    cases:\n      - name: a\n        args: \"one\\ntwo\"\n", 5, "skills.greet.cases[0].args",
     "args must be one line"),
])
def test_a_bad_suite_names_its_file_line_and_key(tmp_path: Path, text: str, line: int, key: str, words: str) -> None:
    problems = refused(tmp_path, text)      # a misspelt key also leaves its required neighbour missing: both named
    assert problems[0].startswith(f"{tmp_path / SUITE_FILE}:{line} {key}: "), problems[0]
    assert words in problems[0]


def test_every_problem_is_named_at_once_in_line_order(tmp_path: Path) -> None:
    problems = refused(tmp_path, "skills:\n  greet:\n    cases:\n      - name: a\n        proof: yes-please\n"
                                 "        arg: x\n  \"bad name\":\n    cases: [{name: b}]\n")
    assert [p.split(" ")[0].rsplit(":", 1)[1] for p in problems] == ["5", "6", "7"]


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    assert "None is not of type 'object'" in refused(tmp_path, "")[0]


def test_not_yaml_is_refused_with_its_line(tmp_path: Path) -> None:
    problems = refused(tmp_path, "skills:\n  greet: [\n")
    assert problems[0].startswith(f"{tmp_path / SUITE_FILE}:3: not YAML")


def test_a_good_suite_gives_each_skill_its_cases(tmp_path: Path) -> None:
    (tmp_path / "fixture").mkdir()
    (tmp_path / "s.yaml").write_text("name: s\nrules: []\n")
    path = tmp_path / SUITE_FILE
    path.write_text("skills:\n  greet:\n    cases:\n"
                    "      - {name: world, args: World, scenario: s.yaml, cwd: fixture, stall_limit: 4, hard_cap: 90,"
                    " max_cost_usd: 0.5, model: claude-sonnet-4-5, repeats: 1}\n"
                    "      - {name: ask, answers: [{answer: Casual, kind: contractual}], expect: gate}\n")
    suite = load_suite(path)
    world, ask = suite.cases_for("hello", "greet") or ()
    assert (world.name, world.args, world.scenario, world.cwd) == ("world", "World", tmp_path / "s.yaml",
                                                                   tmp_path / "fixture")
    assert (world.stall_limit_s, world.hard_cap_s, world.max_cost_usd, world.answers) == (4, 90, 0.5, None)
    assert (ask.answers, ask.expect_gate) == ((("Casual", "contractual"),), True)
    assert suite.cases_for("hello", "other") is None


def test_a_suite_naming_a_skill_the_plugin_lacks_is_refused(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples" / "plugins" / "hello", tmp_path / "hello")
    (tmp_path / "hello" / SUITE_FILE).write_text("skills:\n  greet:\n    cases: [{name: a}]\n"
                                                 "  gret:\n    cases: [{name: b}]\n")
    with pytest.raises(RefusedInput) as caught:
        plan_suites([tmp_path / "hello"])
    assert f"{tmp_path / 'hello' / SUITE_FILE}:4 skills.gret" in caught.value.message


def test_plan_plans_one_row_per_case_and_refuses_a_bad_suite_writing_nothing(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    shutil.copytree(ROOT / "examples" / "plugins" / "hello", tmp_path / "hello")
    suite = tmp_path / "hello" / SUITE_FILE
    suite.write_text("skills:\n  greet:\n    cases: [{name: ada, args: Ada}, {name: bob, args: Bob}]\n")
    argv = [sys.executable, "-m", "live_trial", "plan", "--plugin-dir", str(tmp_path / "hello"),
            "--eval-root", str(tmp_path / "eval"), "--json"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(s["case"], s["action"]) for s in doc["skills"] if s["skill"] == "greet"] == [("ada", "run"), ("bob", "run")]
    assert [e["args"] for b in doc["live_batches"] for e in b] == ["Ada", "Bob"]
    assert doc["skills"][0]["scenario_id"] != doc["skills"][1]["scenario_id"]
    shutil.rmtree(tmp_path / "eval", ignore_errors=True)
    suite.write_text("skills:\n  greet:\n    cases: [{name: ada, argz: Ada}]\n")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2
    refusal = json.loads(proc.stdout)
    assert (refusal["status"], refusal["code"]) == ("REFUSED", "bad_suite")
    assert refusal["message"].startswith(f"the suite file is not valid: {suite}:3 skills.greet.cases[0].argz: "
                                         "unknown key 'argz'")
    assert not (tmp_path / "eval").exists()
