"""When the environment or the harness fails, the verdict names that cause and blames no skill, and nothing the trial
started is left running (README "Whose failure it is", "Nothing left running"). Real claude in real tmux, the model
played by rehearsal scenarios; each test starts ``python -m live_trial run`` as a person would.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from live_trial.session import containment
from tests.e2e.run_support import (
    PLUGINS,
    ROOT,
    SCENARIOS,
    age_s,
    carrying_tag,
    notifications,
    popen_cmd,
    resume_cmd,
    run_cmd,
    still_running,
    stopped,
    tree_of,
    wait_busy,
    wait_for_state,
    workdirs,
)
from tests.e2e.waiting import wait_for

pytestmark = pytest.mark.e2e


def _verdict(wd) -> dict:
    return json.loads((wd / "verdict.json").read_text())


def _finish(proc, timeout: float = 120) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()


def _sleep_of(pane_pid: int) -> tuple[list[tuple[int, str]], int] | None:
    """``(the pane's whole process tree as (pid, start), the pid of the Bash tool's sleep 300)``, read from /proc, or
    None while no such tool runs under it."""
    tree = tree_of(pane_pid)
    for pid, _start in tree:
        try:
            if open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[:2] == [b"sleep", b"300"]:
                return tree, pid
        except OSError:
            continue
    return None


def _tool_tree(tmp_path) -> tuple[dict, list[tuple[int, str]], int]:
    """Wait until the trial's Bash tool runs ``sleep 300``; return the state, the pane's whole process tree
    (``(pid, start)``, read from /proc) and the sleep's pid."""
    state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
    tree, sleep_pid = wait_for(lambda: _sleep_of(state["pane_pid"]),
                               what="the Bash tool's sleep 300 running under the trial's claude")
    return state, tree, sleep_pid


def _end_for_good(procs) -> None:
    """A failed test must not leave its processes behind either."""
    for pid, _start in still_running(procs):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.budget(12)
@pytest.mark.parametrize("how", ["sigterm", "sigint"])
def test_a_tool_stopped_a_second_after_it_started_is_ended_with_its_whole_tree(tmp_path, how):
    """claude 2.1.197 starts each Bash tool in its own session: tmux's kill-session never reaches it, and a foreground
    ``sleep 300`` ended within about two seconds of its start outlives claude (later, claude ends it itself on exit:
    references/transcript-jsonl.md "Process tree"). Stopped by SIGTERM or Ctrl-C a second after the tool started,
    nothing of the pane's tree (recorded by pid and start time while it ran) may remain."""
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-bash-sleep.yaml"), "--stall-limit", "60", "--hard-cap", "120")
    tree = []
    try:
        state, tree, sleep_pid = _tool_tree(tmp_path)
        assert len(tree) >= 3, tree                     # claude -> bash -c (its own session) -> sleep
        wait_for(lambda: age_s(sleep_pid) >= 1.0, what="the tool running for a second")
        proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        out, err = _finish(proc)
        left = still_running(tree)
    finally:
        _end_for_good(tree)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]
    assert left == [], f"processes of the trial still running after it ended: {left}"
    assert carrying_tag(state["session"]) == []
    doc = _verdict(workdirs(tmp_path)[0])
    assert doc["stop_reason"] == {"sigterm": "harness_terminated", "sigint": "harness_interrupted"}[how]


@pytest.mark.budget(14)
def test_the_hard_cap_a_second_after_a_tool_started_ends_its_whole_tree(tmp_path):
    """The same, the trial ended by its hard cap (6 s) about a second after the tool started: the model answers 5 s
    after the task arrived. On a machine too slow for that, the harness is held (SIGSTOP) just before the cap until the
    tool runs (the model's answer is out by then; tmux resumes a stopped claude at once, so claude cannot be held)."""
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-bash-sleep-late.yaml"), "--stall-limit", "60", "--hard-cap", "6")
    tree, held = [], False
    try:
        state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
        poll = wait_for(lambda: _poll_started(state), what="the first poll tick")
        wait_for(lambda: _sleep_of(state["pane_pid"]) or time.time() >= poll + 6 - 0.4, what="the tool, or the cap near")
        if not _sleep_of(state["pane_pid"]):
            os.kill(proc.pid, signal.SIGSTOP)
            held = True
        state, tree, sleep_pid = _tool_tree(tmp_path)
        tool_started = time.time() - age_s(sleep_pid)
        if held:
            os.kill(proc.pid, signal.SIGCONT)
            held = False
        out, err = _finish(proc)
        left = still_running(tree)
    finally:
        if held:
            os.kill(proc.pid, signal.SIGCONT)
        _end_for_good(tree)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]
    doc = _verdict(workdirs(tmp_path)[0])
    assert (doc["stop_reason"], doc["poll_exit"]) == ("hard_cap", "HARD_CAP")
    capped = next(json.loads(x)["at"] for x in (workdirs(tmp_path)[0] / "trial-log.jsonl").read_text().splitlines()
                  if json.loads(x).get("decision") == "HARD_CAP")
    age = datetime.fromisoformat(capped.replace("Z", "+00:00")).timestamp() - tool_started
    assert left == [], f"processes of the trial still running after it ended: {left} (tool {age:.1f}s old at the cap)"
    assert carrying_tag(state["session"]) == []


