"""Background work, records that are not prompts and moved transcripts: the classifier on synthetic records (the
named cases of ``status --self-test``) and on transcripts the real CLI 2.1.197 wrote (tests/unit/transcripts)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.session import screen
from live_trial.transcript import background as bg
from live_trial.transcript.builder import TranscriptBuilder
from live_trial.transcript.cases import CASES, check
from live_trial.transcript.cases_session import SESSION_CASES
from live_trial.transcript.reader import read_records
from live_trial.transcript.records import human_prompts, is_human_prompt, is_task_notification, prompt_text
from live_trial.transcript.status import BUSY_GENERATING, BUSY_TOOL, IDLE_TURN_COMPLETE, classify

REAL = Path(__file__).parents[1] / "transcripts"
SCREENS = Path(__file__).parents[1] / "screens"


@pytest.mark.parametrize("name", [c[0] for c in SESSION_CASES])
def test_every_session_case_is_in_the_self_test_and_passes(name):
    case = next(c for c in CASES if c.name == name)
    st, problems = check(case)
    assert problems == [], (st.state, st.reason, st.background, problems)


def _recs(name: str, upto: int | None = None) -> list[dict]:
    return read_records(REAL / name).records[:upto]


# ---------------------------------------------------------------- real transcripts (2.1.197, rehearsal server)

def test_ctrl_b_moves_a_running_command_to_the_background_and_the_session_waits():
    """Two Ctrl+B while a foreground Bash runs: the tool_result says "manually backgrounded", the turn ends."""
    recs = _recs("bg-shell-ctrl-b.jsonl")
    waiting = classify(recs[:12], {"status": "shell"})
    assert (waiting.state, waiting.background["kind"], waiting.background["shells"]) == (BUSY_TOOL, "shell", 1)
    task = waiting.background["tasks"][0]
    assert task["by_user"] is True and task["output_file"].endswith(f"/tasks/{task['task_id']}.output")
    assert classify(recs[:12]).state == BUSY_TOOL                       # the transcript alone says so too
    assert classify(recs[:15], {"status": "busy"}).state == BUSY_GENERATING   # the notification woke the model
    done = classify(recs, {"status": "idle"})
    assert (done.state, done.background, done.interrupted) == (IDLE_TURN_COMPLETE, None, False)
    assert [prompt_text(r) for r in human_prompts(recs)] == ["SCEN8 run a foreground job"]


def test_background_agent_waiting_then_stopped_by_task_stop():
    recs = _recs("bg-agent-task-stop.jsonl")
    waiting = classify(recs[:12], {"status": "busy"})
    assert (waiting.state, waiting.background["kind"]) == (BUSY_TOOL, "agent")
    assert waiting.background["tasks"][0]["output_file"].endswith(".output")
    assert classify(recs, {"status": "idle"}).state == IDLE_TURN_COMPLETE
    assert [prompt_text(r) for r in human_prompts(recs)] == ["SCEN9 go launch an agent", "SCEN9 stop the agent"]


def test_compact_while_a_background_shell_runs_keeps_the_turn_and_the_shell():
    recs = _recs("compact-while-bg-shell.jsonl")
    compacted = classify(recs[:24], {"status": "shell"})
    assert (compacted.state, compacted.background["kind"]) == (BUSY_TOOL, "shell")
    assert compacted.last_assistant_text == "Waiting for the job." and not compacted.interrupted
    assert classify(recs, {"status": "idle"}).state == IDLE_TURN_COMPLETE
    assert [prompt_text(r) for r in human_prompts(recs)] == ["SCEN10 start a background job"]
    summary = next(r for r in recs if r.get("isCompactSummary"))
    command = next(r for r in recs if prompt_text(r).startswith("<command-name>/compact"))
    assert not is_human_prompt(summary) and not is_human_prompt(command)


def test_clear_read_across_both_files_and_the_new_file_alone():
    before, after = _recs("clear-before.jsonl"), _recs("clear-after.jsonl")
    joined = classify(before + after[:5], {"status": "shell"})
    assert (joined.state, joined.last_assistant_text) == (BUSY_TOOL, "Shall I wait?")
    assert classify(after[:5], {"status": "idle"}).state == IDLE_TURN_COMPLETE     # /clear's file holds no prompt
    assert classify(before + after, {"status": "idle"}).state == IDLE_TURN_COMPLETE
    assert human_prompts(after) == []


# ---------------------------------------------------------------- what ends a task

def test_tasks_started_and_ended_by_each_signal():
    b = TranscriptBuilder()
    b.prompt()
    notified = b.background_shell(task_id="bnotified")
    stopped = b.background_shell(task_id="bstopped")
    polled = b.background_shell(task_id="bpolled")
    inturn = b.background_shell(task_id="binturn")
    agent = b.background_agent(agent_id="aagent")
    running = b.background_shell(task_id="brunning")
    b.notification_in_turn(inturn)
    b.tool_result(b.tool_use("TaskStop", {"task_id": stopped}), "ok", result={
        "message": f"Successfully stopped task: {stopped} (sleep)", "task_id": stopped, "task_type": "local_bash"})
    b.tool_result(b.tool_use("TaskOutput", {"task_id": polled}), "ok", result={
        "retrieval_status": "success", "task": {"task_id": polled, "status": "completed"}})
    b.text("waiting")
    b.turn_duration(pending_agents=1)
    b.task_notification(notified)
    left = bg.transcript_tasks(b.records)
    assert [(t.task_id, t.kind) for t in left] == [(agent, "agent"), (running, "shell")]
    assert left[1].output_file == b.output_path(running)
    b.task_notification(agent)
    assert [t.task_id for t in bg.transcript_tasks(b.records)] == [running]


def test_a_still_running_task_is_not_revived_by_its_start_written_after_its_end():
    b = TranscriptBuilder()
    b.prompt()
    task = b.background_shell(task_id="bx")
    notice = b.task_notification(task)
    records = [notice] + [r for r in b.records if r is not notice]
    assert bg.transcript_tasks(records) == []


def test_live_signals_cross_check_the_transcript():
    b = TranscriptBuilder()
    b.prompt()
    b.background_shell(task_id="bshell")
    assert bg.outstanding(b.records, cli_status="idle").ended_silently == ["bshell"]
    assert not bg.outstanding(b.records, cli_status="idle").running
    assert bg.outstanding([], cli_status="shell").shells == 1
    assert bg.outstanding([], screen={"shells": 2, "agents": 0}).shells == 2
    both = bg.outstanding(b.records, pending_agents=2)
    assert (both.shells, both.agents, both.kind) == (1, 2, "shell+agent")
    assert both.describe() == "1 background shell and 2 background agents still running"
    assert set(both.sources) == {"transcript", "turn_duration"}


# ---------------------------------------------------------------- records that are not prompts

@pytest.mark.parametrize("record", [
    {"type": "user", "message": {"role": "user", "content": "<command-name>/compact</command-name>\n  <command-message>compact"}},
    {"type": "user", "message": {"role": "user", "content": "<local-command-stdout>Compacted</local-command-stdout>"}},
    {"type": "user", "message": {"role": "user", "content": "This session is being continued"}, "isCompactSummary": True,
     "isVisibleInTranscriptOnly": True},
    {"type": "user", "message": {"role": "user", "content": "<task-notification>\n<task-id>b1</task-id>"},
     "origin": {"kind": "task-notification"}, "promptSource": "system"},
    {"type": "user", "message": {"role": "user", "content": "<task-notification>\n<task-id>b1</task-id>"}},
    {"type": "user", "message": {"role": "user", "content": "anything"}, "promptSource": "system"},
])
def test_records_that_are_never_a_human_prompt(record):
    assert not is_human_prompt(record)


def test_a_typed_and_a_queued_prompt_are_human_prompts_and_a_notification_is_a_notification():
    typed = {"type": "user", "message": {"role": "user", "content": "go"}, "origin": {"kind": "human"},
             "promptSource": "typed"}
    queued = {**typed, "promptSource": "queued"}
    notice = {"type": "user", "message": {"role": "user", "content": "<task-notification>x"},
              "origin": {"kind": "task-notification"}}
    assert is_human_prompt(typed) and is_human_prompt(queued) and not is_task_notification(typed)
    assert is_task_notification(notice) and not is_task_notification({**notice, "isSidechain": True})


# ---------------------------------------------------------------- the screen

@pytest.mark.parametrize("name,expected", [
    ("bg_shell_running.txt", {"shells": 1, "agents": 0}),            # footer "· 1 shell ·"
    ("bg_agent_waiting.txt", {"shells": 0, "agents": 1}),            # "✻ Waiting for 1 background agent to finish"
    ("bg_agent_done_stale_waiting.txt", {"shells": 0, "agents": 0}),  # an older Waiting line is history
    ("bg_shell_done_history.txt", {"shells": 0, "agents": 0}),       # "1 shell still running" higher up is history
    ("ready_no_dialog.txt", {"shells": 0, "agents": 0}),
])
def test_background_work_on_real_screens(name, expected):
    assert screen.background_work((SCREENS / name).read_text()) == expected


def test_background_work_is_read_for_state_while_the_footer_stays_masked_from_progress():
    running = (SCREENS / "bg_shell_running.txt").read_text()
    two = running.replace("· 1 shell ·", "· 2 shells ·")
    assert screen.background_work(two)["shells"] == 2
    assert screen.mask_volatile(running) == screen.mask_volatile(two)
    assert not screen.is_busy((SCREENS / "bg_agent_waiting.txt").read_text())


def test_status_self_test_counts_the_new_cases(capsys):
    from live_trial.cli.main import main

    assert main(["status", "--self-test", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "OK" and doc["cases"] == len(CASES) and len(CASES) >= 25 + len(SESSION_CASES)
