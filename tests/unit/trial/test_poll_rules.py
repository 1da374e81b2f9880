"""The exit table of poll (live_trial.trial.poll_rules.decide) on observations built by hand: each row a few lines,
and the whole table judged with file, process and tmux access forbidden."""
from __future__ import annotations

import builtins
import os
import subprocess
from pathlib import Path

import pytest

from live_trial.clock import iso_z
from live_trial.policy import load_policy
from live_trial.transcript.status import Status
from live_trial.trial.moves import UNFOLLOWED
from live_trial.trial.observation import Followed, Observation
from live_trial.trial.poll_rules import GATE_REPEAT_S, QUICK_RECHECK_S, decide, progress_report
from live_trial.trial.poll_state import CallCounters, PollConfig, PollState

T0 = 1_800_000_000.0
SID = "11111111-2222-4333-8444-555555555555"
MARKER = Path("/w/out/status.json")
POLICY = load_policy({}).with_overrides(stall_limit_s=30, hard_cap_s=600, poll_interval_s=0.5, done_stable_ticks=2)
CFG = PollConfig(marker=MARKER, session="lt-20261130T120000-ab12-poll", session_id=SID, cwd=None, config_dir=None,
                 state_file="/w/poll-state.json", policy=POLICY)
HASH = "sha256:" + "a" * 64


def fresh(**changes) -> PollState:
    """A first call's state at T0 (with ``changes``)."""
    return PollState.fresh(CFG, MARKER, T0).changed(**changes)


def seen(state: str = "BUSY_TOOL", status: Status | None = None, **kw) -> Observation:
    """A live session whose transcript (100 bytes) classifies as ``state`` (``status``: the full classification)."""
    fields = dict(alive=True, capture="screen", screen_hash=HASH, transcript_path="/t.jsonl", transcript_end=100,
                  status=status or Status(state, "test"), state=state, output_sizes={})
    return Observation(**{**fields, **kw})


def idle(ended_by: str | None = "turn_duration", cli: str | None = "idle") -> Status:
    return Status("IDLE_TURN_COMPLETE", "test", ended_by=ended_by, session_status=cli)


def gate(tool_id: str | None = "toolu_1") -> Status:
    return Status("GATE", "test", pending_tool="AskUserQuestion", pending_tool_id=tool_id, question="Which colour?",
                  gate_kind="ask_user_question")


def ticks(observations, state: PollState, start: float = T0, every_s: float = 0.5):
    """decide() on each observation in turn, ``every_s`` apart from ``start``; every step."""
    steps = []
    for i, obs in enumerate(observations):
        steps.append(decide(obs, state, POLICY, start + i * every_s))
        state = steps[-1].state
    return steps


# ------------------------------------------------------------------ rows 1-3: before the observation counts

def test_hard_cap_comes_first_and_leaves_the_observation_out():
    step = decide(Observation(alive=False), fresh(), POLICY, T0 + 600)
    assert (step.exit.word, step.exit.reason) == ("HARD_CAP", "elapsed 600s >= hard_cap_s 600s")
    assert not step.judged and step.state.ticks == 1 and step.state.last_screen_hash is None


def test_the_hard_cap_warning_is_given_once_at_80_percent():
    first, second = ticks([seen(), seen()], fresh(), start=T0 + 480)
    assert first.warning.startswith("WARN: HARD_CAP 80% (480s of 600s)") and first.state.warned_hard_cap
    assert second.warning is None and second.exit is None


def test_the_hard_cap_warning_names_the_option_run_takes_and_the_variable_poll_reads():
    """``run --hard-cap 8`` sets the cap with an option: a warning that only says "raise env HARD_CAP" sends a person
    to a setting they never used."""
    [first] = ticks([seen()], fresh(), start=T0 + 480)
    assert "--hard-cap" in first.warning and "env HARD_CAP" in first.warning, first.warning
    assert "raise env HARD_CAP" not in first.warning


def test_missing_tmux_is_blocked():
    step = decide(Observation(alive=False, blocked="tmux_missing: tmux is not installed"), fresh(), POLICY, T0)
    assert (step.exit.word, step.exit.reason, step.judged) == ("BLOCKED", "tmux_missing: tmux is not installed", False)


def test_a_gone_session_is_stall_session_gone_at_once():
    step = decide(Observation(alive=False), fresh(), POLICY, T0)
    assert (step.exit.word, step.exit.reason, step.state.ticks) == ("STALL", "session_gone", 1)


# ------------------------------------------------------------------ row 4: GATE

