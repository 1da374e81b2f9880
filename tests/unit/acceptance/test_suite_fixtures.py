"""A suite case's stand-in MCP servers (references/suite-format.md ``mcp_fixtures``): a name and the command that starts
the stand-in, its ``./`` words taken from the suite file's folder, passed to the case's trial through the plan."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.acceptance.case_plan import batch_entry
from live_trial.acceptance.suite import load_suite
from live_trial.errors import RefusedInput
from live_trial.jsonfile import schema_errors

SUITE = """skills:
  needs:
    cases:
      - name: offline
        mcp_fixtures:
          db: python3 ./fixtures/fake_db.py --port 0
          github: sh -c 'exec cat'
"""


def test_a_case_names_its_stand_ins_and_their_relative_words_are_the_suites(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "fake_db.py").write_text("print('db')\n")
    (tmp_path / "live-trials.yaml").write_text(SUITE)
    [case] = load_suite(tmp_path / "live-trials.yaml").cases["needs"]
    assert case.mcp_fixtures == (("db", f"python3 {tmp_path / 'fixtures' / 'fake_db.py'} --port 0"),
                                 ("github", "sh -c 'exec cat'"))
    entry = batch_entry("kit:needs", tmp_path, False, case)
    assert entry["mcp_fixtures"] == dict(case.mcp_fixtures)
    plan = {"schema_version": 1}
    errors = [e for e in schema_errors({**plan, "live_batches": [[entry]]}, "plan.schema.json")
              if e.startswith("live_batches")]
    assert errors == []


@pytest.mark.parametrize("body, words", [
    ("'bad name': x", "bad name"), ("db: ''", "db"),
    ("db: python3 ./fake_db.py", "db: the stand-in's command names a script that does not exist: "),
    ("db: ./fake_db.py", "db: the stand-in's command names a program file that does not exist: "),
    ("db: no-such-program-here", "a program not found on PATH: no-such-program-here"),
    ("db: python3 ./", "a script that is not a file: ")])
def test_a_bad_stand_in_is_refused_with_its_line(tmp_path: Path, body: str, words: str) -> None:
    (tmp_path / "live-trials.yaml").write_text("skills:\n  needs:\n    cases:\n      - name: c\n        mcp_fixtures:\n"
                                               f"          {body}\n")
    with pytest.raises(RefusedInput) as err:
        load_suite(tmp_path / "live-trials.yaml")
    assert "live-trials.yaml:6" in err.value.message and words in err.value.message, err.value.message


def test_a_cases_stand_ins_are_part_of_its_task_contract_by_their_scripts_content(tmp_path: Path) -> None:
    """A stand-in changes what the skill meets, so its case's scenario_id holds it: another command or an edit of its
    script is another contract (the case runs again); the same script in another checkout is the same one; and the
    id a trial records from the command it started with (trial-state.json ``contract``) is the one plan computes."""
    from live_trial.acceptance.case_plan import case_scenario_id
    from live_trial.acceptance.verdict_doc import contract_id, fixture_words

    def scen(root: Path, body: str = "print('db')\n") -> str:
        (root / "fixtures").mkdir(parents=True, exist_ok=True)
        (root / "fixtures" / "fake_db.py").write_text(body)
        (root / "live-trials.yaml").write_text(SUITE)
        [case] = load_suite(root / "live-trials.yaml").cases["needs"]
        return case_scenario_id("kit:needs", case, None, "template")

    first = scen(tmp_path / "a")
    assert scen(tmp_path / "b") == first                                # another folder, the same script
    assert scen(tmp_path / "a", "print('another db')\n") != first        # the script edited
    none = case_scenario_id("kit:needs", load_suite_text(tmp_path / "c", "skills: {needs: {cases: [{name: x}]}}\n"),
                            None, "template")
    assert none != first and none == contract_id("template", "kit:needs", "", None)   # no stand-ins: as before
    words = ("python3", str(tmp_path / "b" / "fixtures" / "fake_db.py"), "--port", "0")
    recorded = contract_id("template", "kit:needs", "", None,
                           fixtures=[("db", fixture_words(words)), ("github", ("sh", "-c", "exec cat"))])
    assert recorded == first


def load_suite_text(root: Path, text: str):
    root.mkdir(parents=True)
    (root / "live-trials.yaml").write_text(text)
    return load_suite(root / "live-trials.yaml").cases["needs"][0]
