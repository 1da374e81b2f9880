"""The evaluator's process: it dies with the harness, even by SIGKILL, and a process that failed is told apart from an
answer (judge/evaluator.py; README "Whose failure it is"). Real processes, no claude."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from live_trial.judge import evaluator as ev

# A stand-in harness: runs run_process on a long "evaluator" and prints its pid, then waits to be killed.
HARNESS = ("import sys\n"
           "from pathlib import Path\n"
           "from live_trial.judge import evaluator as ev\n"
           "ev.run_process(['sleep', '300'], '', Path('.'), {'PATH': '/usr/bin:/bin'}, 600,\n"
           "               on_start=lambda pid: print(pid, flush=True))\n")


def _gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_the_evaluator_dies_when_the_harness_is_killed_with_sigkill(tmp_path):
    harness = subprocess.Popen([sys.executable, "-c", HARNESS], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    evaluator = int(harness.stdout.readline())
    try:
        assert open(f"/proc/{evaluator}/cmdline").read().startswith("sleep")
        harness.send_signal(signal.SIGKILL)           # no cleanup code of the harness runs
        harness.wait(timeout=10)
        assert _gone(evaluator), "the evaluator outlived a SIGKILLed harness"
    finally:
        try:
            os.kill(evaluator, signal.SIGKILL)
        except OSError:
            pass


def test_on_start_gets_the_pid_of_the_running_process(tmp_path):
    seen = []
    res = ev.run_process(["sh", "-c", "echo $$"], "", tmp_path, {"PATH": "/usr/bin:/bin"}, 30, on_start=seen.append)
    assert res.exit_code == 0 and seen == [int(res.stdout.strip())]


@pytest.mark.parametrize("result,why", [
    (ev.ProcessResult(None, "", "", True, 600.0), "did not answer in time"),
    (ev.ProcessResult(-9, "", "", False, 1.0), "killed by signal 9"),
    (ev.ProcessResult(1, "", "Segmentation fault\n", False, 1.0), "exited with status 1 without an answer: Segmentation"),
])
def test_a_process_that_crashed_hung_or_was_killed_is_a_process_failure(result, why):
    assert why in ev.process_failure(result)


@pytest.mark.parametrize("result", [
    ev.ProcessResult(0, '{"structured_output": {"verdict": "PASS"}}', "", False, 1.0),
    ev.ProcessResult(0, '{"result": "no structured output"}', "", False, 1.0),       # answered, badly: a judgement
    ev.ProcessResult(1, '{"is_error": true, "subtype": "error_max_turns"}', "", False, 1.0),
])
def test_a_process_that_answered_is_no_process_failure(result):
    assert ev.process_failure(result) is None


def test_a_process_whose_own_end_leaves_something_holding_its_output_is_ended_with_it(tmp_path):
    """The evaluator's holder can end (a crash, a kill) while something it started still holds its output open: the
    harness would then wait on those pipes until the evaluator's time ran out. Within about a second of the process's
    own end, its group (and its container) is ended, and its real exit and output are what is reported."""
    result = ev.run_process(["sh", "-c", "sleep 60 & echo started; exit 3"], "", tmp_path,
                            {"PATH": os.environ["PATH"]}, 30)
    # before the rule, the pipes held by the sleep kept it waiting until its 30 s ran out: timed_out, no exit code
    assert (result.exit_code, result.timed_out) == (3, False) and "started" in result.stdout, result