def _poll_started(state: dict) -> float | None:
    """Epoch seconds of the poll's ``started_at`` (from which the hard cap counts), None before the first tick."""
    try:
        started = json.loads((Path(state["_workdir"]) / "poll-state.json").read_text())["started_at"]
    except (OSError, ValueError, KeyError):
        return None
    return datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp()


@pytest.mark.budget(10)
def test_the_tmux_server_killed_mid_trial_is_blocked_with_that_cause_not_a_crash_of_the_skill(tmp_path):
    socket = f"lt-gone-{os.getpid()}"
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-bash-sleep.yaml"), "--stall-limit", "60", "--hard-cap", "120",
                     "--lang", "en", env={"LIVE_TRIAL_SOCKET": socket})
    tree = []
    try:
        state, tree, _sleep = _tool_tree(tmp_path)
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=True, capture_output=True)
        out, err = _finish(proc)
        left = still_running(tree)
    finally:
        _end_for_good(tree)
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    assert proc.returncode == 3, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    doc = _verdict(workdirs(tmp_path)[0])
    assert (doc["stop_reason"], doc["overall"]["verdict"], doc["blocked"]) == ("tmux_gone", "BLOCKED", True)
    assert doc["stall_row"] is None and doc["poll_exit"] == "BLOCKED"      # not STALL row 1, "crash"
    reasons = doc["overall"]["reasons"]
    assert reasons[0] == "blocked: the tmux server on the trial's socket stopped during the trial (it was killed or crashed)"
    # its scenario runs Bash before any Skill call: the skill was not reached, which is no failure of it
    assert reasons[1].startswith("the skill was never reached: the trial stopped before the session called it"), reasons
    assert not any("STALL" in r or "the skill" in r for r in reasons[2:]), reasons  # the rest only details the cause
    assert "not the skill's fault" in result["summary"]
    assert "the program that gives the ai its screen stopped partway through" in result["notification"].lower()
    assert left == [], f"the tool's processes outlived the tmux server: {left}"


@pytest.mark.budget(8)
def test_ctrl_c_says_the_person_running_it_stopped_it(tmp_path):
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-hang.yaml"), "--stall-limit", "300", "--hard-cap", "300", "--lang", "en")
    try:
        wait_busy(wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid")))
        proc.send_signal(signal.SIGINT)
        out, err = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    doc = _verdict(workdirs(tmp_path)[0])
    assert (doc["stop_reason"], doc["overall"]["verdict"]) == ("harness_interrupted", "BLOCKED")
    assert doc["overall"]["reasons"] == ["blocked: the person running the harness stopped it (Ctrl-C) before the "
                                         "trial finished", "the skill's end was never reached: the trial stopped "
                                         "while the skill ran; its goal was not judged"]
    stopped_by_person = "stopped by the person running it"
    assert stopped_by_person in result["summary"] and stopped_by_person in result["notification"]
    for said in (result["summary"], result["notification"]):
        assert "missing" not in said and "could not start" not in said, said
    assert [r["text"] for r in notifications(tmp_path, doc["run_id"])] == [result["notification"]]


@pytest.mark.budget(6)
def test_a_read_only_eval_root_is_one_line_exit_3_and_nothing_written(tmp_path):
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("needs a private mount namespace (unshare -m) to make a read-only file system")
    root = tmp_path / "eval"
    root.mkdir()
    (root / "kept.txt").write_text("a person's file\n")
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    (tmp_path / "cwd").mkdir()
    mount_ro = 'd=$1; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && exec "$@"'
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", mount_ro, "sh", str(root),
                           sys.executable, "-m", "live_trial", "run", "trialkit:mark", "--plugins-root", str(PLUGINS),
                           "--rehearsal", str(SCENARIOS / "mark-happy.yaml"), "--eval-root", str(root),
                           "--cwd", str(tmp_path / "cwd")], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith("BLOCKED: the trial's records cannot be written (Read-only file system)")
    assert str(root) in line and "--eval-root" in line and "Traceback" not in proc.stderr
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before


