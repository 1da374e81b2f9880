"""The classifier and poll on the real CLI in tmux, driven by the rehearsal server.

Each test boots claude against a scripted scenario, brings it into one state (slow stream, Bash sleep, pending
AskUserQuestion, pending ExitPlanMode in plan mode, Escape interrupt, killed CLI) and asserts what
``status.classify`` says there and what ``poll`` exits with. Waits are condition-based and generous (shared CPUs).
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from live_trial.policy import load_policy
from live_trial.session import screen, send
from live_trial.session.backend import Backend
from live_trial.session.rules import pid_alive
from live_trial.transcript.paths import locate, read_cli_session_status
from live_trial.transcript.reader import read_records, read_tail
from live_trial.transcript.records import human_prompts, prompt_text, record_time
from live_trial.transcript.status import (
    BUSY_GENERATING,
    BUSY_TOOL,
    GATE,
    IDLE_TURN_COMPLETE,
    classify,
    gate_from_screen,
)
from live_trial.trial.poll import poll
from live_trial.trial.poll_state import PollConfig

from .waiting import wait_for

WAIT_S = 120.0
# 90 s of silence: 2.1.332's Bash refuses a standalone `sleep N` with N >= 25 outside the background
SILENT_90S = "sleep 24; sleep 24; sleep 24; sleep 18"
MARKER_RE = r"{{re:Completion marker: *(/\S+/out/status\.json)}}"
ASK_INPUT = {"questions": [{"question": "Which colour should the greeting use?", "header": "Colour",
                            "multiSelect": False, "options": [{"label": "Red", "description": "warm"},
                                                              {"label": "Blue", "description": "cool"}]}]}


class Live:
    """One real claude session against a rehearsal scenario, with the harness's own readers."""

    def __init__(self, request, rehearsal_server, rehearsal_config, tmp_path: Path) -> None:
        self.request, self.rehearsal_server, self.rehearsal_config = request, rehearsal_server, rehearsal_config
        self.tmp = tmp_path
        self.cwd = tmp_path / "cwd"
        self.cwd.mkdir()
        self.marker = self.cwd / "out" / "status.json"
        self.state_file = tmp_path / "poll-state.json"
        self.backend = Backend()
        self.sid = str(uuid.uuid4())
        slug = request.node.name.lower().replace("_", "-")[-30:].strip("-")
        self.session = f"lt-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(2)}-{slug}"

    def start(self, scenario: dict, *, mode: str | None = None, fullscreen: bool = False) -> "Live":
        """Boot claude on ``scenario`` as boot does (``mode`` None), in another permission mode, or (``fullscreen``)
        forced into the fullscreen renderer that boot keeps away: a session as it would look if that ever showed."""
        from live_trial.rehearsal.config import rehearsal_env, settings_args
        from live_trial.session import boot
        from live_trial.session.claude_bin import find_claude
        from live_trial.session.environment import child_env

        self.server = self.rehearsal_server(scenario)
        self.config = self.rehearsal_config(self.cwd, skip_bypass_dialog=True)
        env = rehearsal_env(self.server.url, self.config)
        self.request.addfinalizer(lambda: self.backend.kill_session(self.session))
        if fullscreen:
            argv = [find_claude().path, "--session-id", self.sid, "--setting-sources", "local",
                    *settings_args(self.config), "--dangerously-skip-permissions"]
            child = child_env(os.environ, env, rehearsal=True)
            child.pop("CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN")
            child["CLAUDE_CODE_NO_FLICKER"] = "1"      # read by 2.1.197 and 2.1.332: fullscreen on
            self.backend.new_session(self.session, [str(a) for a in argv], cwd=self.cwd, env=child)
            wait_for(lambda: screen.is_ready(self.backend.capture(self.session)), what="fullscreen prompt")
        elif mode is None:
            boot.boot(boot.BootRequest(session=self.session, cwd=self.cwd, session_id=self.sid, env_overrides=env,
                                       rehearsal=True, timeout_s=WAIT_S, settings_args=settings_args(self.config)),
                      self.backend)
        else:   # boot builds bypass-mode argv only; plan / default mode need --permission-mode
            argv = [find_claude().path, "--session-id", self.sid, "--setting-sources", "local",
                    "--permission-mode", mode]
            self.backend.new_session(self.session, [str(a) for a in argv], cwd=self.cwd,
                                     env=child_env(os.environ, env, rehearsal=True))
            wait_for(lambda: screen.is_ready(self.backend.capture(self.session)), what=f"{mode}-mode prompt")
        self.tpath = locate(self.sid, self.cwd, self.config)
        return self

    def send(self, text: str) -> None:
        """Deliver ``text`` the way the harness does (file → named buffer → paste → Enter, one more Enter when it
        stays in the input box) and confirm it is the newest prompt of the transcript."""
        task = self.tmp / f"task-{secrets.token_hex(3)}.md"
        task.write_text(text)
        send.send_file(self.backend, self.session, task, transcript_path=locate(self.sid, self.cwd, self.config))
        self.tpath = locate(self.sid, self.cwd, self.config)

    def task(self, body: str = "Run the task.") -> None:
        self.send(f"{body}\nCompletion marker: {self.marker}\n")

    def status(self):
        """classify() exactly as poll feeds it: the transcript tail and the CLI status of a live pid."""
        pid = self.backend.pane_pid(self.session)
        cli = read_cli_session_status(self.config, pid) if pid and pid_alive(pid) else None
        return classify(read_tail(self.tpath).records, cli)

    def observed(self):
        """The status as a trial's poll observes it: :meth:`status` completed by a gate dialog on screen
        (``trial/observation.py``), and the screen's dialog."""
        st, box = self.status(), screen.dialog(self.backend.capture(self.session))
        if box is not None:
            st = gate_from_screen(st, box.kind, box.question, [o.label for o in box.options])
        return st, box

    def assert_clean_read(self) -> None:
        """The real CLI's transcript holds only record types the reader knows, and no malformed line."""
        res = read_records(self.tpath)
        assert res.records and res.skipped_unknown == 0 and res.skipped_malformed == 0, \
            (res.skipped_unknown, res.skipped_malformed, res.first_error)

    def wait_state(self, state: str, what: str = "", **fields):
        def check():
            st = self.status()
            return st if st.state == state and all(getattr(st, k) == v for k, v in fields.items()) else None
        return wait_for(check, what=what or f"state {state} {fields}", seen=self.seen)

    def seen(self) -> str:
        """What a failed wait reports: the classifier's answer, the newest records and the screen tail."""
        recs = read_tail(self.tpath).records if self.tpath.exists() else []
        heads = [f"{r.get('type')}/{r.get('subtype') or ''} {str(r.get('message', {}).get('content'))[:100]}"
                 for r in recs[-6:]]
        return (f"status: {self.status() if recs else None}\nlast records:\n" + "\n".join(heads)
                + "\nscreen tail:\n" + "\n".join(screen.tail(self.backend.capture(self.session), 15)))

    def escape_until(self, state: str, attempts: int = 4, per_attempt_s: float = 20.0):
        """Press Escape until the classifier reports ``state`` (under load a lone Escape was sometimes not
        taken by the CLI); the screens seen after a missed Escape are printed for the failure report."""
        for attempt in range(attempts):
            self.backend.send_keys(self.session, "Escape")
            deadline = time.monotonic() + per_attempt_s
            while time.monotonic() < deadline:
                st = self.status()
                if st.state == state:
                    return st
                time.sleep(0.2)
            from live_trial.session import proctree

            tree = [(p.pid, Path(f"/proc/{p.pid}/cmdline").read_bytes().replace(b"\0", b" ")[:60])
                    for p in proctree.descendants(self.backend.pane_pid(self.session)) if proctree.alive(p)]
            print(f"Escape #{attempt + 1} not taken; the classifier said {st!r}; processes under the pane: {tree}; "
                  "screen tail:\n" + "\n".join(screen.tail(self.backend.capture(self.session))))
        pytest.fail(f"{attempts} Escape presses did not reach {state}")

    def poll(self, *, max_ticks=None, **policy):
        pol = load_policy({}).with_overrides(**{"stall_limit_s": WAIT_S, "hard_cap_s": 600, **policy})
        cfg = PollConfig(marker=self.marker, session=self.session, session_id=self.sid, cwd=self.cwd,
                         config_dir=self.config, state_file=self.state_file, policy=pol, max_ticks=max_ticks)
        return poll(cfg, self.backend)


