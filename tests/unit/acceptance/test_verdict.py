"""verdict: every row of seed 001's judgement table, the proof and gate-kind rules, grounding, actual model."""
from __future__ import annotations

from dataclasses import replace

import pytest

from live_trial.acceptance.overall import VerdictInputs, derive_overall, judge, normalise_gate_kind
from live_trial.acceptance.tier import allowed_tools, contract_evidence
from live_trial.acceptance.verdict import actual_models, environment
from live_trial.acceptance.verdict_doc import scenario_id
from live_trial.errors import RefusedInput
from live_trial.transcript.builder import TranscriptBuilder

OK = VerdictInputs(launch="PASS", completion="PASS", goal_result="PASS", poll_exit="DONE",
                     requested_model="claude-opus-4-8", actual_model=("claude-opus-4-8",))


def overall(**changes) -> str:
    return derive_overall(replace(OK, **changes))


# ------------------------------------------------------------------ seed 001 table, row by row
@pytest.mark.parametrize("changes, expected", [
    ({}, "PASS"),                                                            # ✅ ✅ PASS → PASS
    ({"goal_result": "FAIL"}, "DEGRADED"),                                   # ✅ ✅ FAIL → DEGRADED (goal-proxy gap)
    ({"completion": "FAIL", "poll_exit": "STALL"}, "FAIL"),                  # ✅ ❌ — → FAIL
    ({"completion": "FAIL", "goal_result": "PASS", "poll_exit": "GATE"}, "FAIL"),  # goal does not matter
    ({"completion": "FAIL", "goal_result": None, "poll_exit": "STALL"}, "FAIL"),
    ({"launch": "FAIL", "completion": "FAIL", "goal_result": None, "poll_exit": None}, "FAIL"),  # ❌ — — → FAIL
    ({"launch": "FAIL", "completion": "PASS", "goal_result": "PASS"}, "FAIL"),  # launch ✗ wins whatever else
])
def test_judgement_table_rows(changes, expected) -> None:
    assert overall(**changes) == expected


def test_nudges_degrade() -> None:
    assert overall(nudge_count=1) == "DEGRADED"
    assert "1 nudge(s)" in judge(replace(OK, nudge_count=1)).reasons[0]


def test_rescue_gate_responses_degrade() -> None:
    assert overall(gate_response_count=1) == "DEGRADED"
    assert overall(gate_response_count=2, gate_kind="rescue") == "DEGRADED"


def test_contractual_gate_responses_do_not_degrade() -> None:
    assert overall(gate_response_count=3, gate_kind="contractual") == "PASS"


def test_each_answer_counts_with_its_own_kind() -> None:
    """Seed 001 gate kinds, per answer: a rescue answer among contractual ones degrades; a proof allows none."""
    both = ("contractual", "rescue")
    assert overall(gate_response_count=2, gate_kind="contractual", gate_kinds=both) == "DEGRADED"
    assert judge(replace(OK, gate_response_count=2, gate_kinds=both)).reasons == (
        "1 rescue gate response(s): a person had to step in",)
    assert overall(gate_response_count=2, gate_kinds=("contractual", "contractual")) == "PASS"
    assert overall(gate_response_count=2, gate_kinds=("contractual",), gate_kind="rescue") == "DEGRADED"  # 1 of 2
    assert overall(gate_response_count=1, gate_kinds=("contractual",), proof=True) == "FAIL"


def test_gate_kind_defaults_to_rescue_and_normalises_with_zero_responses() -> None:
    assert VerdictInputs("PASS", "PASS", "PASS").gate_kind == "rescue"
    assert normalise_gate_kind("contractual", 0) == "rescue"
    assert normalise_gate_kind("contractual", 1) == "contractual"
    assert normalise_gate_kind(None, 4) == "rescue"
    assert overall(gate_kind="contractual", gate_response_count=0) == "PASS"


@pytest.mark.parametrize("changes", [{"blocked": True}, {"poll_exit": "HARD_CAP", "completion": "FAIL"},
                                     {"poll_exit": "BLOCKED", "completion": "FAIL"}])
def test_tmux_missing_or_hard_cap_is_blocked(changes) -> None:
    assert overall(**changes) == "BLOCKED"


def test_blocked_beats_fail() -> None:
    """Precedence: BLOCKED (not judged) over FAIL — seed 001 records HARD_CAP / missing tmux as --blocked."""
    assert overall(blocked=True, launch="FAIL", completion="FAIL", goal_result=None) == "BLOCKED"
    assert overall(poll_exit="HARD_CAP", completion="FAIL", nudge_count=2) == "BLOCKED"
    assert overall(blocked=True, proof=True, actual_model=()) == "BLOCKED"


def test_degraded_reasons_accumulate() -> None:
    j = judge(replace(OK, goal_result="FAIL", nudge_count=1, gate_response_count=1))
    assert j.verdict == "DEGRADED" and len(j.reasons) == 3


def test_completion_pass_must_agree_with_poll_exit() -> None:
    for exit_ in ("STALL", "GATE", "TICK_BUDGET"):
        assert overall(poll_exit=exit_) == "FAIL"
    assert overall(poll_exit=None) == "PASS"  # API callers that did not poll (the CLI always passes it)


def test_goal_not_judged_is_never_pass() -> None:
    assert overall(goal_result=None) == "DEGRADED"


# ------------------------------------------------------------------ proof trials
def test_proof_clean_pass() -> None:
    assert overall(proof=True) == "PASS"