@pytest.mark.budget(8)
def test_a_tmux_server_no_harness_started_is_refused_and_its_options_stay_byte_for_byte(tmp_path):
    socket = f"lt-mine-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run(tmux + ["new-session", "-d", "-s", "mine", "sleep", "600"], check=True)

    def options() -> list[bytes]:
        return [subprocess.run(tmux + args, capture_output=True).stdout
                for args in (["show-options", "-g"], ["show-options", "-gw"], ["show-options", "-gs"],
                             ["show-environment", "-g"])]
    try:
        before = options()
        proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                       str(SCENARIOS / "mark-happy.yaml"), "--socket", socket)
        after = options()
        sessions = subprocess.run(tmux + ["list-sessions", "-F", "#{session_name}"], capture_output=True,
                                  text=True).stdout.split()
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = json.loads(proc.stdout.strip())
    assert line["code"] == "foreign_tmux_server" and "was not started by live-trial" in line["message"]
    assert after == before
    assert sessions == ["mine"]
    assert not (tmp_path / "eval").exists()


@pytest.mark.budget(12)
def test_reap_ends_what_a_killed_harness_left_even_once_its_session_is_gone(tmp_path):
    """SIGKILL of the harness while a tool runs, then the session removed by hand: a process the tool left in a session
    of its own (``setsid``) is an orphan of init that no session leads to; ``reap`` finds the trial in the eval root
    and ends it by the trial's tag. The trial runs with the weakest containment, ``tag-only``
    (``LIVE_TRIAL_CONTAINMENT=tag``, README "Nothing left running"), so the tag is the only finder: a stronger one
    ends the process with the session already (tests/e2e/test_containment.py holds reap through a container). (A plain
    tool's sleep may die with claude or outlive it for a moment, by version and timing: with it the test raced reap
    against claude's own cleanup.)"""
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-bash-escape.yaml"), "--stall-limit", "60", "--hard-cap", "120",
                     env={containment.SETTING_ENV: "tag"})
    tree = []
    try:
        state, tree, _sleep = _tool_tree(tmp_path)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        socket = os.environ["LIVE_TRIAL_SOCKET"]
        subprocess.run(["tmux", "-L", socket, "kill-session", "-t", "=" + state["session"]], check=True)
        wait_for(lambda: len(still_running(tree)) < len(tree), what="claude gone with its session")
        assert still_running(tree), "nothing outlived the session: there is nothing for reap to prove"
        reaped = subprocess.run([sys.executable, "-m", "live_trial", "reap", "--eval-root", str(tmp_path / "eval"),
                                 "--json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
        left = still_running(tree)
    finally:
        _end_for_good(tree)
        if proc.poll() is None:
            proc.kill()
    assert reaped.returncode == 0, reaped.stderr[-2000:]
    ended = json.loads(reaped.stdout)["processes"]
    assert [e["session"] for e in ended] == [state["session"]] and ended[0]["left"] == []
    assert left == [] and carrying_tag(state["session"]) == []


@pytest.mark.budget(14)
def test_an_evaluator_that_crashes_is_blocked_never_a_fail_of_the_skill(tmp_path):
    """Both attempts of the evaluator killed (a crash): the goal was not judged, and the harness says so."""
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-slow-judge.yaml"), "--stall-limit", "4", "--hard-cap", "90")
    crashed: list[int] = []
    try:
        for _attempt in (1, 2):
            ev = wait_for_state(tmp_path, lambda s: s.get("evaluator") and s["evaluator"]["pid"] not in crashed)
            crashed.append(ev["evaluator"]["pid"])
            os.kill(crashed[-1], signal.SIGKILL)
        out, err = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]
    doc = _verdict(workdirs(tmp_path)[0])
    assert (doc["stop_reason"], doc["overall"]["verdict"], doc["goal_result"]) == ("evaluator_failed", "BLOCKED", None)
    assert any("killed by signal 9" in n for n in doc["notes"]), doc["notes"]


@pytest.mark.budget(6)
def test_resume_of_a_workdir_that_cannot_be_written_is_one_line_exit_3(tmp_path):
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("needs a private mount namespace (unshare -m) to make a read-only file system")
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--claude-bin", "/nonexistent/claude",
                   "--rehearsal", str(SCENARIOS / "mark-happy.yaml"))
    assert proc.returncode == 3
    wd = workdirs(tmp_path)[0]
    before = {p: p.read_bytes() for p in wd.rglob("*") if p.is_file()}
    mount_ro = 'd=$1; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && exec "$@"'
    resumed = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", mount_ro, "sh", str(wd),
                              sys.executable, "-m", "live_trial", "run", "--resume", str(wd)],
                             capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert resumed.returncode == 3 and len(resumed.stderr.strip().splitlines()) == 1, resumed.stderr
    assert resumed.stderr.startswith("BLOCKED: the trial's records cannot be written") and str(wd) in resumed.stderr
    assert {p: p.read_bytes() for p in wd.rglob("*") if p.is_file()} == before
    assert resume_cmd(wd).returncode == 3          # writable again: it resumes (a finished BLOCKED trial)


