"""Where a trial's processes are held (session/containment.py) and the holder that enters it (session/holder.py):
the detection from the kernel's files (fakeable text and probes), the setting, and each kind on real processes (no
tmux, no claude) where this machine offers it: a ``setsid env -i`` daemon, an orphan of init with no tag, is gone once
the container is ended (README "Nothing left running").
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from live_trial.errors import RefusedInput
from live_trial.session import containment, holder, proctree
from live_trial.session.containment import CGROUP_V2, PID_NAMESPACE, SUBREAPER, TAG_ONLY, Container

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")

# This machine's (cgroup v1 hierarchies beside a v2 one) and a systemd machine's (v2 only, at /sys/fs/cgroup).
HYBRID = """31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
SYSTEMD = "29 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
USER_CG = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run.scope\n"


def _probes(cgroup=None, pidns=False, subreaper=False):
    return {"cgroup": lambda: cgroup, "pidns": lambda: pidns, "subreaper": lambda: subreaper}


def test_the_v2_hierarchy_is_found_in_mountinfo_wherever_it_is_mounted():
    assert containment.v2_mounts(HYBRID) == [Path("/sys/fs/cgroup/unified")]
    assert containment.v2_mounts(SYSTEMD) == [Path("/sys/fs/cgroup")]
    assert containment.v2_mounts(HYBRID.splitlines()[1] + "\n") == []


def test_a_root_harness_uses_the_hierarchy_root_and_a_user_its_own_delegated_cgroup():
    assert containment.v2_bases(HYBRID, "1:cpu:/\n0::/\n") == [Path("/sys/fs/cgroup/unified/live-trial")]
    assert containment.v2_bases(SYSTEMD, USER_CG) == [
        Path("/sys/fs/cgroup/live-trial"),
        Path("/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run.scope/live-trial")]
    assert containment.own_v2_cgroup("1:cpu:/\n") is None


def test_detection_takes_the_strongest_that_works_and_the_setting_only_weakens_it(tmp_path):
    every = _probes(cgroup=tmp_path, pidns=True, subreaper=True)
    assert containment.detect({}, probes=every) == (CGROUP_V2, tmp_path)
    assert containment.detect({containment.SETTING_ENV: "pidns"}, probes=every) == (PID_NAMESPACE, None)
    assert containment.detect({containment.SETTING_ENV: "subreaper"}, probes=every) == (SUBREAPER, None)
    assert containment.detect({containment.SETTING_ENV: "tag"}, probes=every) == (TAG_ONLY, None)
    assert containment.detect({}, probes=_probes(pidns=True, subreaper=True))[0] == PID_NAMESPACE
    assert containment.detect({}, probes=_probes(subreaper=True))[0] == SUBREAPER
    assert containment.detect({containment.SETTING_ENV: "pidns"}, probes=_probes(subreaper=True))[0] == SUBREAPER
    assert containment.detect({}, probes=_probes())[0] == TAG_ONLY


def test_a_setting_that_is_no_kind_is_refused_naming_the_choices():
    assert containment.setting({containment.SETTING_ENV: " Auto "}) == CGROUP_V2
    with pytest.raises(RefusedInput) as err:
        containment.setting({containment.SETTING_ENV: "docker"})
    assert "auto, cgroup, pidns, subreaper, tag" in err.value.fix


def test_create_makes_the_cgroup_folder_and_the_record_round_trips(tmp_path):
    box = containment.create("lt-x", {}, probes=_probes(cgroup=tmp_path))
    assert box == Container(CGROUP_V2, "lt-x", str(tmp_path / "lt-x")) and (tmp_path / "lt-x").is_dir()
    assert Container.from_json(box.to_json()) == box
    assert containment.create("lt-y", {}, probes=_probes(subreaper=True)) == Container(SUBREAPER, "lt-y")


def test_the_holder_comes_first_in_the_argv_but_for_tag_only():
    assert Container(TAG_ONLY, "lt-x").wrap(["claude", "-p"]) == ["claude", "-p"]
    argv = Container(CGROUP_V2, "lt-x", "/cg/lt-x").wrap(["claude", "-p"], python="py")
    nested = ["--pidns", "1"] if containment.nests_pidns(Container(CGROUP_V2, "lt-x", "/cg/lt-x")) else []
    assert argv == ["py", "-P", "-m", "live_trial.session.holder", "--kind", CGROUP_V2, "--name", "lt-x",
                    "--cgroup", "/cg/lt-x", *nested, "--", "claude", "-p"]
    for kind in containment.KINDS:
        assert Container(kind, "lt-x", "/cg").note().startswith(f"containment: {kind}: ")


