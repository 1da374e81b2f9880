"""The trial's budget on each poll tick (README "Budgets"): the API list price estimate of the responses read so far,
each once, subagents included; reaching it raises BLOCKED ``budget`` with what was spent."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.errors import Blocked
from live_trial.stop_reasons import StopReason
from live_trial.trial.budget import Budget


def _response(msg_id: str, model: str, i: int, o: int) -> str:
    usage = {"input_tokens": i, "output_tokens": o, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    return json.dumps({"type": "assistant", "uuid": msg_id + "-u", "message": {"id": msg_id, "model": model,
                                                                              "usage": usage}}) + "\n"


def test_the_budget_is_reached_by_the_response_that_crosses_it_subagents_included(tmp_path: Path) -> None:
    transcript = tmp_path / "sid.jsonl"
    transcript.write_text(_response("m1", "claude-sonnet-4-5", 1000, 0) * 2)      # one response, two records
    budget = Budget(0.005, rehearsal=True)
    budget.check(transcript)                                                       # $0.003: under
    assert budget.spent.usd == pytest.approx(0.003)
    sub = tmp_path / "sid" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-a.jsonl").write_text(_response("s1", "claude-sonnet-4-5", 1000, 0))
    with pytest.raises(Blocked) as caught:
        budget.check(transcript)                                                   # $0.006 with the subagent's
    assert caught.value.code == StopReason.BUDGET
    assert "budget of $0.005" in caught.value.message and "$0.0060" in caught.value.message
    assert "a rehearsal costs nothing" in caught.value.message


def test_a_model_without_a_price_is_named_and_never_counted_as_free(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_response("m1", "claude-unknown-9", 10**9, 0))
    budget = Budget(0.01)
    budget.check(transcript)
    assert budget.spent.unpriced == ("claude-unknown-9",)
    assert "no price for claude-unknown-9" in budget.stop_note()


def test_a_session_that_finished_before_a_tick_could_stop_it_keeps_its_completion_with_a_warning(tmp_path: Path) -> None:
    """All responses came between two poll ticks and the marker is written: nothing is left to stop, so the budget
    is a warning of the verdict, never "not tried to the end"."""
    transcript = tmp_path / "sid.jsonl"
    transcript.write_text(_response("m1", "claude-sonnet-4-5", 1000, 1000))         # $0.018
    budget = Budget(0.01)
    warning = budget.check(transcript, finished=True)
    assert warning is not None and "$0.0180" in warning and "--max-cost-usd 0.01" in warning
    with pytest.raises(Blocked):
        Budget(0.01).check(transcript)                                              # still running: stopped
    assert Budget(1.0).check(transcript, finished=True) is None