@pytest.fixture
def live(request, rehearsal_server, rehearsal_config, tmp_path):
    return Live(request, rehearsal_server, rehearsal_config, tmp_path)


@pytest.mark.budget(18)
def test_slow_stream_is_busy_generating_then_poll_done(live):
    live.start({"side_query_text": "Slow", "rules": [
        {"id": "slow", "when": {"step": 0}, "reply": {
            "content": [{"text": "Streaming slowly. " * 30},
                        {"tool_use": {"name": "Write", "input": {"file_path": MARKER_RE, "content": "{}\n"}}}],
            "chunk_delay_s": 0.12, "chunk_chars": 12}},
        {"id": "done", "when": {"step": 1}, "reply": {"content": [{"text": "DONE: ok"}]}}]})
    live.task()
    st = live.status()
    assert st.state == BUSY_GENERATING, st       # nothing is written while the message streams
    assert wait_for(lambda: screen.is_busy(live.backend.capture(live.session)), what="spinner")
    r = live.poll()
    assert (r.exit, r.code, r.state) == ("DONE", 0, IDLE_TURN_COMPLETE), r
    assert live.marker.exists() and live.status().state == IDLE_TURN_COMPLETE
    live.assert_clean_read()
    # the CLI: session id, cwd and config dir come from what boot stored on the session
    env = {k: v for k, v in os.environ.items() if k != "SESSION_ID"}
    out = subprocess.run([sys.executable, "-m", "live_trial", "poll", "--state-file", str(live.tmp / "cli-state.json"),
                          str(live.marker), live.session], capture_output=True, text=True, env=env, timeout=WAIT_S)
    assert out.returncode == 0 and out.stdout.startswith("DONE: ") and "state: IDLE_TURN_COMPLETE" in out.stdout, out
    out = subprocess.run([sys.executable, "-m", "live_trial", "status", "--session-id", live.sid,
                          "--cwd", str(live.cwd), "--config-dir", str(live.config)], capture_output=True, text=True, timeout=WAIT_S)
    assert out.returncode == 0 and out.stdout.startswith("IDLE_TURN_COMPLETE: "), out


