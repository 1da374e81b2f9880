"""A suite case in the plan (references/suite-format.md): its scenario_id (the default case keeps the id plan gave
before suites), whether it can run, and the entry run --plan gets."""
from __future__ import annotations

from pathlib import Path

from live_trial.acceptance.case_plan import batch_entry, cannot_run, case_scenario_id
from live_trial.acceptance.suite import DEFAULT, Case
from live_trial.acceptance.verdict_doc import contract_id, scenario_id

TEMPLATE = "task {{TARGET_SKILL}} {{ARGS}}"
ASKS = {"allowed-tools": "Skill, AskUserQuestion"}


def test_the_default_case_keeps_the_id_plan_gave_before_suites() -> None:
    assert case_scenario_id("p:s", DEFAULT, None, TEMPLATE) == scenario_id("p:s", "", None, TEMPLATE)
    assert scenario_id("p:s", "", None, TEMPLATE) == contract_id(TEMPLATE, "p:s", "", None)


def test_args_answers_and_scenario_each_change_the_id(tmp_path: Path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text("name: s\n")
    base = case_scenario_id("p:s", Case(name="a"), None, TEMPLATE)
    ids = {case_scenario_id("p:s", c, None, TEMPLATE) for c in (
        Case(name="a", args="World"), Case(name="a", scenario=scen),
        Case(name="a", answers=(("Casual", "contractual"),)), Case(name="a", answers=(("Casual", "rescue"),)),
        Case(name="a", answers=(("Formal", "contractual"),)))}
    assert len(ids) == 5 and base not in ids
    # the case name is not part of the contract: renaming a case keeps its PASS
    assert case_scenario_id("p:s", Case(name="b", args="World"), None, TEMPLATE) in ids
    # no answers and answers: [] are the same contract
    assert case_scenario_id("p:s", Case(name="a", answers=()), None, TEMPLATE) == base


def test_the_case_scenario_wins_over_the_rehearsal_reuse_one(tmp_path: Path) -> None:
    own, other = tmp_path / "own.yaml", tmp_path / "other.yaml"
    own.write_text("name: own\n")
    other.write_text("name: other\n")
    case = Case(name="a", scenario=own)
    assert case_scenario_id("p:s", case, other, TEMPLATE) == scenario_id("p:s", "", own, TEMPLATE)


def test_a_skill_that_asks_needs_an_answer_unless_the_case_says_it_asks_nothing() -> None:
    action, reason = cannot_run(DEFAULT, ASKS) or ("", "")
    assert action == "needs_answer" and reason.startswith("needs an answer to its question")
    assert cannot_run(Case(name="a", answers=()), ASKS) is None
    assert cannot_run(Case(name="a", answers=(("Casual", "contractual"),)), ASKS) is None
    assert cannot_run(DEFAULT, {"allowed-tools": "Skill, Write"}) is None


def test_a_contractual_answer_the_frontmatter_does_not_ground_is_refused() -> None:
    held = cannot_run(Case(name="a", answers=(("Yes", "contractual"),)), {"allowed-tools": "Skill"})
    assert held is not None and held[0] == "refused" and "not grounded" in held[1]
    assert cannot_run(Case(name="a", answers=(("Yes", "rescue"),)), {"allowed-tools": "Skill"}) is None


def test_the_entry_carries_the_case_options_and_the_default_one_the_old_keys(tmp_path: Path) -> None:
    assert batch_entry("p:s", tmp_path, False, DEFAULT) == {"target": "p:s", "plugins_root": str(tmp_path),
                                                            "proof": False, "args": ""}
    case = Case(name="a", args="x", answers=(("Casual", "contractual"),), expect_gate=True, stall_limit_s=4,
                hard_cap_s=90, max_cost_usd=0.25, model="m", cwd=tmp_path)
    assert batch_entry("p:s", tmp_path, False, case) == {
        "target": "p:s", "plugins_root": str(tmp_path), "proof": False, "args": "x", "case": "a",
        "answers": [{"answer": "Casual", "kind": "contractual"}], "expect_gate": True, "stall_limit_s": 4,
        "hard_cap_s": 90, "model": "m", "max_cost_usd": 0.25, "cwd": str(tmp_path)}
