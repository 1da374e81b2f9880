"""``run TARGET --case NAME [--suite FILE]`` and the pytest collector of ``live-trials.yaml`` (README "Planning many
skills", "Testing a skill with pytest"): what is refused before any trial (exit 2, nothing created), what is a usage
error, and what pytest collects: one test per case, a bad suite one collection error with its file and line."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from live_trial.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def run(tmp_path: Path, *argv: str) -> int:
    return main(["run", *argv, "--plugins-root", str(EXAMPLES / "plugins"), "--eval-root", str(tmp_path / "eval")])


@pytest.mark.parametrize("argv, words", [
    (["hello:greet", "--case", "nope"], "the suite has no case 'nope' for hello:greet (its cases: happy, ada, natural)"),
    (["hello:greet-style", "--case", "casual", "--suite", "nosuch.yaml"], "no suite file"),
])
def test_a_case_that_cannot_be_found_is_refused_and_nothing_is_created(tmp_path, capsys, argv, words):
    assert run(tmp_path, *argv) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "eval").exists()


def test_a_suite_that_names_no_case_of_the_skill_says_which_skill_it_names(tmp_path, capsys):
    suite = tmp_path / "suite.yaml"
    suite.write_text("skills:\n  nope:\n    cases:\n      - {name: a}\n")
    assert run(tmp_path, "hello:greet", "--case", "a", "--suite", str(suite)) == 2
    err = capsys.readouterr().err
    assert "the suite names no case of hello:greet; it names " in err and "skills.nope, no skill here" in err, err
    assert not (tmp_path / "eval").exists()


def test_a_case_that_could_only_stop_at_its_question_is_refused(tmp_path, capsys):
    suite = tmp_path / "suite.yaml"
    suite.write_text("skills:\n  hello:greet-style:\n    cases:\n      - {name: silent}\n")
    assert run(tmp_path, "hello:greet-style", "--case", "silent", "--suite", str(suite)) == 2
    assert "needs an answer to its question (allowed-tools name AskUserQuestion)" in capsys.readouterr().err
    assert not (tmp_path / "eval").exists()


@pytest.mark.parametrize("argv", [["--live", "hello:greet"], ["--case", "x", "--resume", "wd"],
                                  ["--repeat", "3", "--resume", "wd"]])
def test_case_live_and_repeat_need_a_target_or_a_case(tmp_path, capsys, argv):
    assert run(tmp_path, *argv) == 64


def collect(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def test_pytest_collects_one_test_per_case_of_a_suite_file():
    proc = collect(str(EXAMPLES / "plugins" / "hello" / "live-trials.yaml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    items = [line.split("::", 1)[1] for line in proc.stdout.splitlines() if "::" in line]
    assert items == ["hello:greet[happy]", "hello:greet[ada]", "hello:greet[natural]", "hello:greet-style[casual]"]


def test_a_bad_suite_file_is_one_collection_error_naming_its_line_and_key(tmp_path):
    plugin = tmp_path / "p"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "p"}')
    (plugin / "live-trials.yaml").write_text("skills:\n  s:\n    cases:\n      - {name: a, repeat: 3}\n")
    proc = collect(str(plugin / "live-trials.yaml"))
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "live-trials.yaml:4 skills.s.cases[0].repeat: unknown key 'repeat'" in out
    assert "Traceback" not in out and "RefusedInput" not in out, out[-2000:]          # the one line, no traceback
