"""The result of an activation case (README "Does it start by itself?"): each prompt's share of sessions that started
the skill, precision, recall and the confusion counts over every sample, the prompts that went wrong first, and the
verdict: PASS only when every should-trigger prompt triggered and no should-not did in every session, FLAKY when a
prompt's sessions disagree, FAIL when one went wrong every time (or the skill was not loaded), BLOCKED short of
samples."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.acceptance.activation import (
    BLOCKED,
    NOT_TRIGGERED,
    TRIGGERED,
    ActivationSession,
    PromptSample,
    activation_doc,
    decide,
    prompt_set_digest,
    read_activation,
    write_activation,
)
from live_trial.jsonfile import schema_errors

PROMPTS = [("make a welcome file for Ada", True, 2), ("what is 2 + 2?", False, 2)]


def sample(prompt: int, repeat: int, outcome: str, **kw) -> PromptSample:
    ended = kw.pop("ended", "turn_end" if outcome != BLOCKED else "blocked")
    return PromptSample(prompt, repeat, outcome, ended, **kw)


def test_every_prompt_as_it_should_in_every_session_is_a_pass_with_precision_and_recall_1():
    got = decide(PROMPTS, [sample(1, 1, TRIGGERED, step=0), sample(1, 2, TRIGGERED, step=0),
                           sample(2, 1, NOT_TRIGGERED), sample(2, 2, NOT_TRIGGERED)])
    assert got.verdict == "PASS" and got.reasons == ()
    assert (got.confusion.true_positive, got.confusion.true_negative) == (2, 2)
    assert (got.confusion.precision, got.confusion.recall) == (1.0, 1.0)
    assert [r.share for r in got.prompts] == [1.0, 0.0]


def test_a_should_not_prompt_that_started_it_every_time_fails_and_is_named_first():
    got = decide(PROMPTS, [sample(1, 1, TRIGGERED), sample(1, 2, NOT_TRIGGERED),
                           sample(2, 1, TRIGGERED, step=1), sample(2, 2, TRIGGERED, step=0)])
    assert got.verdict == "FAIL"
    assert got.reasons[0] == ('prompt 2 "what is 2 + 2?" should not start the skill: it did in 2 of 2 sessions '
                              '(invoked at step 0, 1)')
    assert got.reasons[1].startswith('prompt 1 "make a welcome file for Ada" should start the skill: it did in 1 of 2')
    assert (got.confusion.true_positive, got.confusion.false_negative, got.confusion.false_positive,
            got.confusion.true_negative) == (1, 1, 2, 0)
    assert (got.confusion.precision, got.confusion.recall) == (round(1 / 3, 4), 0.5)


def test_sessions_that_disagree_are_flaky_never_a_pass():
    got = decide(PROMPTS, [sample(1, 1, TRIGGERED), sample(1, 2, NOT_TRIGGERED),
                           sample(2, 1, NOT_TRIGGERED), sample(2, 2, NOT_TRIGGERED)])
    assert got.verdict == "FLAKY" and [r.status for r in got.prompts] == ["mixed", "right"]


def test_a_sibling_chosen_instead_is_named():
    got = decide(PROMPTS[:1], [sample(1, 1, NOT_TRIGGERED, others=("hello:greet-style",)),
                               sample(1, 2, NOT_TRIGGERED, others=("hello:greet-style",))])
    assert got.verdict == "FAIL" and "hello:greet-style invoked instead" in got.reasons[0]


def test_a_blocked_session_is_no_sample_and_fewer_samples_than_asked_is_blocked():
    got = decide(PROMPTS, [sample(1, 1, TRIGGERED), sample(1, 2, BLOCKED, stop_reason="model_unavailable",
                                                           note="overloaded"),
                           sample(2, 1, NOT_TRIGGERED), sample(2, 2, NOT_TRIGGERED)], stopped="the run was stopped")
    assert got.verdict == "BLOCKED" and got.prompts[0].samples == 1
    assert ("1 of its 2 sessions were stopped by a cause that is not the skill's (the environment, the harness or the "
            "input it was given): overloaded") in got.reasons[0]
    assert got.reasons[-1] == "the run was stopped"
    assert got.confusion.true_positive == 1              # a blocked session counts nowhere


def test_a_skill_the_cli_did_not_load_fails_whatever_the_should_not_prompts_say():
    got = decide(PROMPTS[1:], [sample(1, 1, NOT_TRIGGERED, ended="not_loaded", note="the listing lacks it"),
                               sample(1, 2, NOT_TRIGGERED, ended="not_loaded")])
    assert got.verdict == "FAIL" and got.not_loaded
    assert got.reasons[0] == "the CLI did not load the skill, so no prompt could start it: the listing lacks it"


def test_no_should_trigger_prompt_has_no_recall():
    got = decide(PROMPTS[1:], [sample(1, 1, NOT_TRIGGERED), sample(1, 2, NOT_TRIGGERED)])
    assert (got.confusion.precision, got.confusion.recall) == (None, None)


def test_the_document_lists_the_prompts_that_went_wrong_first_and_fits_its_schema(tmp_path: Path):
    samples = [sample(1, 1, TRIGGERED, workdir=tmp_path / "a" / "p1", seconds=1.5, via="skill_call", step=0),
               sample(2, 1, TRIGGERED, workdir=tmp_path / "a" / "p2", step=0, after_tools=("Read",))]
    prompts = [("make a welcome file for Ada", True, 1), ("what is 2 + 2?", False, 1)]
    got = decide(prompts, samples)
    doc = activation_doc(got, samples, run_id="20261206T000000-abcd", target="hello:greet", plugin="hello",
                         skill="greet", case="natural", eval_root=tmp_path, summary="s",
                         listing={"digest": "sha256:" + "0" * 64, "names": ["hello:greet"],
                                  "entries": {"hello:greet": "Writes a greeting file"}},
                         prompt_set=prompt_set_digest("hello:greet", prompts, None), skills_digest=None,
                         stop_after_trigger=True, retries=(0, 2), stopped=None, origin="rehearsal",
                         scenario="/s.yaml", claude_version="2.1.332", started_at="2026-12-06T00:00:00Z",
                         written_at="2026-12-06T00:00:05Z")
    assert schema_errors(doc, "activation.schema.json") == []
    assert [p["n"] for p in doc["prompts"]] == [2, 1]
    assert doc["prompts"][0]["runs"][0]["workdir"] == "a/p2"
    path = write_activation(tmp_path / "run", doc)
    assert read_activation(path) == doc


def test_the_prompt_set_changes_with_a_prompt_its_expectation_its_sessions_or_the_script():
    base = prompt_set_digest("hello:greet", PROMPTS, None)
    assert base == prompt_set_digest("hello:greet", list(PROMPTS), None)
    assert len({base, prompt_set_digest("hello:greet", [("other", True, 2), PROMPTS[1]], None),
                prompt_set_digest("hello:greet", [(PROMPTS[0][0], False, 2), PROMPTS[1]], None),
                prompt_set_digest("hello:greet", [(PROMPTS[0][0], True, 3), PROMPTS[1]], None),
                prompt_set_digest("hello:greet", PROMPTS, "sha256:" + "1" * 64)}) == 5


@pytest.mark.parametrize("doc", [None, {}, {"id": "x"}, {"id": "x", "folder": "/f", "case": "c", "prompt": "two",
                                                         "repeat": 1, "should_trigger": True}])
def test_a_session_record_that_cannot_be_read_is_none(doc):
    assert ActivationSession.from_doc(doc) is None


def test_a_session_record_round_trips():
    one = ActivationSession("r", Path("/e/f"), "natural", 3, 2, False, True)
    assert ActivationSession.from_doc(one.to_doc()) == one
