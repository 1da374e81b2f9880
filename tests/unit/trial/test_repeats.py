"""A case run drives k attempts, each a whole trial of its own (references/suite-format.md "Repeats"): the trial here is
a fake that answers each attempt with the verdict a test gives it, so every rule of the loop is one short test; the
real trials of a case run are in tests/e2e/test_repeats.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.errors import Blocked, ExitCode, RefusedInput
from live_trial.jsonfile import schema_errors
from live_trial.trial import repeats
from live_trial.trial.facts import TrialOutcome, TrialRequest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "plugins"


class FakeTrials:
    """Stands in for :class:`live_trial.trial.runner.Trial`: attempt n ends with ``script[n-1]`` (a verdict word and a
    stop reason, or an error to raise)."""

    def __init__(self, script):
        self.script = list(script)
        self.requests: list[TrialRequest] = []

    def __call__(self, req, on_event=None, stop_event=None, env=None):
        self.requests.append(req)
        step = self.script[len(self.requests) - 1]
        owner = self

        class One:
            def run(self):
                if isinstance(step, Exception):
                    raise step
                verdict, stop = step
                n = len(owner.requests)
                wd = req.eval_root / "hello" / "greet" / "live-trial" / f"20261201T00000{n}-000{n}"
                wd.mkdir(parents=True)
                doc = {"overall": {"verdict": verdict, "reasons": [] if verdict == "PASS" else [f"why {n}"]},
                       "stop_reason": stop, "skill_dir_tree_sha": "sha256:" + "a" * 64,
                       "scenario_id": "sha256:" + "b" * 64, "target": "hello:greet", "plugin": "hello",
                       "skill": "greet", "scenario_origin": "rehearsal", "summary": f"attempt {n} {verdict}"}
                return TrialOutcome(workdir=wd, overall=verdict, exit_code=0, verdict=doc,
                                    verdict_path=wd / "verdict.json", summary=doc["summary"],
                                    scenario_origin="rehearsal")
        return One()


@pytest.fixture
def trials(monkeypatch):
    def install(*script):
        fake = FakeTrials(script)
        monkeypatch.setattr("live_trial.trial.runner.Trial", fake)
        return fake
    return install


def base(tmp_path: Path) -> TrialRequest:
    return TrialRequest(target="hello:greet", plugins_root=EXAMPLES, eval_root=tmp_path / "eval", lang="en")


def messages(tmp_path: Path) -> list[dict]:
    path = tmp_path / "eval" / "notifications.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_some_passed_some_not_is_flaky_with_its_pass_rate_and_one_message(tmp_path, trials):
    fake = trials(("PASS", None), ("DEGRADED", None), ("PASS", None))
    out = repeats.run_case(base(tmp_path), 3, case="ada")
    assert (out.overall, out.exit_code) == ("FLAKY", ExitCode.FLAKY)
    assert out.doc["pass_rate"] == {"passed": 2, "samples": 3, "rate": 0.6667}
    assert [r.case_run.attempt for r in fake.requests] == [1, 2, 3]
    assert len({id(r) for r in fake.requests}) == 3 and all(r.case_run.repeats == 3 for r in fake.requests)
    assert out.path == out.folder / "case-verdict.json" and out.folder.parent.name == "live-trial-cases"
    assert schema_errors(json.loads(out.path.read_text()), "case-verdict.schema.json") == []
    sent = messages(tmp_path)
    assert [m["kind"] for m in sent] == ["flaky"]                  # one message for the case, none per attempt
    assert "passed 2 of its 3 tries" in sent[0]["text"] and sent[0]["refs"]["case_run_id"] == out.folder.name
    assert "ada" in out.summary


def test_a_blocked_attempt_is_no_sample_and_is_tried_again(tmp_path, trials):
    fake = trials(("BLOCKED", "model_unavailable"), ("PASS", None), ("PASS", None))
    out = repeats.run_case(base(tmp_path), 2)
    assert out.overall == "PASS" and len(fake.requests) == 3
    assert out.doc["blocked_retries"] == {"used": 1, "max": 2}
    assert [(a["n"], a["verdict"], a["sample"]) for a in out.doc["attempts"]] == [
        (1, "BLOCKED", False), (2, "PASS", True), (3, "PASS", True)]
    assert all(a["workdir"] for a in out.doc["attempts"])           # the BLOCKED attempt's workdir is kept too
    assert "were tried again" in messages(tmp_path)[0]["text"]


def test_when_the_bound_runs_out_the_case_is_blocked_never_a_pass_on_fewer_samples(tmp_path, trials):
    fake = trials(("PASS", None), *[("BLOCKED", "tmux_gone")] * 3)
    out = repeats.run_case(base(tmp_path), 2)
    assert (out.overall, out.exit_code) == ("BLOCKED", ExitCode.BLOCKED)
    assert len(fake.requests) == 4 and out.doc["blocked_retries"] == {"used": 2, "max": 2}
    assert out.doc["pass_rate"] == {"passed": 1, "samples": 1, "rate": 1.0}
    assert "retries of a BLOCKED attempt used up" in out.doc["stopped"]
    assert "could not be tried 2 times" in out.summary


def test_a_cause_another_attempt_would_meet_stops_the_run_at_once(tmp_path, trials):
    fake = trials(("PASS", None), ("BLOCKED", "usage_limit"), ("PASS", None))
    out = repeats.run_case(base(tmp_path), 3)
    assert out.overall == "BLOCKED" and len(fake.requests) == 2
    assert out.doc["blocked_retries"]["used"] == 0
    assert "another attempt would meet the same cause" in out.doc["stopped"]


def test_a_first_attempt_refused_refuses_the_case_and_creates_nothing(tmp_path, trials):
    trials(RefusedInput("bad args", code="bad_text"))
    with pytest.raises(RefusedInput):
        repeats.run_case(base(tmp_path), 3)
    assert not (tmp_path / "eval").exists()


def test_an_attempt_stopped_before_its_workdir_is_kept_as_blocked(tmp_path, trials):
    trials(("PASS", None), Blocked("disk full", code="disk_full"), ("PASS", None))
    out = repeats.run_case(base(tmp_path), 2)
    assert out.overall == "PASS"
    assert out.doc["attempts"][1] == {"n": 2, "run_id": None, "workdir": None, "verdict": "BLOCKED", "sample": False,
                                      "stop_reason": "disk_full", "summary": "disk full",
                                      "report": None, "skill_dir_tree_sha": None}


def test_none_passed_is_the_worst_judged_verdict(tmp_path, trials):
    trials(("DEGRADED", None), ("FAIL", "hang"))
    out = repeats.run_case(base(tmp_path), 2)
    assert (out.overall, out.exit_code) == ("FAIL", ExitCode.FAIL)
    assert [m["kind"] for m in messages(tmp_path)] == ["not_working"]


def test_repeats_below_one_are_refused(tmp_path, trials):
    trials()
    with pytest.raises(RefusedInput, match="repeats must be"):
        repeats.run_case(base(tmp_path), 0)