@pytest.mark.budget(16)
def test_bash_sleep_is_busy_tool_and_a_silent_tool_stalls(live):
    live.start({"side_query_text": "Sleep", "rules": [
        {"id": "sleep", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "Bash", "input": {"command": SILENT_90S, "description": "sleep"}}}]}},
        {"id": "done", "when": {"step": 1}, "reply": {"content": [{"text": "DONE: ok"}]}}]})
    live.task()
    st = live.wait_state(BUSY_TOOL, pending_tool="Bash")
    assert st.session_status == "busy"
    r = live.poll(stall_limit_s=4)          # the spinner, "Running… (Ns)" and token counts are masked
    assert (r.exit, r.code, r.state) == ("STALL", 2, BUSY_TOOL), r
    assert r.reason.startswith("no progress"), r


@pytest.mark.budget(16)
def test_a_silent_tool_in_the_fullscreen_renderer_stalls(live):
    """Fullscreen (2.1.332's default for a fresh config) draws a running tool as ``● <description> · 5s`` /
    ``⎿  $ cmd (5s)``, its clock ticking each second: masked, so a hung tool still STALLs."""
    live.start({"side_query_text": "Sleep", "rules": [
        {"id": "sleep", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "Bash", "input": {"command": SILENT_90S, "description": "Wait in silence"}}}]}},
        {"id": "done", "when": {"step": 1}, "reply": {"content": [{"text": "DONE: ok"}]}}]}, fullscreen=True)
    assert live.backend.alternate_screen(live.session) is True
    live.task()
    live.wait_state(BUSY_TOOL, pending_tool="Bash")
    wait_for(lambda: screen.tool_running(live.backend.capture(live.session)), what="the running tool on screen")
    r = live.poll(stall_limit_s=4)
    assert (r.exit, r.code, r.state) == ("STALL", 2, BUSY_TOOL), r
    assert r.reason.startswith("no progress"), r


