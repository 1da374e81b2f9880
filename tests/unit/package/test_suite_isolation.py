"""The suite's own isolation (README "Tests"): whatever the caller's environment says, this process runs on a tmux
socket, a claude config folder and a pid log of its own."""
from __future__ import annotations

import os
from pathlib import Path

import conftest


def test_this_process_has_its_own_socket_config_and_pid_log():
    socket = os.environ["LIVE_TRIAL_SOCKET"]
    assert socket.startswith(f"lt-test-{os.getpid()}-")
    assert socket != conftest._STATE["user_socket"]
    own = Path(conftest._STATE["own"])
    assert Path(os.environ["CLAUDE_CONFIG_DIR"]).parent == own
    assert Path(os.environ["LIVE_TRIAL_PID_LOG"]).parent == own
    assert Path(os.environ["LIVE_TRIAL_CACHE_DIR"]).parent == own
    assert os.environ["CLAUDE_CONFIG_DIR"] != conftest._STATE["user_config_dir"]


def test_an_e2e_test_without_a_budget_fails(pytester):
    pytester.makeconftest((Path(conftest.__file__)).read_text())
    pytester.makepyfile(**{"tests/e2e/test_nobudget.py": "def test_x():\n    pass\n"})
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist")   # its set-up changes os.environ
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*needs @pytest.mark.budget(seconds)*"])


def _browser_test_without_chromium(pytester, monkeypatch, *, required: bool):
    """A ``browser`` test on a machine whose PATH has no chromium nor chromedriver."""
    pytester.makeconftest((Path(conftest.__file__)).read_text())
    pytester.makepyfile(**{"tests/unit/test_page.py": "import pytest\n\n@pytest.mark.browser\n"
                                                      "def test_page():\n    pass\n"})
    monkeypatch.setenv("PATH", str(pytester.path))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("LIVE_TRIAL_REQUIRE_E2E", raising=False)
    if required:
        monkeypatch.setenv("LIVE_TRIAL_REQUIRE_E2E", "1")
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-rs")


def test_a_browser_test_is_skipped_with_the_reason_when_chromium_is_missing(pytester, monkeypatch):
    result = _browser_test_without_chromium(pytester, monkeypatch, required=False)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*browser needs chromium (install: apt-get install chromium*"])


def test_a_browser_test_fails_when_required_and_chromium_is_missing(pytester, monkeypatch):
    result = _browser_test_without_chromium(pytester, monkeypatch, required=True)
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*browser tests are required here*chromedriver*chromium-driver*"])


def test_the_leftover_check_names_a_live_process_it_started_and_not_one_that_reuses_its_pid(tmp_path, monkeypatch):
    """Pids wrap on a busy machine (pid_max 32768): a logged pid counts only with the start time it was logged with."""
    import subprocess

    from live_trial.session.rules import proc_start_ticks

    child = subprocess.Popen(["sleep", "30"])
    try:
        log = tmp_path / "pids.log"
        start = proc_start_ticks(child.pid)
        monkeypatch.setitem(conftest._STATE, "pid_log", log)
        monkeypatch.setitem(conftest._STATE, "socket", None)
        log.write_text(f"{child.pid} {start}\n")
        found = conftest._leftovers()
        assert len(found) == 1 and found[0].startswith(f"process {child.pid} started by a trial ("), found
        log.write_text(f"{child.pid} {int(start) - 1}\n{child.pid} -\n")        # the same pid, another process
        assert conftest._leftovers() == []
    finally:
        child.kill()
        child.wait()


def test_the_suite_runs_its_sessions_in_an_empty_home_of_its_own():
    """A session's shell reads no start-up file of the person running the tests (their ~/.bashrc)."""
    home = Path(os.environ["HOME"])
    assert home != Path(conftest._STATE["user_home"] or "/nonexistent")
    assert home.is_dir() and not (home / ".bashrc").exists()
