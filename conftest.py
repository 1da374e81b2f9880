"""Project-wide pytest set-up (README "Tests").

- Tests under ``tests/e2e`` are marked ``e2e``. They need tmux and the real ``claude``. Outside CI a missing tool
  skips them with a reason that says how to install it; with ``CI=true`` or ``LIVE_TRIAL_REQUIRE_E2E=1`` a missing
  tool is a failure, never a skip. Tests marked ``browser`` (the report opened in a real browser) also need Debian's
  ``chromium`` and ``chromium-driver`` and the ``selenium`` package, under the same rule.
- Isolation: every pytest process (the main one and each xdist worker) gets its own tmux socket
  (``LIVE_TRIAL_SOCKET``), its own Claude Code config folder (``CLAUDE_CONFIG_DIR``) and its own pid log
  (``LIVE_TRIAL_PID_LOG``, where the backend records each pane process it starts), whatever the caller's
  environment says: a person's own trials and sessions are never seen, reaped or touched by the suite, and the
  suite's sessions are invisible to them. At the end each process fails the suite when an ``lt-*`` session on its
  socket or a claude process it started is still there (it counts only what it started), then kills its server.
- Budgets: every e2e test carries ``@pytest.mark.budget(seconds)``; one without fails. The summary lists the tests
  that took longer than their budget (a report, never a timed assertion).
- The number of e2e tests that ran (passed or failed, not skipped), over every worker, is printed as
  ``e2e tests run: N`` and written to ``LIVE_TRIAL_E2E_COUNT_FILE`` when that is set.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

_E2E_RAN: set[str] = set()
_DURATIONS: dict[str, float] = {}
_BUDGETS: dict[str, float] = {}
_STATE: dict = {}
LEFTOVERS_KEY = "live_trial_leftovers"


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


def _missing_browser() -> list[str]:
    """What a ``browser`` test needs and this machine lacks: Chromium, its driver, selenium."""
    missing = [f"{exe} (install: apt-get install {pkg}, or `bash scripts/setup.sh --browser` as root)"
               for exe, pkg in (("chromium", "chromium"), ("chromedriver", "chromium-driver")) if not shutil.which(exe)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (install: pip install -e '.[test]')")
    return missing


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    config.addinivalue_line("markers", "budget(seconds): the time an e2e test should take; the summary reports "
                                       "tests over budget")
    config.addinivalue_line("markers", "browser: opens a page in headless Chromium through selenium (required with "
                                       "CI=true or LIVE_TRIAL_REQUIRE_E2E=1, else skipped when missing)")
    worker = config.workerinput["workerid"] if _is_worker(config) else "main"
    own = tempfile.mkdtemp(prefix=f"live-trial-test-{os.getpid()}-{worker}-")
    _STATE["user_socket"] = os.environ.get("LIVE_TRIAL_SOCKET")
    _STATE["user_config_dir"] = os.environ.get("CLAUDE_CONFIG_DIR")
    os.environ["LIVE_TRIAL_SOCKET"] = f"lt-test-{os.getpid()}-{worker}"
    os.environ["CLAUDE_CONFIG_DIR"] = str(Path(own) / "claude-config")
    os.environ["LIVE_TRIAL_PID_LOG"] = str(Path(own) / "pids.log")
    os.environ["LIVE_TRIAL_CACHE_DIR"] = str(Path(own) / "cache")     # the validator's answers (session.plugin_check)
    # A session's Bash tool starts its shell from the start-up files in $HOME. The developer's (pyenv, nvm, conda)
    # would slow every tool call, and a test that ends a session while that shell starts can leave their locks
    # behind: a stale pyenv rehash lock (~/.pyenv/shims/.pyenv-shim) made every later shell wait 60 s, so every
    # later trial with a Bash step hung. The suite's sessions get an empty home of their own.
    _STATE["user_home"] = os.environ.get("HOME")
    home = Path(own) / "home"
    home.mkdir()
    os.environ["HOME"] = str(home)
    _STATE.update(socket=os.environ["LIVE_TRIAL_SOCKET"], pid_log=Path(os.environ["LIVE_TRIAL_PID_LOG"]), own=own)


def pytest_report_header(config):
    """The CLI the e2e tests run on (the version matrix of .ci/run picks it with LIVE_TRIAL_CLAUDE_BIN)."""
    try:
        from live_trial.session.claude_bin import find_claude
        found = find_claude()
    except Exception as exc:  # noqa: BLE001 - reported, the e2e tests then fail or skip by the rule above
        return f"claude: not usable ({exc})"
    return f"claude: {found.version} at {found.path} ({found.source})"


def pytest_collection_modifyitems(config, items):
    e2e_items = []
    for item in items:
        if "tests/e2e" in str(item.fspath).replace(os.sep, "/") or "benchmarks" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)
        if item.get_closest_marker("e2e"):
            e2e_items.append(item)
    browser_items = [item for item in items if item.get_closest_marker("browser")]
    for group, what, missing_of in ((e2e_items, "e2e", _missing_tools), (browser_items, "browser", _missing_browser)):
        missing = missing_of() if group else []
        if not missing:
            continue
        if _require_e2e():
            raise pytest.UsageError(f"{what} tests are required here (CI=true or LIVE_TRIAL_REQUIRE_E2E=1) but "
                                    "missing: " + "; ".join(missing))
        skip = pytest.mark.skip(reason=f"{what} needs " + "; ".join(missing))
        for item in group:
            item.add_marker(skip)


def pytest_runtest_setup(item):
    if item.get_closest_marker("e2e") and not item.get_closest_marker("budget"):
        pytest.fail("an e2e test needs @pytest.mark.budget(seconds): the time it should take (README \"Tests\")",
                    pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    budget = item.get_closest_marker("budget")
    if budget is not None and budget.args:
        report.user_properties.append(("budget_s", float(budget.args[0])))


def pytest_runtest_logreport(report):
    """Runs in the process that reports: with xdist, the main process sees every worker's reports."""
    if report.when == "call" and "e2e" in report.keywords and not report.skipped:
        _E2E_RAN.add(report.nodeid)
    if report.when == "setup" and report.failed and "e2e" in report.keywords:
        _E2E_RAN.add(report.nodeid)
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration
    for key, value in report.user_properties:
        if key == "budget_s":
            _BUDGETS[report.nodeid] = value