@pytest.mark.budget(8)
def test_an_answer_given_the_moment_the_question_shows_is_taken(live):
    """2.1.332 drops the Enter pressed in a dialog's first ~0.3 s; answer_gate presses again when the dialog did not
    take it, so an answer given at once still answers (2.1.197 takes it the first time)."""
    live.start({"side_query_text": "Ask", "rules": [
        {"id": "ask", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "AskUserQuestion", "input": ASK_INPUT}}]}},
        {"id": "done", "when": {"step": 1}, "reply": {"content": [{"text": "DONE: ok"}]}}]})
    live.task()

    def shown():
        box = screen.dialog(live.backend.capture(live.session))
        return box if box and box.kind == "ask_user_question" else None

    wait_for(shown, what="the question dialog", interval_s=0.01)
    answer = send.answer_gate(live.backend, live.session, "Red")
    assert answer.label == "Red" and answer.keys[-1] == "Enter"
    results = lambda: [r for r in read_tail(live.tpath).records if r.get("type") == "user"
                       and "toolUseResult" in r and "answers" in (r.get("toolUseResult") or {})]
    got = wait_for(lambda: results() or None, what="the AskUserQuestion answer in the transcript")
    assert "Red" in str(got[-1]["toolUseResult"]["answers"])


@pytest.mark.budget(6)
def test_pending_ask_user_question_is_gate_then_answer_then_done(live):
    live.start({"side_query_text": "Ask", "rules": [
        {"id": "ask", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "AskUserQuestion", "input": ASK_INPUT}}]}},
        {"id": "write", "when": {"step": 1}, "reply": {"content": [
            {"tool_use": {"name": "Write", "input": {"file_path": MARKER_RE, "content": "{}\n"}}}]}},
        {"id": "done", "when": {"step": 2}, "reply": {"content": [{"text": "DONE: ok"}]}}]})
    live.task()
    st = live.wait_state(GATE)
    if st.pending_tool:          # the record may come after the dialog (seen under load): then the screen tells
        assert st.pending_tool == "AskUserQuestion" and st.question == "Which colour should the greeting use?"
        assert st.options == ["Red", "Blue"]
    r = live.poll()
    assert (r.exit, r.code, r.reason, r.question) == ("GATE", 4, "ask_user_question",
                                                      "Which colour should the greeting use?"), r
    assert r.status.options == ["Red", "Blue"], r.status
    box = wait_for(lambda: screen.dialog(live.backend.capture(live.session)), what="the question dialog")
    assert box.selected is not None, box
    # as the harness answers: an Enter the dialog drops in its first ~0.3 s (2.1.332) is pressed again
    send.answer_gate(live.backend, live.session, box.selected.label)
    r = live.poll()                          # same state file: the answered gate is not reported again
    assert (r.exit, r.code) == ("DONE", 0), r
    live.assert_clean_read()


@pytest.mark.budget(6)
def test_pending_exit_plan_mode_in_plan_mode_is_gate(live):
    live.start({"side_query_text": "Plan", "rules": [
        {"id": "plan-file", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "Write", "input": {"file_path": "{{re:(/\\S+/plans/[A-Za-z0-9._-]+\\.md)}}",
                                                     "content": "# Plan\n\n1. Write the greeting.\n"}}}]}},
        {"id": "exit-plan", "when": {"step": 1}, "reply": {"content": [
            {"tool_use": {"name": "ExitPlanMode", "input": {}}}]}},
        {"id": "after", "when": {"step": 2}, "reply": {"content": [{"text": "DONE: ok"}]}}]}, mode="plan")
    live.task("Plan the greeting.")
    # the tool_use record and the CLI's "waiting" status come in either order (under load the status first, and the
    # turn is GATE from the status alone: status.py); under load the record may not come for 90 s or more, both on
    # 2.1.197 and on 2.1.332 (references/transcript-jsonl.md), and poll then reads the dialog from the screen
    def plan_gate():
        st = live.status()
        if st.state != GATE or st.session_status != "waiting":
            return None
        box = screen.dialog(live.backend.capture(live.session))
        on_screen = box is not None and box.kind == "exit_plan_mode"
        return st if st.pending_tool == "ExitPlanMode" or on_screen else None
    st = wait_for(plan_gate, what="ExitPlanMode gate with the CLI waiting", seen=live.seen)
    if st.pending_tool is not None:
        assert st.pending_tool == "ExitPlanMode" and st.gate_kind == "exit_plan_mode" and st.question
    r = live.poll()
    assert r.question, r
    assert (r.exit, r.code, r.reason) == ("GATE", 4, "exit_plan_mode"), r
    live.assert_clean_read()


