"""A harness killed (SIGKILL) at any phase of a trial, then ``run --resume``: the same verdict as a run nobody
killed where the evidence survived, BLOCKED where it did not, and exactly one notification (README "Resuming a
trial"). Real claude in real tmux, the model played by a rehearsal scenario.

The harness is held at a phase by the suite's fault-injection point (``LIVE_TRIAL_STOP_AT_PHASE``: it stops itself
right after trial-state.json records that phase), so the kill lands exactly there, however loaded the machine is.
"""
from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from live_trial.jsonfile import schema_errors
from tests.e2e.run_support import (
    FAST,
    PLUGINS,
    SCENARIOS,
    carrying_tag,
    final_json,
    kill_at_phase,
    notifications,
    pid_alive,
    popen_cmd,
    resume_cmd,
    tmux_sessions,
    tree_of,
    wait_for_state,
    workdirs,
)
from tests.e2e.waiting import wait_for

pytestmark = pytest.mark.e2e

#: What an unkilled run of mark-happy gives (tests/e2e/test_run.py::test_happy_path_pass_with_real_skill_and_write).
UNKILLED = {"overall": "PASS", "launch": "PASS", "completion": "PASS", "goal_result": "PASS", "poll_exit": "DONE"}
EXIT = {"PASS": 0, "BLOCKED": 3}


def _facts(doc: dict) -> dict:
    return {"overall": doc["overall"]["verdict"], "launch": doc["launch"], "completion": doc["completion"],
            "goal_result": doc["goal_result"], "poll_exit": doc["poll_exit"]}


def _nothing_left(state: dict) -> None:
    assert state["session"] not in tmux_sessions(), "the trial's session is still there"
    if state.get("pane_pid"):
        assert not pid_alive(state["pane_pid"]), "the trial's claude is still running"
    assert carrying_tag(state["session"]) == [], "a process the trial started is still running"


def _evaluators(harness_pid: int) -> list[int]:
    """Pids of the harness's descendants whose command is ``claude -p`` (the evaluator), read from ``/proc``."""
    found = []
    for pid, _start in tree_of(harness_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"claude") and b"-p" in argv:
            found.append(pid)
    return found


def _recorded_evaluator(tmp_path) -> dict | None:
    try:
        return json.loads((workdirs(tmp_path)[0] / "trial-state.json").read_text()).get("evaluator")
    except (OSError, ValueError, IndexError):
        return None


def _kill_at(tmp_path, phase: str, scenario: str = "mark-happy.yaml", limits=tuple(FAST)) -> dict:
    """Start a trial held at ``phase``, SIGKILL its harness there; return the trial state recorded at the kill."""
    wd = kill_at_phase(tmp_path, phase, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                       str(SCENARIOS / scenario), *limits)
    state = json.loads((wd / "trial-state.json").read_text())
    assert state["phase"] == phase
    return {**state, "_workdir": wd}


@pytest.mark.budget(16)
@pytest.mark.parametrize("phase,expected", [
    ("created", "BLOCKED"), ("booting", "BLOCKED"), ("sending", "BLOCKED"),       # delivery never confirmed
    ("polling", "PASS"), ("collecting", "PASS"), ("evaluating", "PASS"), ("judged", "PASS"),
    ("verdict_written", "PASS"), ("finished", "PASS"),
])
def test_a_harness_killed_at_any_phase_resumes_to_the_same_verdict_with_one_notification(tmp_path, phase, expected):
    state = _kill_at(tmp_path, phase)
    wd = state["_workdir"]
    assert len(notifications(tmp_path, state["run_id"])) == (1 if phase == "finished" else 0)
    log_before = (wd / "trial-log.jsonl").read_bytes() if phase == "finished" else None    # none yet at "created"
    resumed = resume_cmd(wd)
    result = final_json(resumed)
    assert resumed.returncode == EXIT[expected], resumed.stdout[-2000:] + resumed.stderr[-3000:]
    doc = json.loads((wd / "verdict.json").read_text())
    assert schema_errors(doc, "live-trial-verdict.schema.json") == []
    assert result["status"] == doc["overall"]["verdict"] == expected
    if expected == "PASS":
        assert _facts(doc) == UNKILLED
        assert doc["evidence"], "the resumed PASS cites no evidence"
    else:
        assert (doc["stop_reason"], doc["blocked"]) == ("harness_killed", True)
        assert doc["overall"]["reasons"][0].startswith("blocked: the harness was killed")
    sent = notifications(tmp_path, state["run_id"])
    assert len(sent) == 1, f"{len(sent)} notification lines for one trial: {[r['text'][:60] for r in sent]}"
    assert result["notification"] == sent[0]["text"]
    final = json.loads((wd / "trial-state.json").read_text())
    assert final["phase"] == "finished" and final["notification"]["status"] == "not_configured"
    if phase == "finished":     # nothing to continue: the trial's log (and so its page) is what the trial left
        assert (wd / "trial-log.jsonl").read_bytes() == log_before
    _nothing_left(state)


