"""Nothing a trial starts outlives it, however it hides (README "Nothing left running"): a process
the session starts with ``setsid env -i`` (no tag, its own session, an orphan of init) is held by the trial's container
and gone when ``run`` returns, and ``reap`` ends one an earlier, killed harness left. Real claude in real tmux, the
model played by rehearsal scenarios; each test starts ``python -m live_trial`` as a person would.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from live_trial.session import containment
from tests.e2e.run_support import PLUGINS, ROOT, SCENARIOS, pid_alive, popen_cmd, run_cmd, wait_for_state, workdirs
from tests.e2e.waiting import wait_for

pytestmark = pytest.mark.e2e
MARK = ["trialkit:mark", "--plugins-root", str(PLUGINS)]


def _daemons(folder: Path, seconds: str) -> list[int]:
    """Pids of the running ``sleep <seconds>`` processes whose working folder is ``folder``, read from /proc (not
    from the product): the daemon a scenario started, whatever its environment or parent."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")[:2]
            if argv == [b"sleep", seconds.encode()] and os.readlink(f"/proc/{name}/cwd") == str(folder):
                state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
                found += [int(name)] if state != "Z" else []
        except OSError:
            continue
    return found


def _kill(pids: list[int]) -> None:
    """A failed test must not leave its daemon behind either."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.budget(10)
@pytest.mark.parametrize("setting", ["auto", "pidns", "subreaper"])
def test_a_setsid_env_i_daemon_of_the_session_is_gone_when_run_returns(tmp_path, setting):
    """The session's Bash tool starts ``setsid env -i sh -c '(exec sleep 3071) & ...'`` and the skill finishes: when
    ``run`` returns (a PASS) the daemon runs no more, for the strongest containment here and for the PID-namespace
    and subreaper fallbacks (``LIVE_TRIAL_CONTAINMENT``), and the verdict's notes name the containment that held the
    trial."""
    here = tmp_path / "here"
    here.mkdir()
    kind = containment.detect({containment.SETTING_ENV: setting})[0]
    proc = run_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-setsid-daemon.yaml"), "--in-place",
                   str(here), "--stall-limit", "4", "--hard-cap", "90", env={containment.SETTING_ENV: setting})
    left = _daemons(here, "3071")
    _kill(left)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (here / "daemon.pid").is_file(), "the daemon never started: there is nothing to prove"
    assert left == [], f"the session's setsid env -i daemon outlived the trial ({kind})"
    wd = workdirs(tmp_path)[0]
    verdict = json.loads((wd / "verdict.json").read_text())
    assert verdict["overall"]["verdict"] == "PASS"
    assert any(n.startswith(f"containment: {kind}: ") for n in verdict["notes"]), verdict["notes"]
    state = json.loads((wd / "trial-state.json").read_text())
    assert state["containment"]["kind"] == kind
    if kind == containment.CGROUP_V2:
        assert not Path(state["containment"]["path"]).exists(), "the trial's cgroup was left behind"


@pytest.mark.budget(10)
@pytest.mark.skipif(os.geteuid() != 0 or containment.detect()[0] != containment.CGROUP_V2,
                    reason="leaving a cgroup by writing cgroup.procs of an ancestor needs root and cgroup v2")
def test_a_daemon_that_leaves_the_trials_cgroup_is_gone_when_run_returns_and_never_called_held(tmp_path):
    """As root the session's Bash tool starts a ``setsid env -i`` daemon whose shell writes its pid into the root
    cgroup's ``cgroup.procs`` (``mark-cgroup-escape.yaml``): it really leaves the trial's cgroup, yet nothing of it
    runs when ``run`` returns, and the verdict does not say the cgroup held it: BLOCKED ``processes_left`` naming it
    (README "Nothing left running")."""
    here = tmp_path / "here"
    here.mkdir()
    proc = run_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-cgroup-escape.yaml"), "--in-place",
                   str(here), "--stall-limit", "4", "--hard-cap", "90")
    left = _daemons(here, "3073")
    _kill(left)
    escaped = (here / "escaped.txt").read_text() if (here / "escaped.txt").is_file() else ""
    assert escaped and containment.SUBTREE not in escaped, f"the daemon never left the trial's cgroup: {escaped!r}"
    assert left == [], "the daemon that left the trial's cgroup outlived the trial"
    verdict = json.loads((workdirs(tmp_path)[0] / "verdict.json").read_text())
    held = [n for n in verdict["notes"] if n.startswith("containment: ") and "were held by" in n]
    assert held == [], f"the verdict says a container held a process that left it: {held}"
    assert verdict["overall"]["verdict"] == "BLOCKED" and verdict["stop_reason"] == "processes_left", \
        (proc.returncode, verdict["overall"], verdict["notes"])
    assert any("sleep 3073" in n for n in verdict["notes"]), verdict["notes"]


@pytest.mark.budget(12)
def test_reap_ends_through_its_container_the_daemon_a_killed_harness_left(tmp_path):
    """SIGKILL of the harness while a tool runs, then the session removed by hand: the ``setsid env -i`` daemon the
    tool started carries no tag and leads to no session; ``reap`` finds the trial in the eval root and ends it through
    the container the trial's state records (its cgroup, here), and removes that container. As root the PID namespace
    nested in the cgroup already ended the daemon with the session; ``reap`` still removes the container."""
    here = tmp_path / "here"
    here.mkdir()
    proc = popen_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-setsid-daemon-hang.yaml"), "--in-place",
                     str(here), "--stall-limit", "60", "--hard-cap", "120")
    daemons: list[int] = []
    try:
        state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
        daemons = wait_for(lambda: _daemons(here, "3072"), what="the session's setsid env -i daemon running")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        subprocess.run(["tmux", "-L", os.environ["LIVE_TRIAL_SOCKET"], "kill-session", "-t", "=" + state["session"]],
                       check=True)
        wait_for(lambda: not pid_alive(state["pane_pid"]), what="claude gone with its session")
        time.sleep(1)                   # claude's own end of its tools' trees, done: the daemon is below none of them
        box = containment.Container.from_json(state["containment"])
        if containment.nests_pidns(box):    # root: the PID namespace in the cgroup ended with the session's holder
            assert _daemons(here, "3072") == [], "the daemon outlived the PID namespace nested in the trial's cgroup"
        else:
            assert _daemons(here, "3072") == daemons, "the daemon died with its session: there is nothing for reap"
        reaped = subprocess.run([sys.executable, "-m", "live_trial", "reap", "--eval-root", str(tmp_path / "eval"),
                                 "--json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
        left = _daemons(here, "3072")
    finally:
        _kill(_daemons(here, "3072"))
        if proc.poll() is None:
            proc.kill()
    assert reaped.returncode == 0, reaped.stderr[-2000:]
    ended = json.loads(reaped.stdout)["processes"]
    assert [e["session"] for e in ended] == [state["session"]] and ended[0]["left"] == [], ended
    assert left == [], "reap left the daemon of a killed harness's trial running"
    box = json.loads((Path(state["_workdir"]) / "trial-state.json").read_text())["containment"]
    if box["kind"] == containment.CGROUP_V2:
        assert state["session"] in ended[0]["containers"] and not Path(box["path"]).exists()


@pytest.mark.budget(10)
def test_the_evaluator_is_held_in_a_container_of_its_own_while_it_judges(tmp_path):
    """While ``claude -p`` judges the goal, the state records its container (``<session>.evaluator``, the trial's
    kind) and the evaluator's process is in it; stopped by SIGTERM, the harness ends and removes it."""
    proc = popen_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-slow-judge.yaml"), "--stall-limit", "4",
                     "--hard-cap", "90")
    try:
        state = wait_for_state(tmp_path, lambda s: s.get("evaluator") and s.get("evaluator_containment"))
        box = containment.Container.from_json(state["evaluator_containment"])
        pid = state["evaluator"]["pid"]        # the holder, then (exec'd, or its child) the evaluator's claude
        held = wait_for(lambda: pid in [p.pid for p in containment.members(box)],
                        what="the evaluator's process in its container")
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert box.name == state["session"] + containment.EVALUATOR_SUFFIX
    assert box.kind == state["containment"]["kind"]
    assert held
    after = json.loads((Path(state["_workdir"]) / "trial-state.json").read_text())
    assert after["evaluator"] is None and after["evaluator_containment"] is None
    assert containment.members(box) == [] and not (box.path and Path(box.path).exists())