def test_gate_on_done_stable_ticks_and_what_it_records():
    first, second = ticks([seen("GATE", gate())] * 2, fresh())
    assert first.exit is None and first.state.gate_streak == 1
    assert (second.exit.word, second.exit.reason, second.exit.question) == ("GATE", "ask_user_question", "Which colour?")
    assert second.state.last_gate_id is None                      # the tick's save: before it was reported
    assert (second.final.last_gate_id, second.final.last_gate_keys) == ("toolu_1", ("toolu_1",
                                                                                    "question:Which colour?"))


ON_SCREEN = "screen:ask_user_question:Which colour?"


def test_a_gate_reported_already_waits_gate_repeat_s_while_its_dialog_stays():
    state = fresh(last_gate_id="toolu_1", last_gate_keys=("toolu_1",))
    steps = ticks([seen("GATE", gate(), screen_gate=ON_SCREEN)] * 12, state)
    first = next(i for i, s in enumerate(steps) if s.exit is not None)
    assert first * 0.5 >= GATE_REPEAT_S - 1e-6 and steps[first].exit.word == "GATE"
    assert ticks([seen("GATE", gate("toolu_2"))] * 2, state)[1].exit.word == "GATE"     # another gate: at once


def test_an_answered_gate_whose_dialog_is_gone_is_not_reported_again_however_late_its_tool_result():
    """The dialog closed on the answer; the CLI writes the tool_result late under load: answering again would spend
    the next answer on this question (README "Questions (gates)": answers are used in order)."""
    state = fresh(last_gate_id="toolu_1", last_gate_keys=("toolu_1", ON_SCREEN))
    assert [s.exit for s in ticks([seen("GATE", gate())] * 60, state)] == [None] * 60


def test_a_record_that_comes_after_its_dialog_was_reported_is_the_same_gate():
    """Reported from the screen alone (no tool_use record yet); the record then names a tool id never seen: the
    question ties the two sightings together."""
    state = fresh(last_gate_id=None, last_gate_keys=(ON_SCREEN, "question:Which colour?"))
    assert [s.exit for s in ticks([seen("GATE", gate("toolu_9"))] * 30, state)] == [None] * 30
    other = Status("GATE", "test", pending_tool="AskUserQuestion", pending_tool_id="toolu_9", question="Whom?",
                   gate_kind="ask_user_question")
    assert ticks([seen("GATE", other)] * 2, state)[1].exit.word == "GATE"                 # another question: at once


def test_a_gate_known_by_its_dialog_alone_waits_too():
    state = fresh(last_gate_id=None, last_gate_keys=("screen:ask_user_question:Which colour?",))
    obs = seen("GATE", gate(None), screen_gate="screen:ask_user_question:Which colour?")
    assert ticks([obs] * 3, state)[-1].exit is None


# ------------------------------------------------------------------ row 5: DONE

def test_done_at_once_when_the_cli_ended_the_turn():
    step = decide(seen("IDLE_TURN_COMPLETE", idle(), marker_exists=True), fresh(), POLICY, T0)
    assert (step.exit.word, step.exit.reason) == ("DONE", "marker + IDLE_TURN_COMPLETE + screen not busy")


@pytest.mark.parametrize("kw", [dict(marker_exists=False), dict(marker_exists=True, screen_busy=True)])
def test_no_done_without_the_marker_or_with_a_spinner(kw):
    assert [s.exit for s in ticks([seen("IDLE_TURN_COMPLETE", idle(), **kw)] * 4, fresh())] == [None] * 4


def test_the_fallback_done_needs_its_stable_ticks_to_span_their_intervals():
    obs = seen("IDLE_TURN_COMPLETE", idle(ended_by="assistant"), marker_exists=True)
    quick = ticks([obs] * 3, fresh(), every_s=0.01)                # woken by file events, ms apart
    assert [s.exit for s in quick] == [None] * 3 and quick[-1].state.done_streak == 3
    assert decide(obs, quick[-1].state, POLICY, T0 + 0.5).exit.word == "DONE"


def test_done_names_an_interruption_and_an_api_error():
    status = Status("IDLE_TURN_COMPLETE", "test", interrupted=True, api_error=529, ended_by="turn_duration",
                    session_status="idle")
    step = decide(seen("IDLE_TURN_COMPLETE", status, marker_exists=True), fresh(), POLICY, T0)
    assert step.exit.reason.endswith("screen not busy (interrupted) (api_error 529)")


def test_a_spinner_left_on_an_ended_turn_is_looked_at_again_soon():
    step = decide(seen("IDLE_TURN_COMPLETE", idle(), marker_exists=True, screen_busy=True), fresh(), POLICY, T0)
    assert step.exit is None and step.wait_s == QUICK_RECHECK_S
    assert decide(seen(), fresh(), POLICY, T0).wait_s == POLICY.poll_interval_s