def test_leftover_cgroups_are_found_by_name_under_every_live_trial_subtree(tmp_path):
    (tmp_path / "live-trial" / "lt-a").mkdir(parents=True)
    (tmp_path / "live-trial" / "lt-a.evaluator").mkdir()
    info = f"41 31 0:38 / {tmp_path} rw,relatime - cgroup2 cgroup2 rw\n"
    found = containment.leftover_cgroups(info, "0::/\n")
    assert sorted(found) == ["lt-a", "lt-a.evaluator"]
    assert found["lt-a"] == Container(CGROUP_V2, "lt-a", str(tmp_path / "live-trial" / "lt-a"))


def test_the_holder_refuses_to_start_anything_outside_a_cgroup_it_cannot_join(tmp_path, capfd):
    assert holder.main(["--kind", CGROUP_V2, "--name", "lt-x", "--cgroup", str(tmp_path / "none"), "--", "true"]) \
        == holder.CANNOT_ENTER
    assert "cannot join the cgroup" in capfd.readouterr().err
    assert holder.main(["--kind", SUBREAPER, "true"]) == 2


# ---------------------------------------------------------------- each kind on real processes

DAEMON = "setsid env -i sh -c '(exec sleep {n}) & echo $! > {pidfile}' </dev/null >/dev/null 2>&1; sleep 0.3"


def _running(pid: int) -> bool:
    p = proctree.proc(pid)
    return p is not None and Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep")


@pytest.mark.parametrize("setting", ["cgroup", "pidns", "subreaper"])
def test_a_setsid_env_i_daemon_is_held_and_ended_by_each_kind(tmp_path, setting):
    kind = containment.detect({containment.SETTING_ENV: setting})[0]
    if kind != containment.SETTINGS[setting]:
        pytest.skip(f"{setting} is not available here (detected {kind})")
    name = f"lt-unit-{os.getpid()}-{setting}"
    env = {**os.environ, containment.SETTING_ENV: setting, proctree.TAG_ENV: name}
    box = containment.create(name, env)
    pidfile = tmp_path / "daemon.pid"
    seconds = 3000 + os.getpid() % 900
    done = subprocess.run(box.wrap(["sh", "-c", DAEMON.format(n=seconds, pidfile=pidfile)]), env=env,
                          stdin=subprocess.DEVNULL, timeout=30)
    assert done.returncode == 0 and pidfile.is_file()
    started = time.monotonic()
    left = containment.end(box)
    daemons = [int(pid) for pid in subprocess.run(["pgrep", "-x", "-f", f"sleep {seconds}"], capture_output=True,
                                                  text=True).stdout.split()]
    for pid in daemons:
        os.kill(pid, 9)
    assert left == [] and daemons == [], f"{kind} let the daemon go"
    assert time.monotonic() - started < 5
    if kind == CGROUP_V2:
        assert box.path and not Path(box.path).exists()


def test_without_containment_the_same_daemon_escapes(tmp_path):
    """What the kinds are for: with only the tag, the daemon outlives its end (README "Nothing left running")."""
    name = f"lt-unit-{os.getpid()}-tag"
    env = {**os.environ, proctree.TAG_ENV: name}
    box = containment.create(name, {containment.SETTING_ENV: "tag"})
    seconds = 4000 + os.getpid() % 900
    subprocess.run(box.wrap(["sh", "-c", DAEMON.format(n=seconds, pidfile=tmp_path / "d.pid")]), env=env, timeout=30)
    containment.end(box, wait_s=0.5)
    daemons = subprocess.run(["pgrep", "-x", "-f", f"sleep {seconds}"], capture_output=True, text=True).stdout.split()
    for pid in daemons:
        os.kill(int(pid), 9)
    assert len(daemons) == 1


