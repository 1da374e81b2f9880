"""An activation run drives every session of every prompt side by side (README "Does it start by itself?"): each
session is a fake here that answers with the outcome a test gives it, so each rule of the run is a short test; the
real sessions are in tests/e2e/test_activation.py."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from live_trial.acceptance.activation import BLOCKED, NOT_TRIGGERED, TRIGGERED, PromptSample
from live_trial.acceptance.suite import ACTIVATION, Case, Prompt
from live_trial.closure.pinning import pin
from live_trial.closure.target import resolve_target
from live_trial.errors import ExitCode, RefusedInput
from live_trial.jsonfile import schema_errors
from live_trial.trial import activation_runs
from live_trial.trial.facts import TrialRequest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "plugins"
CASE = Case(name="words", kind=ACTIVATION, repeats=2,
            prompts=(Prompt("make a welcome file", True), Prompt("what is 2 + 2?", False)))


class FakeSessions:
    """Stands in for :class:`live_trial.trial.prompt_run.PromptRun`: the k-th session of prompt n ends with
    ``script[n][k-1]`` (an outcome, or ``(BLOCKED, stop reason)``); it holds one of the run's lanes while it runs."""

    def __init__(self, script):
        self.script, self.requests, self.live, self.most = script, [], 0, 0
        self.lock = threading.Lock()

    def __call__(self, req, on_event=None, stop_event=None, env=None):
        owner = self

        class One:
            lane = None

            def run_prompt(self):
                a = req.activation
                with owner.lock:
                    owner.requests.append(req)
                    k = sum(1 for r in owner.requests if r.activation.prompt == a.prompt)
                step = owner.script[a.prompt][k - 1]
                self.lane.acquire()
                with owner.lock:
                    owner.live += 1
                    owner.most = max(owner.most, owner.live)
                time.sleep(0.02)
                with owner.lock:
                    owner.live -= 1
                self.lane.release()
                outcome, stop = step if isinstance(step, tuple) else (step, None)
                wd = a.folder / "prompts" / f"p{a.prompt}-r{a.repeat}"
                wd.mkdir(parents=True)
                return PromptSample(a.prompt, a.repeat, outcome, "blocked" if outcome == BLOCKED else "turn_end",
                                    stop_reason=stop, workdir=wd, step=0 if outcome == TRIGGERED else None)
        return One()


@pytest.fixture
def sessions(monkeypatch):
    def install(script):
        fake = FakeSessions(script)
        monkeypatch.setattr(activation_runs, "PromptRun", fake)

        class Probe:
            target = resolve_target("hello:greet", EXAMPLES)
            pinning = pin(target, EXAMPLES)
            claude = None
        monkeypatch.setattr(activation_runs, "check_case", lambda base, case, env=None: Probe())
        return fake
    return install


def base(tmp_path: Path) -> TrialRequest:
    return TrialRequest(target="hello:greet", plugins_root=EXAMPLES, eval_root=tmp_path / "eval", lang="en")


def test_every_session_runs_each_prompt_alone_two_at_a_time_and_one_result_is_written(tmp_path, sessions):
    fake = sessions({1: [TRIGGERED, TRIGGERED], 2: [NOT_TRIGGERED, NOT_TRIGGERED]})
    out = activation_runs.run_activation(base(tmp_path), CASE, width=2)
    assert (out.overall, out.exit_code) == ("PASS", ExitCode.OK)
    assert sorted((r.activation.prompt, r.activation.repeat) for r in fake.requests) == [(1, 1), (1, 2), (2, 1),
                                                                                          (2, 2)]
    assert {r.prompt for r in fake.requests} == {"make a welcome file", "what is 2 + 2?"}
    assert all(r.args == "" and r.gate_responses == [] and r.criteria == [] for r in fake.requests)
    assert fake.most <= 2
    doc = json.loads(out.path.read_text())
    assert schema_errors(doc, "activation.schema.json") == [] and out.path.parent.parent.name == "live-trial-activation"
    sent = [json.loads(x) for x in (tmp_path / "eval" / "notifications.jsonl").read_text().splitlines()]
    assert [m["kind"] for m in sent] == ["done"]                  # one message for the case, none per session
    assert sent[0]["refs"]["activation_run_id"] == out.folder.name


def test_a_blocked_session_that_may_pass_is_tried_again_as_the_next_session_of_its_prompt(tmp_path, sessions):
    fake = sessions({1: [(BLOCKED, "model_unavailable"), TRIGGERED, TRIGGERED], 2: [NOT_TRIGGERED, NOT_TRIGGERED]})
    out = activation_runs.run_activation(base(tmp_path), CASE, width=1)
    assert out.overall == "PASS" and out.doc["blocked_retries"] == {"used": 1, "max": 2}
    assert sorted(r.activation.repeat for r in fake.requests if r.activation.prompt == 1) == [1, 2, 3]


def test_a_cause_every_session_would_meet_stops_the_run_blocked(tmp_path, sessions):
    sessions({1: [(BLOCKED, "usage_limit"), TRIGGERED], 2: [NOT_TRIGGERED, NOT_TRIGGERED]})
    out = activation_runs.run_activation(base(tmp_path), CASE, width=1)
    assert (out.overall, out.exit_code) == ("BLOCKED", ExitCode.BLOCKED)
    assert "another session would meet the same cause" in (out.doc["stopped"] or "")


def test_a_should_not_prompt_that_started_it_fails_the_case(tmp_path, sessions):
    sessions({1: [TRIGGERED, TRIGGERED], 2: [TRIGGERED, NOT_TRIGGERED]})
    out = activation_runs.run_activation(base(tmp_path), CASE, width=2)
    assert (out.overall, out.exit_code) == ("FLAKY", ExitCode.FLAKY)
    assert out.doc["reasons"][0].startswith('prompt 2 "what is 2 + 2?" should not start the skill: it did in 1 of 2')


def test_a_width_below_one_is_refused(tmp_path, sessions):
    sessions({})
    with pytest.raises(RefusedInput):
        activation_runs.run_activation(base(tmp_path), CASE, width=0)
