"""boot on the real CLI in real tmux (seed 001 "boot"). No model traffic at boot."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from live_trial.errors import BootFail
from live_trial.session import dialogs, screen
from live_trial.session.claude_bin import find_claude
from live_trial.session.environment import NESTED_VARS

from .session_support import TrackingBackend, boot_rehearsal, session_name

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def backend():
    b = TrackingBackend()
    yield b
    b.cleanup()


@pytest.mark.budget(6)
def test_ready_after_bypass_dialog(backend, tmp_path):
    result, cwd, _ = boot_rehearsal(backend, tmp_path, "bypass")
    assert result.bypass_dialog_seen is True
    assert re.fullmatch(rf"READY: {result.session} \(\d+s\) MODEL:default SESSION_ID:[0-9a-f-]{{36}}",
                        result.ready_line())
    capture = backend.capture(result.session)
    assert screen.is_ready(capture) and not dialogs.bypass_dialog(capture)
    assert backend.pane_alive(result.session)
    assert "--dangerously-skip-permissions" in result.argv and "--setting-sources" in result.argv


@pytest.mark.budget(6)
def test_no_dialog_recorded_as_not_seen(backend, tmp_path):
    result, _, _ = boot_rehearsal(backend, tmp_path, "nodialog", skip_dialog=True)
    assert result.bypass_dialog_seen is False


@pytest.mark.budget(6)
def test_untrusted_folder_is_boot_fail_naming_trust_question_within_15s(backend, tmp_path):
    started = time.monotonic()
    with pytest.raises(BootFail) as exc:
        boot_rehearsal(backend, tmp_path, "untrusted", trust=False)
    assert time.monotonic() - started < 15
    assert "folder-trust question" in exc.value.message
    assert "Yes, I trust this folder" in exc.value.fix or "trust" in exc.value.fix
    assert any("trust" in line for line in exc.value.details["tail"])
    assert backend.list_sessions() == []          # the failed session was killed


@pytest.mark.budget(6)
@pytest.mark.parametrize("variant,named", [("api_key", "API-key approval"), ("onboarding", "onboarding screen")])
def test_other_blocking_screens_are_named_within_15s(backend, tmp_path, variant, named):
    import json

    from live_trial.rehearsal.config import rehearsal_env, seed_config
    from live_trial.session.boot import BootRequest, boot

    cwd = tmp_path / "cwd"
    cwd.mkdir()
    config = seed_config(tmp_path / "cfg", [cwd])
    env = rehearsal_env("http://127.0.0.1:9", config)
    if variant == "api_key":
        env["ANTHROPIC_API_KEY"] = "sk-ant-api03-not-approved-000000000000000000000000000000000000000ZZ"
    else:
        doc = json.loads((config / ".claude.json").read_text())
        doc.pop("hasCompletedOnboarding")
        (config / ".claude.json").write_text(json.dumps(doc))
    started = time.monotonic()
    with pytest.raises(BootFail) as exc:
        boot(BootRequest(session=session_name(variant.replace("_", "-")), cwd=cwd, env_overrides=env, rehearsal=True,
                         owner_pid=os.getpid(), timeout_s=90), backend)
    assert time.monotonic() - started < 15
    assert exc.value.details["screen"] == named and named in exc.value.message
    assert backend.list_sessions() == []


@pytest.mark.budget(6)
def test_cli_refusing_to_start_is_boot_fail_within_15s(backend, tmp_path):
    wrapper = tmp_path / "claude-bad-flag"
    wrapper.write_text(f"#!/bin/sh\nexec {find_claude().path} --no-such-flag \"$@\"\n")
    wrapper.chmod(0o755)
    started = time.monotonic()
    with pytest.raises(BootFail) as exc:
        boot_rehearsal(backend, tmp_path, "badflag", claude=str(wrapper))
    assert time.monotonic() - started < 15
    # tmux 3.3a sometimes reports no exit status for a process that dies this fast ("unknown"); the
    # pane's last line is what matters
    assert re.search(r"exited at start \(exit status (1|unknown)\)", exc.value.message)
    assert "unknown option '--no-such-flag'" in exc.value.message
    assert exc.value.code == "cli_refused_start"           # the CLI refused its arguments: BLOCKED, not the skill's
    assert backend.list_sessions() == []


@pytest.mark.budget(6)
def test_nested_session_variables_are_not_inherited(backend, tmp_path, monkeypatch):
    for name in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "CLAUDE_CODE_SESSION_ID"):
        monkeypatch.setenv(name, "1")
    result, _, _ = boot_rehearsal(backend, tmp_path, "nested")
    environ = Path(f"/proc/{result.pane_pid}/environ").read_bytes().split(b"\0")
    names = {e.split(b"=", 1)[0].decode() for e in environ if e}
    assert not names & set(NESTED_VARS) - {"TMUX", "TMUX_PANE"}
    assert b"IS_SANDBOX=1" in environ


@pytest.mark.budget(6)
def test_cli_boot_prints_ready_line_and_backend_verbs(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    name = session_name("cli")
    run = lambda *a: subprocess.run([sys.executable, "-m", "live_trial", *a], capture_output=True, text=True,
                                    cwd=ROOT, timeout=120)
    try:
        proc = run("boot", name, str(cwd), "--rehearsal-server", "http://127.0.0.1:9",
                   "--config-dir", str(tmp_path / "cfg"), "--owner-pid", str(os.getpid()))
        assert proc.returncode == 0, proc.stderr
        assert re.fullmatch(rf"READY: {name} \(\d+s\) MODEL:default SESSION_ID:[0-9a-f-]{{36}}\n", proc.stdout)
        assert proc.stderr.startswith(f"claude {find_claude().version} (")      # the version it used
        assert run("backend", "has-session", name).stdout.startswith("ALIVE:")
        assert "❯" in run("backend", "capture-pane", name).stdout
        assert run("backend", "list").stdout.startswith(name)
    finally:
        killed = run("backend", "kill-session", name)
    assert killed.returncode == 0 and killed.stdout.startswith("KILLED:")
    again = run("backend", "kill-session", name)
    assert again.returncode == 0 and again.stdout.startswith("GONE:")
    gone = run("backend", "has-session", name)
    assert gone.returncode == 1 and gone.stdout.startswith("GONE:")


@pytest.mark.budget(6)
def test_cli_boot_fail_prints_status_and_tail(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    from live_trial.rehearsal.config import seed_config

    seed_config(tmp_path / "cfg", [cwd], trust=False)
    proc = subprocess.run([sys.executable, "-m", "live_trial", "boot", session_name("clifail"), str(cwd),
                           "--rehearsal-server", "http://127.0.0.1:9", "--config-dir", str(tmp_path / "cfg")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    first, *rest = proc.stderr.splitlines()
    assert first.startswith("BOOT_FAIL: boot stopped at the folder-trust question")
    assert any("Yes, I trust this folder" in line for line in rest)
