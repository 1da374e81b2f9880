"""``replay: TAPE`` for a suite case (references/suite-format.md): the case is a rehearsal answered from the tape
(run --replay), a tape that is not there or a case with both a scenario and a tape is refused with its line, and the
tape is part of the case's scenario_id and of the options run --plan gives its trial."""
from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from live_trial.acceptance.case_plan import batch_entry, case_scenario_id
from live_trial.acceptance.suite import DEFAULT, SUITE_FILE, load_suite
from live_trial.errors import RefusedInput
from live_trial.resources import load_schema


def suite(tmp_path: Path, case: str) -> Path:
    path = tmp_path / SUITE_FILE
    path.write_text(f"skills:\n  greet:\n    cases:\n      - {case}\n")
    return path


def test_a_case_with_a_tape_is_replayed_from_it(tmp_path: Path) -> None:
    (tmp_path / "tapes").mkdir()
    (tmp_path / "tapes" / "greet.jsonl").write_text("{}\n")
    (case,) = load_suite(suite(tmp_path, "{name: replayed, replay: tapes/greet.jsonl}")).cases_for("hello", "greet") \
        or ()
    assert case.replay == tmp_path / "tapes" / "greet.jsonl" and case.scenario is None
    entry = batch_entry("hello:greet", tmp_path, False, case)
    assert entry["replay"] == str(tmp_path / "tapes" / "greet.jsonl") and "rehearsal" not in entry
    plan = load_schema("plan.schema.json")
    Draft202012Validator({**plan["properties"]["live_batches"]["items"]["items"], "$defs": plan["$defs"]}) \
        .validate(entry)
    assert case_scenario_id("hello:greet", case, None, "template") != case_scenario_id("hello:greet", DEFAULT, None,
                                                                                         "template")


@pytest.mark.parametrize("case,words", [
    ("{name: a, replay: nosuch.jsonl}", "no tape file"),
    ("{name: a, replay: t.jsonl, scenario: t.jsonl}", "not both"),
])
def test_a_missing_tape_or_a_tape_with_a_scenario_is_refused_at_its_line(tmp_path: Path, case: str,
                                                                         words: str) -> None:
    (tmp_path / "t.jsonl").write_text("{}\n")
    with pytest.raises(RefusedInput) as caught:
        load_suite(suite(tmp_path, case))
    problem = caught.value.details["problems"][0]
    assert problem.startswith(f"{tmp_path / SUITE_FILE}:4 skills.greet.cases[0].replay: ") and words in problem
