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


def test_a_policy_file_budget_stops_the_trial_as_the_flag_does(tmp_path: Path, monkeypatch) -> None:
    """``budget.max_cost_usd`` in the policy file, no ``--max-cost-usd``: the trial's policy carries it, and the poll
    tick that reads the response crossing it ends the trial BLOCKED ``budget`` (README "Budgets")."""
    from types import SimpleNamespace

    import live_trial.policy as policy_mod
    from live_trial.trial import runner
    from live_trial.trial.facts import TrialRequest
    from live_trial.workdir_files import Workdir
    from tests.unit.fakes import trial_state

    doc = json.loads(policy_mod.read_reference("convergence-policy.json"))
    doc["budget"] = {"max_cost_usd": 0.01, "plan_max_cost_usd": None}
    monkeypatch.setattr(policy_mod, "read_reference", lambda name: json.dumps(doc))
    root = Path(__file__).resolve().parents[3]
    trial = runner.Trial(TrialRequest(target="hello:greet", plugins_root=root / "examples" / "plugins",
                                      eval_root=tmp_path / "eval"), env={})
    assert trial.policy.max_cost_usd == 0.01                    # from the file: no flag gave it
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(_response("msg_1", "claude-sonnet-4-5", 1000, 100))     # $0.0045: within the budget
    trial.wd, trial.state, trial.backend = Workdir.of(tmp_path), trial_state(), SimpleNamespace()
    trial.transcript_path = lambda: transcript
    ticks: list[dict] = []

    def poll(cfg, backend, *, sleep, on_tick, watch):
        for tick in ticks:
            on_tick(tick)
        return "polled"

    monkeypatch.setattr(runner.poll, "poll", poll)
    ticks.append({"state": "BUSY_GENERATING", "tick": 1})
    assert trial.poll_once(300) == "polled"
    with transcript.open("a") as f:
        f.write(_response("msg_2", "claude-sonnet-4-5", 1000, 200))               # $0.006 more: $0.0105 in all
    with pytest.raises(Blocked) as exc:
        trial.poll_once(300)
    assert exc.value.code == StopReason.BUDGET
    assert "the trial reached its budget of $0.01: it had spent $0.0105" in exc.value.message
