"""The verdict over a case run's attempts (references/suite-format.md "Repeats"): PASS only with k of k samples, FLAKY
when some passed and some did not, a BLOCKED attempt never a sample, fewer than k samples BLOCKED."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.acceptance.case_verdict import (
    Attempt,
    CaseRun,
    case_doc,
    decide,
    read_case_verdict,
    retry_helps,
    summed_usage,
    write_case_verdict,
)
from live_trial.errors import SchemaInvalid
from live_trial.jsonfile import schema_errors


def attempts(*verdicts: str) -> list[Attempt]:
    return [Attempt(n, v, "model_unavailable" if v == "BLOCKED" else None, f"attempt {n}")
            for n, v in enumerate(verdicts, start=1)]


@pytest.mark.parametrize("verdicts, repeats, expected, passed, samples", [
    (("PASS", "PASS", "PASS"), 3, "PASS", 3, 3),
    (("PASS", "DEGRADED", "PASS"), 3, "FLAKY", 2, 3),
    (("FAIL", "PASS", "PASS"), 3, "FLAKY", 2, 3),
    (("DEGRADED", "DEGRADED", "DEGRADED"), 3, "DEGRADED", 0, 3),
    (("DEGRADED", "FAIL", "DEGRADED"), 3, "FAIL", 0, 3),
    (("BLOCKED", "PASS", "PASS", "PASS"), 3, "PASS", 3, 3),         # a BLOCKED attempt is no sample
    (("PASS", "PASS", "BLOCKED"), 3, "BLOCKED", 2, 2),             # never a PASS on fewer than k samples
    (("BLOCKED", "BLOCKED", "BLOCKED"), 3, "BLOCKED", 0, 0),
])
def test_the_case_verdict_of_its_attempts(verdicts, repeats, expected, passed, samples):
    decision = decide(attempts(*verdicts), repeats)
    assert (decision.verdict, decision.passed, decision.samples) == (expected, passed, samples)


def test_the_pass_rate_is_over_the_samples_only():
    assert decide(attempts("BLOCKED", "PASS", "DEGRADED", "PASS"), 3).rate == 0.6667
    assert decide(attempts("BLOCKED"), 3).rate is None


@pytest.mark.parametrize("code, helps", [
    ("model_unavailable", True), ("tmux_gone", True), ("evaluator_failed", True), ("session_removed", True),
    ("delivery_failed", True),                       # no row: an error a step raised, tried again
    ("usage_limit", False), ("model_auth", False), ("tmux_missing", False), ("hard_cap", False),
    ("budget", False), ("harness_interrupted", False), ("harness_terminated", False), ("root_needs_sandbox", False),
])
def test_a_blocked_attempt_is_retried_only_when_its_cause_may_pass(code, helps):
    assert retry_helps(code) is helps


def run(tmp_path: Path, k: int = 3) -> CaseRun:
    return CaseRun("20261201T000000-abcd", tmp_path / "eval" / "hello" / "greet" / "live-trial-cases" / "x", "ada",
                   4, k)


def test_the_document_fits_its_schema_and_links_each_attempt_relative_to_the_eval_root(tmp_path):
    eval_root = tmp_path / "eval"
    wd = eval_root / "hello" / "greet" / "live-trial" / "20261201T000001-0001"
    found = [Attempt(1, "BLOCKED", "model_unavailable", "the service was down", workdir=wd, run_id=wd.name),
             Attempt(2, "PASS", None, "ok", workdir=wd.with_name("b"), run_id="b", report=wd.with_name("b") /
                     "report.html", skill_dir_tree_sha="sha256:" + "a" * 64, scenario_id="sha256:" + "b" * 64,
                     origin="rehearsal", usage={"cost_usd": 0, "estimate_usd": 0.25, "billed": False}),
             Attempt(3, "DEGRADED", None, "goal missed", workdir=wd.with_name("c"), run_id="c",
                     reason="goal not met: no greeting", skill_dir_tree_sha="sha256:" + "a" * 64, origin="rehearsal",
                     usage={"cost_usd": 0, "estimate_usd": 0.5, "billed": False}),
             Attempt(4, "PASS", None, "ok", workdir=wd.with_name("d"), run_id="d",
                     skill_dir_tree_sha="sha256:" + "a" * 64, origin="rehearsal")]
    doc = case_doc(run(tmp_path), target="hello:greet", plugin="hello", skill="greet", attempts=found,
                   retries_used=1, retries_max=2, stopped=None, summary="passed 2 of 3", eval_root=eval_root,
                   proof=False, started_at="2026-12-01T00:00:00.000Z", written_at="2026-12-01T00:01:00.000Z")
    assert schema_errors(doc, "case-verdict.schema.json") == []
    assert (doc["verdict"], doc["pass_rate"]) == ("FLAKY", {"passed": 2, "samples": 3, "rate": 0.6667})
    assert [a["workdir"] for a in doc["attempts"]] == [
        "hello/greet/live-trial/20261201T000001-0001", "hello/greet/live-trial/b", "hello/greet/live-trial/c",
        "hello/greet/live-trial/d"]
    assert doc["attempts"][1]["report"] == "hello/greet/live-trial/b/report.html"
    assert [a["sample"] for a in doc["attempts"]] == [False, True, True, True]
    assert doc["reasons"] == ["attempt 1: BLOCKED (model_unavailable), not a sample: the service was down",
                              "attempt 3: DEGRADED: goal not met: no greeting"]
    assert (doc["skill_dir_tree_sha"], doc["scenario_origin"]) == ("sha256:" + "a" * 64, "rehearsal")
    assert doc["usage"] == {"cost_usd": 0.0, "estimate_usd": 0.75, "billed": False}
    path = write_case_verdict(run(tmp_path).folder, doc)
    assert read_case_verdict(path) == doc


def test_attempts_that_tested_other_closures_leave_the_case_without_one(tmp_path):
    found = [Attempt(1, "PASS", None, "ok", skill_dir_tree_sha="sha256:" + "a" * 64),
             Attempt(2, "PASS", None, "ok", skill_dir_tree_sha="sha256:" + "c" * 64)]
    doc = case_doc(run(tmp_path, 2), target="hello:greet", plugin="hello", skill="greet", attempts=found,
                   retries_used=0, retries_max=2, stopped=None, summary="s", eval_root=tmp_path, proof=False,
                   started_at="t", written_at="t")
    assert doc["skill_dir_tree_sha"] is None and doc["verdict"] == "PASS"


def test_a_document_that_does_not_fit_is_never_written(tmp_path):
    with pytest.raises(SchemaInvalid):
        write_case_verdict(tmp_path / "case", {"verdict": "MOSTLY"})
    assert not (tmp_path / "case" / "case-verdict.json").exists()


def test_costs_add_up_and_none_recorded_is_none():
    assert summed_usage([None, None]) is None
    assert summed_usage([{"cost_usd": 1.5, "estimate_usd": 1.5, "billed": True, "unpriced_models": ["m"]},
                         {"cost_usd": 0.5, "estimate_usd": 0.5, "billed": True}]) == {
        "cost_usd": 2.0, "estimate_usd": 2.0, "billed": True, "unpriced_models": ["m"]}