@pytest.mark.budget(10)
def test_escape_interrupt_is_idle_interrupted(live):
    live.start({"side_query_text": "Esc", "rules": [
        {"id": "slow", "when": {"step": 0}, "reply": {"content": [{"text": "word " * 400}],
                                                      "chunk_delay_s": 0.3, "chunk_chars": 40}}]})
    live.task()
    # streamed text on screen ("● word …"; the footer's "● high · /effort" does not count)
    wait_for(lambda: "● word" in live.backend.capture(live.session), what="streamed text on screen")
    assert live.status().state == BUSY_GENERATING
    st = live.escape_until(IDLE_TURN_COMPLETE)
    assert st.interrupted is True and st.api_error is None
    r = live.poll(max_ticks=4)               # no marker: never DONE; the state is what the STALL table reads
    assert (r.exit, r.code, r.state) == ("TICK_BUDGET", 5, IDLE_TURN_COMPLETE), r
    live.assert_clean_read()


@pytest.mark.budget(6)
def test_killed_cli_is_frozen_busy_and_poll_says_session_gone(live):
    live.start({"side_query_text": "Hang", "rules": [
        {"id": "hang", "when": {"step": 0}, "reply": {"content": [{"text": "partial answer that never ends"}],
                                                      "hang": True}}]})
    live.task()
    pid = live.backend.pane_pid(live.session)
    wait_for(lambda: (read_cli_session_status(live.config, pid) or {}).get("status") == "busy",
             what="sessions/<pid>.json busy")
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not live.backend.pane_alive(live.session), what="dead pane")
    stale = read_cli_session_status(live.config, pid)
    assert stale and stale.get("status") == "busy"                # stale file: only a live pid may be trusted
    st = live.status()
    assert st.state == BUSY_GENERATING and st.session_status is None
    r = live.poll()
    assert (r.exit, r.code, r.reason, r.ticks) == ("STALL", 2, "session_gone", 1), r


@pytest.mark.budget(6)
def test_escape_during_a_tool_is_idle_interrupted(live):
    live.start({"side_query_text": "EscTool", "rules": [
        {"id": "sleep", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "Bash", "input": {"command": SILENT_90S, "description": "sleep"}}}]}}]})
    live.task()
    live.wait_state(BUSY_TOOL, pending_tool="Bash")
    wait_for(lambda: screen.tool_running(live.backend.capture(live.session)), what="the running tool on screen")
    st = live.escape_until(IDLE_TURN_COMPLETE)
    assert st.interrupted is True and st.pending_tool is None
    live.assert_clean_read()


@pytest.mark.budget(6)
def test_permission_prompt_in_default_mode_is_gate(live):
    live.start({"side_query_text": "Perm", "rules": [
        {"id": "bash", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "Bash", "input": {"command": "touch perm-probe.txt", "description": "probe"}}}]}},
        {"id": "done", "when": {"step": 1}, "reply": {"content": [{"text": "DONE: ok"}]}}]}, mode="default")
    live.task()
    # the CLI's status says "waiting" and its dialog is drawn before its tool_use record reaches the transcript (on
    # 2.1.197 under load the record came seconds later, once not within 90 s): a trial's poll reads the gate's kind
    # from the screen then, so the gate is a permission gate whether or not the record came
    def permission_gate():
        st, box = live.observed()
        drawn = box is not None and box.kind == "permission"
        return (st, box) if drawn and st.state == GATE and st.gate_kind == "permission" else None
    st, box = wait_for(permission_gate, what="permission gate (CLI waiting, its dialog drawn)", seen=live.seen)
    assert st.session_status == "waiting", st
    assert any("touch perm-probe.txt" in ln for ln in live.backend.capture(live.session).splitlines())
    r = live.poll()
    assert (r.exit, r.code, r.reason) == ("GATE", 4, "permission"), r
    # once written, the record names the tool and its command (2.1.197 under load once held it past 90 s: that wait
    # may end without it, and the gate above stood without it)
    def recorded():
        now = live.status()
        return now if now.pending_tool is not None else None
    late = wait_for(recorded, what="the permission gate's tool_use record", timeout_s=30, required=False)
    if late is not None:
        assert (late.state, late.gate_kind, late.question) == (GATE, "permission",
                                                               "Permission for Bash: touch perm-probe.txt"), late


