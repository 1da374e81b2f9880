"""Finding and ending a trial's processes as a tree (session/proctree.py), on real processes: no tmux, no claude.

The shape is the one claude 2.1.197 gives a Bash tool (references/transcript-jsonl.md "Process tree"): a child in its
own session (setsid) whose own child keeps running after the parent dies, reparented away from the tree.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from live_trial.session import proctree

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")

# parent -> setsid child (its own session, like the CLI's `bash -c`) -> grandchild; prints the grandchild's pid.
SPAWN = ("import os, subprocess, sys, time\n"
         "c = subprocess.Popen(['setsid', 'sh', '-c', 'sleep 300 & echo $!; wait'], stdout=subprocess.PIPE, text=True)\n"
         "print(c.stdout.readline().strip(), flush=True)\n"
         "time.sleep(300)\n")


def _wait(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def tree(request):
    tag = f"lt-unit-{os.getpid()}-{request.node.name[:20]}"
    parent = subprocess.Popen([sys.executable, "-c", SPAWN], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, proctree.TAG_ENV: tag})
    grandchild = int(parent.stdout.readline())
    yield parent, grandchild, tag
    for p in proctree.tagged(tag):
        os.kill(p.pid, signal.SIGKILL)
    parent.kill()
    parent.wait()


def test_descendants_walk_into_a_child_that_runs_in_its_own_session(tree):
    parent, grandchild, _tag = tree
    found = [p.pid for p in proctree.descendants(parent.pid)]
    assert found[0] == parent.pid and grandchild in found and len(found) >= 3


def test_the_tag_finds_what_parentage_no_longer_does(tree):
    parent, grandchild, tag = tree
    parent.kill()
    parent.wait()
    me = proctree.proc(grandchild)
    assert me is not None and proctree.alive(me)
    assert grandchild not in [p.pid for p in proctree.descendants(parent.pid)]    # the parent is gone
    assert grandchild in [p.pid for p in proctree.tagged(tag)]                    # still carries the tag
    assert proctree.all_tagged()[tag]


def test_end_leaves_nothing_of_the_tree_nor_of_the_tag(tree):
    parent, grandchild, tag = tree
    procs = proctree.descendants(parent.pid)
    left = proctree.end(procs, find_more=lambda: proctree.tagged(tag), grace_s=0.5)
    parent.wait(timeout=10)
    assert left == []
    assert not [p for p in procs if proctree.alive(p)]
    assert proctree.tagged(tag) == []


def test_a_process_that_ignores_sigterm_gets_sigkill(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                             "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                             "time.sleep(300)\n"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    started = time.monotonic()
    assert proctree.end([proctree.proc(proc.pid)], grace_s=0.3) == []
    assert proc.wait(timeout=10) == -signal.SIGKILL and time.monotonic() - started < 5


def test_a_reused_pid_is_never_signalled():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        real = proctree.proc(proc.pid)
        other = proctree.Proc(proc.pid, str(int(real.start) + 1))      # same pid, another start time
        assert not proctree.alive(other)
        assert proctree.end([other], grace_s=0.1) == []
        assert proc.poll() is None and proctree.alive(real)
    finally:
        proc.kill()
        proc.wait()


def test_this_process_and_its_ancestors_are_never_ended(monkeypatch):
    monkeypatch.setenv(proctree.TAG_ENV, "lt-unit-self")
    me = proctree.proc(os.getpid())
    parent = proctree.proc(os.getppid())
    assert proctree.end([me, parent], grace_s=0.1) == []
    assert proctree.tagged("lt-unit-self") == []          # this process carries the tag but is never named
    assert proctree.alive(me) and proctree.alive(parent)