BY_HAND = """
live-trial prepare trialkit:mark --plugins-root "$PLUGINS" --rehearsal "$SCENARIO" > prepared.txt
eval "$(grep -E '^[A-Z_]+=' prepared.txt)"
echo "$CWD" > cwd.txt
live-trial rehearsal serve "$SCENARIO" --port "$PORT" --cwd "$CWD" --config-dir "$CONFIG_DIR" > serve.log 2>&1 &
trap 'live-trial backend kill-session "$SESSION" > /dev/null 2>&1; kill %1' EXIT
live-trial boot "$SESSION" "$CWD" --workdir "$WORKDIR" --target-skill trialkit:mark --plugins-root "$PLUGINS" \\
  --session-id "$SESSION_ID" --rehearsal-server "http://127.0.0.1:$PORT" --config-dir "$CONFIG_DIR" 2> boot.err
live-trial send "$SESSION" "$WORKDIR/task.md"
live-trial poll "$WORKDIR/out/status.json" "$SESSION" --state-file "$WORKDIR/poll-state.json"
for i in $(seq 100); do test -s "$CWD/daemon.pid" && break; sleep 0.1; done
live-trial backend kill-session "$SESSION"
"""


@pytest.mark.budget(12)
def test_a_session_booted_by_hand_is_held_and_kill_session_ends_its_daemon(tmp_path):
    """The steps by hand (README "The steps, one by one"): ``boot`` holds its session in a container as ``run`` does
    (it says which on stderr and records it in trial-state.json), so ``backend kill-session`` ends the
    ``setsid env -i`` daemon the session started, which no tag and no process tree reach."""
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run(["bash", "-e", "-c", BY_HAND], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PLUGINS": str(PLUGINS),
                               "SCENARIO": str(SCENARIOS / "mark-setsid-daemon.yaml")})
    cwd = Path((tmp_path / "cwd.txt").read_text().strip()) if (tmp_path / "cwd.txt").is_file() else None
    left = _daemons(cwd, "3071") if cwd else []
    _kill(left)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert cwd is not None and (cwd / "daemon.pid").is_file(), "the daemon never started: there is nothing to prove"
    kind = containment.detect({})[0]
    assert left == [], f"kill-session left the by-hand session's setsid env -i daemon running ({kind})"
    assert f"containment: {kind}: " in (tmp_path / "boot.err").read_text()
    workdir = cwd.parent
    assert json.loads((workdir / "trial-state.json").read_text())["containment"]["kind"] == kind
