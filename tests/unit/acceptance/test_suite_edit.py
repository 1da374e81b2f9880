"""``rehearsal new PLUGIN:SKILL --suite FILE --case NAME`` appends a case to a suite file and keeps every other byte of
it (references/suite-format.md); a case name the skill has is refused and nothing is written."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from live_trial.acceptance.suite import load_suite
from live_trial.acceptance.suite_edit import append_case, appended
from live_trial.cli.main import main
from live_trial.errors import RefusedInput

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

AUTHORED = """# the trials of my plugin  (kept as written)
skills:
  greet:
    cases:
      # the happy path
      - name: happy
        args: World     # a comment on a value
      - {name: flow, args: "x"}
  # a comment between skills
  other:
    cases: [{name: c}]
# the end
"""


def lines_kept(before: str, after: str, changed: str | None = None) -> bool:
    """Every line of ``before`` is in ``after``, in the same order (but ``changed``, the line a flow list is in)."""
    it = iter(after.splitlines())
    return all(any(line == seen for seen in it) for line in before.splitlines() if line != changed)


@pytest.mark.parametrize("key, text, expected_line, changed", [
    ("greet", AUTHORED, "      - {name: new, scenario: s.yaml}", None),
    ("other", AUTHORED, "    cases: [{name: c}, {name: new, scenario: s.yaml}]", "    cases: [{name: c}]"),
    ("third", AUTHORED, "  third:", None),
    ("greet", "skills: {}\n", "skills: {greet: {cases: [{name: new, scenario: s.yaml}]}}", "skills: {}"),
    ("greet", "", "      - {name: new, scenario: s.yaml}", None),
    ("greet", "skills:\n  greet:\n    cases:\n      - name: a", "      - {name: new, scenario: s.yaml}", None),
])
def test_a_case_is_appended_and_every_other_line_kept(key, text, expected_line, changed):
    new = appended(text, key, {"name": "new", "scenario": "s.yaml"}, where="f")
    assert expected_line in new.splitlines()
    assert lines_kept(text, new, changed)
    if key == "third":
        assert new.splitlines()[11:14] == ["  third:", "    cases:", "      - {name: new, scenario: s.yaml}"]


def test_the_result_loads_as_a_suite_with_the_case_last(tmp_path):
    (tmp_path / "s.yaml").write_text("rules: []\n")
    suite = tmp_path / "live-trials.yaml"
    suite.write_text(AUTHORED)
    suite.chmod(0o644)
    append_case(suite, "greet", {"name": "new", "scenario": "s.yaml", "answers": [{"answer": "Go on",
                                                                                  "kind": "rescue"}]})
    cases = load_suite(suite).cases["greet"]
    assert [c.name for c in cases] == ["happy", "flow", "new"]
    assert cases[-1].scenario == (tmp_path / "s.yaml").resolve() and cases[-1].answers == (("Go on", "rescue"),)
    assert lines_kept(AUTHORED, suite.read_text()) and suite.stat().st_mode & 0o777 == 0o644


def test_a_case_name_the_skill_has_is_refused_and_nothing_is_written(tmp_path):
    suite = tmp_path / "live-trials.yaml"
    suite.write_text(AUTHORED)
    with pytest.raises(RefusedInput, match="already has a case named 'happy'"):
        append_case(suite, "greet", {"name": "happy"})
    assert suite.read_text() == AUTHORED and sorted(p.name for p in tmp_path.iterdir()) == ["live-trials.yaml"]


def test_a_result_that_would_not_load_is_refused_naming_the_suite(tmp_path):
    suite = tmp_path / "live-trials.yaml"
    suite.write_text(AUTHORED)
    with pytest.raises(RefusedInput, match=r"live-trials.yaml:9 skills.greet.cases\[2\].scenario: no scenario file"):
        append_case(suite, "greet", {"name": "new", "scenario": "missing.yaml"})
    assert suite.read_text() == AUTHORED


def test_rehearsal_new_writes_the_scenario_and_appends_its_case(tmp_path, capsys):
    plugins = tmp_path / "plugins"
    shutil.copytree(EXAMPLES / "plugins", plugins)
    suite = plugins / "hello" / "live-trials.yaml"
    before = suite.read_text()
    argv = ["rehearsal", "new", "hello:greet-style", "--plugins-root", str(plugins), "--suite", str(suite),
            "--case", "go-on", "--gate"]
    assert main(argv) == 0
    scenario = plugins / "hello" / "scenarios" / "greet-style-go-on.yaml"
    assert scenario.is_file() and "WRITTEN: " in capsys.readouterr().err
    (case,) = [c for c in load_suite(suite).cases["greet-style"] if c.name == "go-on"]
    assert case.scenario == scenario.resolve() and case.answers == (("Go on", "contractual"),)
    assert lines_kept(before, suite.read_text())
    after = suite.read_text()
    assert main(argv) == 2                              # the name exists now: refused, nothing changed
    assert "already has a case named 'go-on'" in capsys.readouterr().err
    assert suite.read_text() == after
    assert main([*argv[:-3], "--case", "other", "-o", str(scenario)]) == 2     # the scenario file exists
    assert suite.read_text() == after