def _leftovers() -> list[str]:
    """What this process started and left: lt-* sessions on its socket, live processes of its pid log."""
    found = []
    socket = _STATE.get("socket")
    if socket and shutil.which("tmux"):
        proc = subprocess.run(["tmux", "-L", socket, "list-sessions", "-F", "#{session_name}"],
                              capture_output=True, text=True)
        found += [f"tmux session {s} on socket {socket}" for s in proc.stdout.split() if s.startswith("lt-")]
    pid_log = _STATE.get("pid_log")
    if pid_log and pid_log.exists():
        from live_trial.session.rules import pid_alive, proc_start_ticks

        for line in pid_log.read_text().splitlines():
            pid, _, start = line.partition(" ")
            # a pid names our process only with its start time: on a busy machine pids wrap (pid_max 32768), and a
            # pane process already gone when it was logged ("-") cannot be alive later
            if not pid.isdigit() or proc_start_ticks(int(pid)) != start or not pid_alive(int(pid)):
                continue
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                command = ""
            found.append(f"process {pid} started by a trial ({command[:120].strip()})")
    return found


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    leftovers = _leftovers()
    socket = _STATE.get("socket")
    if socket and shutil.which("tmux"):
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    shutil.rmtree(_STATE.get("own", ""), ignore_errors=True)
    if _is_worker(config):
        config.workeroutput[LEFTOVERS_KEY] = leftovers     # the main process reports and fails on them
        return
    leftovers += getattr(config, "_live_trial_worker_leftovers", [])
    if leftovers:
        config._live_trial_leftovers = leftovers
        session.exitstatus = 1
    count_file = os.environ.get("LIVE_TRIAL_E2E_COUNT_FILE")
    if count_file:
        Path(count_file).write_text(str(len(_E2E_RAN)))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist (main process): collect what a worker left behind."""
    found = getattr(node, "workeroutput", {}).get(LEFTOVERS_KEY) or []
    if found:
        config = node.config
        config._live_trial_worker_leftovers = getattr(config, "_live_trial_worker_leftovers", []) + list(found)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _is_worker(config):
        return
    leftovers = getattr(config, "_live_trial_leftovers", None)
    if leftovers:
        terminalreporter.write_line("LEFTOVERS after the suite (a trial did not clean up): " + "; ".join(leftovers),
                                    red=True)
    over = sorted(((_DURATIONS.get(n, 0.0) - b, n, b) for n, b in _BUDGETS.items() if _DURATIONS.get(n, 0.0) > b),
                  reverse=True)
    if over:
        terminalreporter.write_line(f"{len(over)} test(s) over budget (took / budget):")
        for _excess, nodeid, budget in over:
            terminalreporter.write_line(f"  {_DURATIONS[nodeid]:6.1f}s / {budget:5.1f}s  {nodeid}")
    if _BUDGETS:
        terminalreporter.write_line(f"e2e budgets: {sum(_BUDGETS.values()):.0f}s in all; "
                                    f"took {sum(_DURATIONS.get(n, 0.0) for n in _BUDGETS):.0f}s")
    terminalreporter.write_line(f"e2e tests run: {len(_E2E_RAN)}")
