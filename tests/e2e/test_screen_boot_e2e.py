"""Boot and the screen on the real CLI (2.1.197 and 2.1.332, pick one with LIVE_TRIAL_CLAUDE_BIN): a fresh config
keeps the classic renderer (scrollback, the background-agent line read right), and a screen the harness does not
know at start ends the trial BLOCKED, never a FAIL of the skill."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from live_trial.session import screen, send
from live_trial.session.claude_bin import find_claude

from .run_support import PLUGINS, SCENARIOS, run_cmd, workdirs
from .session_support import TrackingBackend, boot_rehearsal
from .waiting import wait_for

LONG = "\n\n".join(f"Line {i} of the long answer." for i in range(1, 121))
SCENARIO = {"name": "screen", "side_query_text": "Screen", "rules": [
    {"id": "sub-report", "when": {"subagent": True, "step": 3}, "reply": {"content": [{"text": "SUBRESULT: built"}]}},
    {"id": "sub-step", "when": {"subagent": True}, "reply": {"content": [
        {"tool_use": {"name": "Bash", "input": {"command": "sleep 3; echo step done", "description": "One step"}}}]}},
    {"id": "agent", "when": {"step": 0, "last_prompt": "AGENT"}, "reply": {"content": [
        {"tool_use": {"name": "Agent", "input": {"description": "Build probe", "prompt": "SUBTASK: build",
                                                 "subagent_type": "general-purpose", "run_in_background": True}}}]}},
    {"id": "agent-wait", "when": {"step": 1, "last_prompt": "AGENT"},
     "reply": {"content": [{"text": "The agent works in the background."}]}},
    {"id": "long", "when": {"last_prompt": "LONG"}, "reply": {"content": [{"text": LONG}]}},
    {"id": "other", "when": {}, "reply": {"content": [{"text": "ok"}]}}]}


@pytest.fixture
def backend():
    b = TrackingBackend()
    yield b
    b.cleanup()


def _say(backend, session: str, tmp: Path, text: str, transcript: Path) -> None:
    task = tmp / f"say-{time.monotonic_ns()}.md"
    task.write_text(text + "\n", encoding="utf-8")
    send.send_file(backend, session, task, transcript_path=transcript)


@pytest.mark.budget(20)
def test_a_fresh_config_keeps_scrollback_and_the_background_agent_line(backend, tmp_path, rehearsal_server):
    """2.1.332 starts a fresh config in its fullscreen renderer (no scrollback, ``◐ medium · /effort`` above the
    input box); boot keeps the classic one, so a 120-line answer stays in the capture with scrollback and the
    ``Waiting for 1 background agent`` line is read."""
    from live_trial.transcript.paths import locate

    server = rehearsal_server(SCENARIO)
    result, cwd, config = boot_rehearsal(backend, tmp_path, "fresh", server.url)
    assert backend.alternate_screen(result.session) is False
    transcript = locate(result.session_id, cwd, config)
    _say(backend, result.session, tmp_path, "LONG", transcript)
    wait_for(lambda: "Line 120 of the long answer." in backend.capture(result.session)
             and screen.is_ready(backend.capture(result.session)), what="the long answer, then the prompt")
    full = backend.capture(result.session, scrollback=True)
    assert full.count(" of the long answer.") == 120 and len(full.splitlines()) > 100
    _say(backend, result.session, tmp_path, "AGENT", transcript)
    got = wait_for(lambda: screen.background_work(backend.capture(result.session))["agents"] or None,
                   what="the background agent on screen", timeout_s=30)
    assert got == 1


FAKE_DIALOG = ("\n  Choose how to continue\n\n  A new screen this harness has never seen.\n\n  \u276f Keep going\n"
               "    Stop here\n\n  Enter to confirm \u00b7 Esc to cancel\n")


@pytest.mark.budget(25)
def test_an_unknown_dialog_at_start_blocks_the_trial_and_names_the_screen(tmp_path):
    """A CLI that draws a dialog the harness has no answer for: BLOCKED (exit 3, ``unknown_screen``), the screen named
    by its first lines with the advice to run ``live-trial doctor --cli``; nothing pressed, never a FAIL."""
    real = find_claude().path
    dialog = tmp_path / "dialog.txt"
    dialog.write_text(FAKE_DIALOG, encoding="utf-8")
    wrapper = tmp_path / "claude-new-screen"
    wrapper.write_text("#!/bin/sh\n"
                       f'case "$1" in --version|-v|plugin|-p|--print) exec {real} "$@";; esac\n'
                       f"cat {dialog}\nexec sleep 120\n")
    wrapper.chmod(0o755)
    started = time.monotonic()
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                   str(SCENARIOS / "mark-happy.yaml"), "--claude-bin", str(wrapper), "--hard-cap", "90")
    took = time.monotonic() - started
    assert proc.returncode == 3, proc.stderr[-3000:]
    doc = json.loads((workdirs(tmp_path)[0] / "verdict.json").read_text())
    assert (doc["stop_reason"], doc["overall"]["verdict"], doc["blocked"]) == ("unknown_screen", "BLOCKED", True)
    assert doc["overall"]["reasons"][0].startswith("blocked: the CLI showed a screen at start the harness does not")
    note = next(n for n in doc["notes"] if "does not know" in n)
    assert "Choose how to continue" in note and "Keep going" not in note.split("|")[0]
    assert f"live-trial doctor --cli {wrapper}" in note and note.count("doctor") == 1   # the CLI it met, once
    assert took < 60, took          # named within seconds, not at the boot timeout