def test_the_subreaper_holder_passes_on_the_program_s_exit_status():
    box = Container(SUBREAPER, "lt-unit-status")
    assert subprocess.run(box.wrap(["sh", "-c", "exit 7"]), timeout=30).returncode == 7
    assert subprocess.run(box.wrap([sys.executable, "-c", "import os; os.kill(os.getpid(), 15)"]),
                          timeout=30).returncode == 128 + 15


@pytest.mark.parametrize("setting", ["cgroup", "pidns", "subreaper"])
def test_a_running_container_is_ended_by_its_name_alone(tmp_path, setting):
    """What ``Backend.kill_session`` does after the kill: no record, only the session's name (end_named)."""
    kind = containment.detect({containment.SETTING_ENV: setting})[0]
    if kind != containment.SETTINGS[setting]:
        pytest.skip(f"{setting} is not available here (detected {kind})")
    name = f"lt-unit-{os.getpid()}-named-{setting}"
    env = {**os.environ, proctree.TAG_ENV: name}
    box = containment.create(name, {containment.SETTING_ENV: setting})
    seconds = 5000 + os.getpid() % 900
    pidfile = tmp_path / "daemon.pid"
    running = subprocess.Popen(box.wrap(["sh", "-c", DAEMON.format(n=seconds, pidfile=pidfile) + "; sleep 60"]),
                               env=env, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not pidfile.is_file() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert containment.members(box), "nothing held: there is nothing to end"
        assert containment.end_named(name) == []
        running.wait(timeout=10)
    finally:
        running.kill()
        daemons = subprocess.run(["pgrep", "-x", "-f", f"sleep {seconds}"], capture_output=True,
                                 text=True).stdout.split()
        for pid in daemons:
            os.kill(int(pid), 9)
    assert daemons == [] and containment.members(box) == []


def test_a_root_cgroup_nests_a_pid_namespace_and_its_note_says_so(monkeypatch):
    """README "Nothing left running": root may write its pid into any cgroup's cgroup.procs, never leave a PID
    namespace; a root harness's cgroup-v2 holder runs the program in one inside the cgroup, and the note says so."""
    box = Container(CGROUP_V2, "lt-x", "/cg/lt-x")
    monkeypatch.setattr(containment.os, "geteuid", lambda: 0)
    monkeypatch.setattr(containment.shutil, "which", lambda name: "/usr/bin/unshare")
    assert containment.nests_pidns(box) and "--pidns" in box.wrap(["claude"], python="py")
    assert box.note().endswith("/cg/lt-x with a PID namespace inside it")
    monkeypatch.setattr(containment.os, "geteuid", lambda: 1000)
    assert not containment.nests_pidns(box) and "--pidns" not in box.wrap(["claude"], python="py")
    assert not containment.nests_pidns(Container(PID_NAMESPACE, "lt-x"))


def test_a_process_forked_while_the_cgroup_is_read_is_no_escape(tmp_path, monkeypatch):
    """The CLI forks often at start (its marketplace clone's ``git remote-https``): a process born between the read
    of the cgroup and the list of the session's processes was taken for one that left the cgroup, and the trial was
    BLOCKED ``processes_left``. The candidates are listed first, then the cgroup read."""
    me = proctree.proc(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        born = proctree.proc(child.pid)
        assert me is not None and born is not None
        box = Container(CGROUP_V2, "lt-x-s", str(tmp_path / "lt-x-s"))
        steps: list[str] = []

        def members(c):          # the session's processes: the child is born at the second look at the machine
            steps.append("members")
            return [me, born] if len(steps) > 1 else [me]

        def cgroup_pids(path):  # the cgroup holds whatever was born before it is read
            steps.append("cgroup")
            return [me.pid, born.pid] if len(steps) > 1 and path.name == "lt-x-s" else []
        monkeypatch.setattr(containment, "members", members)
        monkeypatch.setattr(containment, "cgroup_pids", cgroup_pids)
        monkeypatch.setattr(containment, "holders", lambda name, tag: [])
        monkeypatch.setattr(containment.os, "getpid", lambda: -1)
        assert containment.escaped(box) == []
        # one that really is outside the cgroup is still found, and one that ended meanwhile is not
        monkeypatch.setattr(containment, "cgroup_pids", lambda path: [])
        steps.clear()
        assert containment.escaped(box) == [me]
        child.kill()
        child.wait()
        steps.append("born")
        assert containment.escaped(box) == [me]
    finally:
        child.kill()
        child.wait()
