"""A suite case's own criteria (references/suite-format.md, ``criteria``): read from the suite, part of the case's task
contract, refused when they reuse an id of the skill's frontmatter, and judged like the frontmatter's: they reach the
evaluator's request and the verdict's criteria lines through the target the trial sees, also when a workdir is judged
again from its trial-state.json."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.acceptance.case_criteria import clashes, criteria_pairs, with_criteria
from live_trial.acceptance.case_plan import cannot_run, case_scenario_id
from live_trial.acceptance.criteria import criteria_table
from live_trial.acceptance.suite import DEFAULT, SUITE_FILE, Case, load_suite
from live_trial.acceptance.verdict_facts import gather_facts
from live_trial.closure.target import resolve_target
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json, write_json
from live_trial.judge.evaluator import build_context
from tests.unit.fakes import write_state

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "plugins"
FRONT = {"feedback_contract": {"criteria": [{"id": "OUT1", "text": "the file is there", "verify_by": "evaluator"},
                                            {"id": "IN1", "text": "unit tested", "verify_by": "test"}]}}


def test_the_suite_reads_them_and_refuses_a_twice_used_id_or_a_bad_key(tmp_path):
    suite = tmp_path / SUITE_FILE
    suite.write_text("skills:\n  greet:\n    cases:\n      - name: a\n        criteria:\n"
                     "          - {id: C1, text: the greeting is polite}\n")
    assert load_suite(suite).cases["greet"][0].criteria == (("C1", "the greeting is polite"),)
    for body, words in (("          - {id: C1, text: x}\n          - {id: C1, text: y}\n", "a criterion id is used twice"),
                        ("          - {id: C1, txt: x}\n", "unknown key 'txt'"),
                        ("          - {id: 'no spaces', text: x}\n", "does not match")):
        suite.write_text("skills:\n  greet:\n    cases:\n      - name: a\n        criteria:\n" + body)
        with pytest.raises(RefusedInput) as caught:
            load_suite(suite)
        assert words in caught.value.message


def test_they_are_part_of_the_task_contract_and_no_criteria_keeps_the_id():
    plain = case_scenario_id("hello:greet", DEFAULT, None, "t")
    assert case_scenario_id("hello:greet", Case(name="x"), None, "t") == plain
    one = case_scenario_id("hello:greet", Case(name="x", criteria=(("C1", "polite"),)), None, "t")
    other = case_scenario_id("hello:greet", Case(name="x", criteria=(("C1", "rude"),)), None, "t")
    assert len({plain, one, other}) == 3


def test_an_id_the_skill_already_has_is_refused():
    assert clashes(FRONT, [("OUT1", "x"), ("C2", "y")]) == ["OUT1"]
    action, why = cannot_run(Case(name="x", criteria=(("OUT1", "x"),), answers=()), FRONT) or ("", "")
    assert action == "refused" and "criteria OUT1 are the skill's own" in why


def test_they_are_judged_as_the_frontmatter_criteria_are():
    target = resolve_target("hello:greet", EXAMPLES)
    mine = with_criteria(target, [("C1", "the greeting is polite")])
    assert target.frontmatter.get("feedback_contract") is None          # SKILL.md's frontmatter is untouched
    rows = criteria_table(mine.frontmatter, [{"id": "C1", "result": "pass", "evidence": "said please"}])
    assert rows == [{"id": "C1", "text": "the greeting is polite", "verify_by": "evaluator", "result": "pass",
                     "evidence": "said please"}]


def test_a_workdir_judged_again_reads_them_from_its_trial_state(tmp_path):
    wd = tmp_path / "eval" / "hello" / "greet" / "live-trial" / "20261201T000000-0001"
    wd.mkdir(parents=True)
    write_state(wd, "hello", "greet")
    state = read_json(wd / "trial-state.json", "trial-state.schema.json")
    write_json(wd / "trial-state.json", {**state, "criteria": [{"id": "C1", "text": "polite"}]},
               "trial-state.schema.json")
    target = resolve_target("hello:greet", EXAMPLES)
    facts = gather_facts(wd, target, EXAMPLES)
    assert criteria_pairs(facts.target.frontmatter["feedback_contract"]["criteria"]) == (("C1", "polite"),)
    ctx = build_context(wd, with_criteria(target, [("C1", "polite")]))
    assert [c["id"] for c in ctx.criteria] == ["C1"]