@pytest.mark.budget(12)
def test_a_tmux_server_that_takes_the_socket_before_boot_blocks_the_trial_never_a_fail_of_the_skill(tmp_path):
    """Someone's own tmux server starts on the trial's socket after the inputs were checked and before boot: the
    trial is BLOCKED with that cause (exit 3), never a FAIL of the skill it never started, and that server's
    sessions and options stay as they were (README "Whose failure it is")."""
    from live_trial.trial.journal import STOP_AT_PHASE_ENV

    socket = f"lt-late-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-happy.yaml"), "--socket", socket, "--stall-limit", "4",
                     "--hard-cap", "90", env={STOP_AT_PHASE_ENV: "booting"})
    try:
        wait_for(lambda: stopped(proc.pid) or proc.poll() is not None, what="the harness held before boot")
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        subprocess.run(tmux + ["new-session", "-d", "-s", "mine", "sleep", "600"], check=True)
        before = subprocess.run(tmux + ["show-options", "-g"], capture_output=True).stdout
        proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
        after = subprocess.run(tmux + ["show-options", "-g"], capture_output=True).stdout
        sessions = subprocess.run(tmux + ["list-sessions", "-F", "#{session_name}"], capture_output=True,
                                  text=True).stdout.split()
    finally:
        if proc.poll() is None:
            proc.kill()
        subprocess.run(tmux + ["kill-server"], capture_output=True)
    assert proc.returncode == 3, err[-3000:]
    doc = _verdict(workdirs(tmp_path)[0])
    assert (doc["stop_reason"], doc["overall"]["verdict"], doc["blocked"]) == ("foreign_tmux_server", "BLOCKED", True)
    assert doc["overall"]["reasons"][0].startswith("blocked: a tmux server no harness started"), doc
    assert "スキルのせいではありません" in json.loads(out.strip().splitlines()[-1])["summary"]
    assert sessions == ["mine"] and after == before


@pytest.mark.budget(12)
def test_a_cli_that_stops_at_the_folder_trust_question_at_start_is_blocked_never_a_fail_of_the_skill(tmp_path):
    """The environment asked a person something before the skill could run (README "Whose failure it is"): the trial
    is BLOCKED with that cause, exit 3, never a launch FAIL of the skill it never started."""
    from live_trial.trial.journal import STOP_AT_PHASE_ENV

    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                     str(SCENARIOS / "mark-happy.yaml"), "--stall-limit", "4", "--hard-cap", "90",
                     env={STOP_AT_PHASE_ENV: "booting"})
    try:
        wait_for(lambda: stopped(proc.pid) or proc.poll() is not None, what="the harness held before boot")
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        config = workdirs(tmp_path)[0] / "claude-config" / ".claude.json"
        doc = json.loads(config.read_text())
        for project in doc["projects"].values():         # the folder is no longer trusted when claude starts
            project["hasTrustDialogAccepted"] = False
        config.write_text(json.dumps(doc))
        proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]
    doc = _verdict(workdirs(tmp_path)[0])
    assert (doc["stop_reason"], doc["overall"]["verdict"], doc["blocked"]) == ("blocking_screen", "BLOCKED", True)
    assert doc["overall"]["reasons"][0].startswith("blocked: the CLI stopped at start on a screen that waits"), doc
    result = json.loads(out.strip().splitlines()[-1])
    assert "スキルのせいではありません" in result["summary"], result["summary"]