# ------------------------------------------------------------------ row 6: STALL, and what counts as progress

def test_stall_after_stall_limit_s_without_progress():
    state = fresh(last_screen_hash=HASH, transcript_offset=100)
    assert decide(seen(), state, POLICY, T0 + 29.9).exit is None
    step = decide(seen(), state, POLICY, T0 + 30)
    assert (step.exit.word, step.exit.reason) == ("STALL", "no progress for 30s (stall_limit_s 30)")


@pytest.mark.parametrize("change", [dict(screen_hash="sha256:" + "b" * 64), dict(transcript_end=101),
                                    dict(followed=Followed(SID, "new", "/t.jsonl", "/n.jsonl")),
                                    dict(screen_retrying="API error · Retrying in 16s · attempt 6/10")])
def test_progress_resets_the_stall_clock(change):
    step = decide(seen(**change), fresh(last_screen_hash=HASH, transcript_offset=100), POLICY, T0 + 30)
    assert step.exit is None and step.state.last_change_at == iso_z(T0 + 30)


def test_a_growing_background_output_is_progress_and_its_sizes_are_kept():
    state = fresh(last_screen_hash=HASH, transcript_offset=100, background_outputs={"/o": 5})
    step = decide(seen(output_sizes={"/o": 9}), state, POLICY, T0 + 30)
    assert step.exit is None and step.state.background_outputs == {"/o": 9}
    assert decide(seen(output_sizes={"/o": 9}), step.state, POLICY, T0 + 60).exit.word == "STALL"


def test_the_cli_retrying_an_api_request_is_never_a_stall_the_hard_cap_bounds_it():
    """Seed 001 STALL table: 2.1.197 masks its retry countdown, so the screen alone would not move for up to 32 s between
    attempts (minutes with CLAUDE_CODE_RETRY_WATCHDOG); the retry line on screen is progress until the hard cap."""
    retrying = seen("BUSY_GENERATING", screen_retrying="API error · Retrying in 32s · attempt 9/10")
    state = fresh(last_screen_hash=HASH, transcript_offset=100)
    for t in range(0, 599, 30):
        step = decide(retrying, state, POLICY, T0 + t)
        assert step.exit is None, t
        state = step.state
    assert decide(retrying, state, POLICY, T0 + 600).exit.word == "HARD_CAP"


def _gave_up(cause: str, status: int | None = 529) -> Status:
    return Status("IDLE_TURN_COMPLETE", "test", api_error=status, ended_by="api_error", session_status="idle",
                  api_error_cause=cause, api_error_text="API Error: 529 Overloaded")


@pytest.mark.parametrize("cause", ["model_unavailable", "usage_limit", "model_auth", "model_unknown"])
def test_a_turn_the_cli_ended_on_the_model_services_error_stalls_at_once(cause):
    step = decide(seen("IDLE_TURN_COMPLETE", _gave_up(cause)), fresh(), POLICY, T0 + 1)
    assert step.exit.word == "STALL" and step.exit.reason.startswith(f"api_error: the CLI gave up on the model's "
                                                                     f"service ({cause}: 529)")


def test_the_sessions_own_api_error_goes_to_the_stall_table_at_once_unless_something_may_wake_the_session():
    """A request the session made that the service refused (a prompt too long, a setting the model does not take) is
    not retried by the CLI: waiting the STALL limit (300 s) for it changed nothing, so the STALL table reads its last
    words at once. A background shell still running, or a queued prompt, may wake the session: those wait."""
    step = decide(seen("IDLE_TURN_COMPLETE", _gave_up("api_error", 400)), fresh(), POLICY, T0 + 1)
    assert step.exit.word == "STALL" and step.exit.reason == ("api_error: the turn ended on an API error the CLI does "
                                                              "not retry (400) and nothing is left to wake the session")
    running = _gave_up("api_error", 400)
    running.background = {"shells": 1, "agents": 0, "tasks": []}
    assert decide(seen("IDLE_TURN_COMPLETE", running), fresh(), POLICY, T0 + 1).exit is None
    queued = _gave_up("api_error", 400)
    queued.queued_prompts = 1
    assert decide(seen("IDLE_TURN_COMPLETE", queued), fresh(), POLICY, T0 + 1).exit is None


def test_a_marker_written_before_the_service_failed_is_judged_done_not_stopped():
    obs = seen("IDLE_TURN_COMPLETE", _gave_up("model_unavailable"), marker_exists=True)
    steps = ticks([obs] * 2, fresh())
    assert steps[0].exit is None and steps[1].exit.word == "DONE"