@pytest.mark.budget(12)
def test_queued_prompt_records_and_state(live):
    live.start({"side_query_text": "Queue", "rules": [
        {"id": "first", "when": {"human_turn": 1, "step": 0}, "reply": {
            "content": [{"text": "First answer, streamed slowly. " * 12}], "chunk_delay_s": 0.2, "chunk_chars": 12}},
        {"id": "second", "when": {"step": 0}, "reply": {"content": [{"text": "Second answer."}]}}]})
    live.task("First task.")
    wait_for(lambda: screen.is_busy(live.backend.capture(live.session)), what="spinner")
    live.send("Second task, typed while busy.")          # waits until the queued prompt is in the transcript
    st = live.wait_state(IDLE_TURN_COMPLETE, what="both turns done")
    assert st.queued_prompts == 0
    records = read_records(live.tpath).records
    ops = [r.get("operation") for r in records if r.get("type") == "queue-operation"]
    assert "enqueue" in ops and "dequeue" in ops, ops
    queued = [r for r in human_prompts(records) if r.get("promptSource") == "queued"]
    assert queued, "the second prompt is recorded with promptSource queued"
    # cut the real transcript just before the dequeue: the first turn is over but a prompt still waits
    cut = [r for r in records if not (r.get("type") == "queue-operation" and r.get("operation") == "dequeue")]
    cut = [r for r in cut if (record_time(r) or 0) < (record_time(queued[0]) or 0)
           or r.get("type") == "queue-operation"]
    before = classify(cut)
    assert before.state == BUSY_GENERATING and before.queued_prompts >= 1, before
    live.assert_clean_read()


@pytest.mark.budget(10)
def test_stop_hook_continuation_is_not_done_early(live):
    """Self-driving via a Stop hook: the marker is written in the first part, the hook blocks once (2 s) and the
    model continues. While the hook runs the turn is not over (no turn_duration, CLI busy): no DONE before it."""
    flag, hook = live.tmp / "hook-fired", live.tmp / "stop-hook.sh"
    hook.write_text(f"#!/bin/sh\ncat > /dev/null\nsleep 2\nif [ ! -e {flag} ]; then touch {flag}; "
                    "echo '{\"decision\":\"block\",\"reason\":\"HOOKSAYS continue and finish\"}'; fi\nexit 0\n")
    hook.chmod(0o755)
    (live.cwd / ".claude").mkdir()
    (live.cwd / ".claude" / "settings.local.json").write_text(
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "%s"}]}]}}' % hook)
    live.start({"side_query_text": "Hook", "rules": [
        {"id": "continue", "when": {"step": 0, "last_prompt": "HOOKSAYS"},
         "reply": {"content": [{"text": "DONE: ok"}]}},
        {"id": "write", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "Write", "input": {"file_path": MARKER_RE, "content": "{}\n"}}}]}},
        {"id": "first", "when": {"step": 1}, "reply": {"content": [{"text": "first part done"}]}}]})
    live.task()

    def during_hook():
        recs = read_tail(live.tpath).records
        texts = [prompt_text(r) for r in recs if r.get("type") == "assistant"]
        return "first part done" in texts and "DONE: ok" not in texts and live.status()
    st = wait_for(during_hook, what="the first part's end_turn while the Stop hook runs")
    assert live.marker.exists() and st.state == BUSY_GENERATING and st.session_status == "busy", st
    r = live.poll()
    assert (r.exit, r.code) == ("DONE", 0), r
    records = read_records(live.tpath).records
    assert any(r.get("subtype") == "stop_hook_summary" for r in records)
    assert r.status.last_assistant_text == "DONE: ok" and "turn_duration" in r.status.reason, r.status
    live.assert_clean_read()


@pytest.mark.budget(6)
def test_escape_before_the_first_token_is_idle_by_the_live_cli_status(live):
    """Re-checked on 2.1.197: Esc before any token writes no interrupt record; the transcript ends at the prompt
    (it would read BUSY_GENERATING forever) and only the live CLI status (idle) tells the turn is over."""
    live.start({"side_query_text": "EscEarly", "rules": [
        {"id": "late", "when": {"step": 0}, "reply": {"content": [{"text": "too late"}], "delay_s": 60}}]})
    live.task()
    wait_for(lambda: screen.is_busy(live.backend.capture(live.session)), what="spinner")
    st = live.escape_until(IDLE_TURN_COMPLETE)
    assert st.interrupted is True and st.session_status == "idle", st
    records = read_records(live.tpath).records
    assert not any(r.get("type") == "assistant" for r in records)
    assert classify(records).state == BUSY_GENERATING      # without the CLI status the file alone looks busy
    r = live.poll(max_ticks=4)
    assert (r.exit, r.state) == ("TICK_BUDGET", IDLE_TURN_COMPLETE), r