@pytest.mark.parametrize("changes", [
    {"gate_response_count": 1, "gate_kind": "contractual"},   # any gate response, even contractual
    {"gate_response_count": 1, "gate_kind": "rescue"},
    {"nudge_count": 1},                                        # DEGRADED → FAIL
    {"goal_result": "FAIL"},                                   # DEGRADED → FAIL
    {"actual_model": ("claude-sonnet-4-6",)},                  # other model
    {"actual_model": ()},                                      # empty
    {"actual_model": ("claude-opus-4-8", "claude-haiku-4-5")}, # several
    {"requested_model": None},                                 # nothing requested
])
def test_proof_failures(changes) -> None:
    assert overall(proof=True, **changes) == "FAIL"
    assert overall(proof=False, **changes) in ("PASS", "DEGRADED")


def test_proof_reasons_name_the_model() -> None:
    j = judge(replace(OK, proof=True, actual_model=("claude-sonnet-4-6",)))
    assert j.reasons == ("proof: actual model claude-sonnet-4-6 is not the requested claude-opus-4-8",)


def test_non_proof_ignores_model() -> None:
    assert overall(actual_model=(), requested_model=None) == "PASS"


# ------------------------------------------------------------------ actual model
def test_actual_models_main_chain_without_synthetic() -> None:
    b = TranscriptBuilder(model="claude-opus-4-8")
    b.prompt("go")
    b.text("working")
    b.synthetic("API error", api_error_status=500)
    b.text("DONE: ok")
    b.message([{"type": "text", "text": "sub"}], model="claude-haiku-4-5", sidechain=True)
    assert actual_models(b.records) == ["claude-opus-4-8"]


def test_actual_models_several() -> None:
    b = TranscriptBuilder(model="claude-opus-4-8")
    b.text("a")
    b.text("b", model="claude-sonnet-4-6")
    assert actual_models(b.records) == ["claude-opus-4-8", "claude-sonnet-4-6"]


# ------------------------------------------------------------------ grounding of contractual
@pytest.mark.parametrize("frontmatter, expected", [
    ({"external_mutation_guard": {"confirm": "push"}}, ['frontmatter external_mutation_guard: {"confirm": "push"}']),
    ({"allowed-tools": ["Read", "AskUserQuestion"]}, ["frontmatter allowed-tools: AskUserQuestion"]),
    ({"allowed-tools": "Read, ExitPlanMode, Bash(python3 *)"}, ["frontmatter allowed-tools: ExitPlanMode"]),
    ({"allowed-tools": "Read AskUserQuestion"}, ["frontmatter allowed-tools: AskUserQuestion"]),
    ({"allowed-tools": "Bash(git push *) AskUserQuestion ExitPlanMode"},
     ["frontmatter allowed-tools: AskUserQuestion", "frontmatter allowed-tools: ExitPlanMode"]),
])
def test_contract_evidence_found(frontmatter, expected) -> None:
    assert contract_evidence(frontmatter) == expected


@pytest.mark.parametrize("frontmatter", [
    {},
    {"allowed-tools": ["Read", "Bash(AskUserQuestion *)"]},    # only inside a Bash pattern
    {"allowed-tools": "Read, AskUserQuestionX"},
    {"external_mutation_guard": False},
    {"external_mutation_guard": ""},
    {"description": "Asks the user with AskUserQuestion before pushing (external_mutation_guard)"},  # prose
])
def test_contract_evidence_refused(frontmatter) -> None:
    with pytest.raises(RefusedInput) as exc:
        contract_evidence(frontmatter)
    assert exc.value.exit_code == 2 and exc.value.code == "ungrounded_contractual"


def test_allowed_tools_forms() -> None:
    assert allowed_tools({"allowed-tools": "Read, Bash(python3 *), Write"}) == ["Read", "Bash", "Write"]
    assert allowed_tools({"allowed-tools": ["Bash(git status *)", "Skill"]}) == ["Bash", "Skill"]
    assert allowed_tools({"allowed-tools": "Read Grep"}) == ["Read", "Grep"]
    assert allowed_tools({}) == []


# ------------------------------------------------------------------ reading back
def test_inputs_round_trip_through_a_document() -> None:
    doc = {"launch": "PASS", "completion": "PASS", "goal_result": "FAIL", "nudge_count": 0,
           "gate_response_count": 2, "gate_kind": "contractual", "poll_exit": "DONE", "proof": False,
           "blocked": False, "requested_model": None, "actual_model": ["m"]}
    inputs = VerdictInputs.from_doc(doc)
    assert inputs.actual_model == ("m",) and derive_overall(inputs) == "DEGRADED"


def test_scenario_id_changes_with_each_part(tmp_path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text("a: 1\n")
    base = scenario_id("p:s", "", scen, "template")
    assert base.startswith("sha256:") and len(base) == 71
    assert scenario_id("p:s", "", scen, "template") == base
    assert scenario_id("p:t", "", scen, "template") != base
    assert scenario_id("p:s", "x", scen, "template") != base
    assert scenario_id("p:s", "", scen, "template2") != base
    assert scenario_id("p:s", "", None, "template") != base
    scen.write_text("a: 2\n")
    assert scenario_id("p:s", "", scen, "template") != base


def test_environment_has_versions_only(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-value")
    env = environment("2.1.197", "3.3a")
    assert set(env) == {"claude_version", "tmux_version", "python", "platform"}
    assert "sk-secret" not in repr(env)