def test_a_followed_move_is_recorded():
    step = decide(seen(followed=Followed(SID, "new-id", "/t.jsonl", "/n.jsonl")), fresh(), POLICY, T0 + 1)
    assert [m.to_doc() for m in step.state.moves] == [{"from_session_id": SID, "to_session_id": "new-id",
                                                     "from_path": "/t.jsonl", "to_path": "/n.jsonl", "at": iso_z(T0 + 1)}]


def test_a_move_that_cannot_be_followed_stalls_as_transcript_moved():
    state = fresh(last_screen_hash=HASH, transcript_offset=100)
    first = decide(seen(named_session="new-id"), state, POLICY, T0 + 1)
    assert first.state.move_pending.since == iso_z(T0 + 1)
    step = decide(seen(named_session="new-id"), first.state, POLICY, T0 + 30)
    assert step.exit.reason.startswith(f"{UNFOLLOWED}: the CLI continues as session new-id (since {iso_z(T0 + 1)})")


# ------------------------------------------------------------------ row 7: TICK_BUDGET, and the tick's report

def test_tick_budget_counts_this_calls_ticks_only():
    state = fresh(ticks=40, call=CallCounters(max_ticks=3))
    steps = ticks([seen()] * 3, state)
    assert [s.exit for s in steps[:2]] == [None, None] and steps[2].exit.reason == "3 ticks in this call"
    assert steps[2].state.ticks == 43


def test_the_tick_report():
    obs = seen(new_records=2, status=Status("BUSY_TOOL", "t", pending_tool="Bash", background={"kind": "shell"}))
    step = decide(obs, fresh(), POLICY, T0 + 10)
    report = progress_report(obs, step.state, POLICY, T0 + 10)
    assert report == {"tick": 1, "elapsed_s": 10.0, "since_progress_s": 0.0, "stall_in_s": 30.0, "hard_cap_in_s": 590.0,
                      "state": "BUSY_TOOL", "pending_tool": "Bash", "background": "shell", "screen_busy": False,
                      "transcript_offset": 100, "new_records": 2, "done_streak": 0}


# ------------------------------------------------------------------ no I/O

def test_decide_runs_with_files_processes_and_tmux_forbidden(monkeypatch):
    """Every row judged while open, stat, exec and tmux raise: decide() reads only the data it is given."""
    def forbidden(*a, **k):
        raise AssertionError(f"I/O in decide: {a[:1]}")
    plan = [(seen(), fresh(), T0), (seen(), fresh(), T0 + 600), (Observation(alive=False, blocked="tmux"), fresh(), T0),
            (Observation(alive=False), fresh(), T0), (seen("GATE", gate()), fresh(gate_streak=1), T0),
            (seen("IDLE_TURN_COMPLETE", idle(), marker_exists=True), fresh(), T0),
            (seen(named_session="x"), fresh(last_screen_hash=HASH, transcript_offset=100), T0 + 40),
            (seen(followed=Followed(SID, "n", "/a", "/b"), output_sizes={"/o": 1}), fresh(), T0 + 480),
            (seen(), fresh(call=CallCounters(max_ticks=1)), T0)]
    monkeypatch.setattr(builtins, "open", forbidden)
    for mod, name in ((os, "stat"), (os, "lstat"), (os, "open"), (os, "scandir"), (os, "listdir"), (os, "kill"),
                      (subprocess, "Popen"), (subprocess, "run")):
        monkeypatch.setattr(mod, name, forbidden)
    with pytest.raises(AssertionError):
        Path("/").exists()                      # the guard holds: a file check would fail the test
    steps = [decide(obs, state, POLICY, now) for obs, state, now in plan]
    report = progress_report(plan[0][0], steps[0].state, POLICY, T0)
    monkeypatch.undo()
    assert [s.exit.word if s.exit else None for s in steps] == [None, "HARD_CAP", "BLOCKED", "STALL", "GATE", "DONE",
                                                                "STALL", None, "TICK_BUDGET"]
    assert steps[7].warning and report["state"] == "BUSY_TOOL"


def test_each_exit_word_carries_its_exit_code_and_is_the_verdicts_word():
    """One home for the poll's words and numbers (seed 001 poll exit table; README "The steps, one by one")."""
    from live_trial.errors import ExitCode, PollExit
    from live_trial.resources import load_schema

    assert {w: int(w.exit_code) for w in PollExit} == {"DONE": 0, "HARD_CAP": 1, "STALL": 2, "BLOCKED": 3, "GATE": 4,
                                                       "TICK_BUDGET": 5}
    assert all(isinstance(w.exit_code, ExitCode) for w in PollExit)
    enum = load_schema("live-trial-verdict.schema.json")["properties"]["poll_exit"]["enum"]
    assert set(enum) == {*PollExit, None}
