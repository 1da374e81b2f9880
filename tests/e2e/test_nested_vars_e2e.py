"""A trial started from inside a Claude Code session is still a fresh session: the variables each supported CLI gives
its Bash/hook/MCP children, and the ones it deletes itself before starting another claude, reach neither the trial's
claude (the pane process) nor the evaluator's ``claude -p`` (read from ``/proc/<pid>/environ``; the list is from the
2.1.197 bundle and the 2.1.332 binary, references/transcript-jsonl.md "Validator, nested variables and the doctor
probe")."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from live_trial.judge.evaluator import build_argv, run_process
from live_trial.rehearsal.config import rehearsal_env, seed_config
from live_trial.session.claude_bin import find_claude

from .session_support import PLAIN_SCENARIO, TrackingBackend, boot_rehearsal

pytestmark = pytest.mark.e2e

#: What a 2.1.332 Bash tool's ``env`` showed and its binary's strip lists name, with 2.1.197's.
INHERITED = (
    "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_EFFORT",
    "AI_AGENT", "CLAUDE_CODE_EXECPATH", "CLAUDE_CODE_CHILD_NOTES_DIR", "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN", "CLAUDE_CODE_SESSION_ATTENDED", "CLAUDE_PID", "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS",
    "CLAUDE_CODE_STARTER_MAY_HOLD_CONNECTOR_FILE", "CLAUDE_CODE_INVOKED_SKILLS", "TRACEPARENT",
)


def environ_names(pid: int) -> set[str]:
    return {e.split(b"=", 1)[0].decode() for e in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if e}


@pytest.fixture
def nested(monkeypatch):
    """The harness's own environment as a Bash tool of a Claude Code session has it."""
    for name in INHERITED:
        monkeypatch.setenv(name, "/tmp/lt-nested" if name.endswith("_DIR") else "1")
    monkeypatch.setenv("LT_NOT_NESTED", "kept")


@pytest.fixture
def backend():
    b = TrackingBackend()
    yield b
    b.cleanup()


@pytest.mark.budget(8)
def test_the_trials_claude_has_none_of_the_nested_session_variables(nested, backend, tmp_path):
    result, _, _ = boot_rehearsal(backend, tmp_path, "nested332")
    names = environ_names(result.pane_pid)
    assert names & set(INHERITED) == set() and "LT_NOT_NESTED" in names


@pytest.mark.budget(12)
def test_the_evaluators_claude_has_none_of_the_nested_session_variables(nested, tmp_path, rehearsal_server):
    srv = rehearsal_server(PLAIN_SCENARIO)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {**os.environ, **rehearsal_env(srv.url, seed_config(tmp_path / "config", [cwd]))}
    seen: dict[str, set[str]] = {}
    argv = build_argv(find_claude(None, env).path, {"type": "object"}, str(uuid.uuid4()))
    result = run_process(argv, "say ok", cwd, env, 60, on_start=lambda pid: seen.setdefault("names",
                                                                                           environ_names(pid)))
    assert not result.timed_out
    assert seen["names"] & set(INHERITED) == set() and "LT_NOT_NESTED" in seen["names"]