@pytest.mark.budget(20)
def test_a_harness_killed_while_the_evaluator_judges_leaves_no_evaluator_and_resumes_to_the_same_verdict(tmp_path):
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-judge-6s.yaml"), *FAST)
    try:
        wait_for_state(tmp_path, lambda s: s["phase"] == "evaluating")
        evaluators = wait_for(lambda: _evaluators(proc.pid), what="the evaluator's claude -p running")
        wait_for(lambda: _recorded_evaluator(tmp_path), what="the evaluator recorded in trial-state.json",
                 timeout_s=10, required=False)         # an instant after it starts: a kill may also land before
        below = [pid for pid, _start in tree_of(proc.pid)]  # the holder that runs it (the pid recorded) among them
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    # Its parent died: the evaluator dies with it, long before its 6 s answer or its 600 s timeout.
    wait_for(lambda: not [p for p in evaluators if pid_alive(p)], what="the orphaned evaluator gone",
             timeout_s=5)
    wd = workdirs(tmp_path)[0]
    state = json.loads((wd / "trial-state.json").read_text())
    assert state["phase"] == "evaluating" and state["evaluator"]["pid"] in evaluators + below
    resumed = resume_cmd(wd)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    doc = json.loads((wd / "verdict.json").read_text())
    assert _facts(doc) == UNKILLED
    assert len(notifications(tmp_path, state["run_id"])) == 1
    assert json.loads((wd / "trial-state.json").read_text())["evaluator"] is None
    _nothing_left(state)


@pytest.mark.budget(6)
def test_resume_takes_no_trial_options_and_says_so(tmp_path):
    state = _kill_at(tmp_path, "booting")
    before = (state["_workdir"] / "trial-state.json").read_bytes()
    refused = resume_cmd(state["_workdir"], "--stall-limit", "9", "--gate-response", "Casual")
    assert refused.returncode == 64
    assert "--resume continues with the options the trial started with; remove --gate-response, --stall-limit" \
        in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert (state["_workdir"] / "trial-state.json").read_bytes() == before
    assert final_json(resume_cmd(state["_workdir"]))["status"] == "BLOCKED"     # and without them, it resumes


@pytest.mark.budget(14)
def test_resume_keeps_the_limits_the_trial_started_with(tmp_path):
    """A turn that never ends: the resumed harness stops it at the trial's own --hard-cap of 6 s, not the default."""
    wd = _kill_at(tmp_path, "polling", "mark-hang.yaml", ("--stall-limit", "300", "--hard-cap", "6"))["_workdir"]
    resumed = resume_cmd(wd, timeout=120)
    assert resumed.returncode == 3, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    doc = json.loads((wd / "verdict.json").read_text())
    assert (doc["poll_exit"], doc["stop_reason"], doc["overall"]["verdict"]) == ("HARD_CAP", "hard_cap", "BLOCKED")
    _nothing_left(json.loads((wd / "trial-state.json").read_text()))
