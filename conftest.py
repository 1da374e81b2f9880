"""Project-wide pytest set-up.

- Tests under ``tests/e2e`` are marked ``e2e``. They need tmux and the real ``claude``. Outside CI a
  missing tool skips them with a reason that says how to install it; with ``CI=true`` or
  ``LIVE_TRIAL_REQUIRE_E2E=1`` a missing tool is a failure, never a skip.
- Every test session gets its own tmux socket (env ``LIVE_TRIAL_SOCKET``) and a pid log (env
  ``LIVE_TRIAL_PID_LOG``) where the backend records each pane process it starts. At the end the
  suite fails when an ``lt-*`` session or a recorded claude process is still there.
- The number of e2e tests that ran (passed or failed, not skipped) is printed as
  ``e2e tests run: N`` and written to ``LIVE_TRIAL_E2E_COUNT_FILE`` when that is set.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent
_E2E_RAN: set[str] = set()
_STATE: dict = {}


def _require_e2e() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("LIVE_TRIAL_REQUIRE_E2E") == "1"


def _missing_tools() -> list[str]:
    missing = []
    if not shutil.which("tmux"):
        missing.append("tmux (install: apt-get install tmux, or `make setup`)")
    try:
        from live_trial.session.claude_bin import find_claude
        find_claude()
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable"
        missing.append(f"claude ({exc}; install: `make setup`)")
    return missing


def pytest_configure(config):
    os.environ.setdefault("LIVE_TRIAL_SOCKET", f"lt-test-{os.getpid()}")
    pid_log = Path(tempfile.gettempdir()) / f"live-trial-pids-{os.getpid()}.log"
    os.environ.setdefault("LIVE_TRIAL_PID_LOG", str(pid_log))
    _STATE["socket"] = os.environ["LIVE_TRIAL_SOCKET"]
    _STATE["pid_log"] = Path(os.environ["LIVE_TRIAL_PID_LOG"])


def pytest_collection_modifyitems(config, items):
    e2e_items = []
    for item in items:
        if "tests/e2e" in str(item.fspath).replace(os.sep, "/") or "benchmarks" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)
        if item.get_closest_marker("e2e"):
            e2e_items.append(item)
    if not e2e_items:
        return
    missing = _missing_tools()
    if not missing:
        return
    if _require_e2e():
        raise pytest.UsageError("e2e tests are required here (CI=true or LIVE_TRIAL_REQUIRE_E2E=1) but missing: "
                                + "; ".join(missing))
    skip = pytest.mark.skip(reason="e2e needs " + "; ".join(missing))
    for item in e2e_items:
        item.add_marker(skip)


def pytest_runtest_logreport(report):
    if report.when == "call" and "e2e" in report.keywords and not report.skipped:
        _E2E_RAN.add(report.nodeid)
    if report.when == "setup" and report.failed and "e2e" in report.keywords:
        _E2E_RAN.add(report.nodeid)


def _leftovers() -> list[str]:
    found = []
    socket = _STATE.get("socket")
    if socket and shutil.which("tmux"):
        proc = subprocess.run(["tmux", "-L", socket, "list-sessions", "-F", "#{session_name}"],
                              capture_output=True, text=True)
        found += [f"tmux session {s} on socket {socket}" for s in proc.stdout.split() if s.startswith("lt-")]
    pid_log = _STATE.get("pid_log")
    if pid_log and pid_log.exists():
        for line in pid_log.read_text().split():
            if line.isdigit() and Path(f"/proc/{line}").exists():
                try:
                    state = Path(f"/proc/{line}/stat").read_text().split()[2]
                except OSError:
                    continue
                if state != "Z":
                    found.append(f"process {line} started by a trial")
    return found


def pytest_sessionfinish(session, exitstatus):
    leftovers = _leftovers()
    socket = _STATE.get("socket")
    if socket and shutil.which("tmux"):
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    if leftovers:
        session.config._live_trial_leftovers = leftovers
        session.exitstatus = 1
    count_file = os.environ.get("LIVE_TRIAL_E2E_COUNT_FILE")
    if count_file:
        Path(count_file).write_text(str(len(_E2E_RAN)))
    pid_log = _STATE.get("pid_log")
    if pid_log and pid_log.exists():
        pid_log.unlink()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    leftovers = getattr(config, "_live_trial_leftovers", None)
    if leftovers:
        terminalreporter.write_line("LEFTOVERS after the suite (a trial did not clean up): " + "; ".join(leftovers),
                                    red=True)
    terminalreporter.write_line(f"e2e tests run: {len(_E2E_RAN)}")
