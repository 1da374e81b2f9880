"""``reap``'s end of what a trial whose harness is gone left (trial/orphans.py): its containers, the ones its state
records and a cgroup left in its session's name, are ended with what they hold, untagged processes included; a trial
whose harness runs is never touched, and a container ended long ago is not reported (README "Nothing left running"). Fakes only.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from live_trial.session import containment, proctree
from live_trial.trial import orphans
from tests.unit.fakes import write_state


def _gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _trial(tmp_path, skill, owner, box=None):
    wd = tmp_path / "p" / skill / "live-trial" / "20261130T101500-abcd"
    wd.mkdir(parents=True)
    write_state(wd, "p", skill)
    state = json.loads((wd / "trial-state.json").read_text())
    state.update(owner_pid=owner, containment=box.to_json() if box else None)
    (wd / "trial-state.json").write_text(json.dumps(state))
    return state["session"]


def test_reap_ends_the_containers_of_a_trial_whose_harness_is_gone(tmp_path, monkeypatch):
    gone = _gone_pid()
    dead = "lt-20261130T101500-abcd-dead"
    cg = tmp_path / "cg" / "live-trial"
    (cg / dead).mkdir(parents=True)
    (cg / f"{dead}.evaluator").mkdir()                     # the evaluator's, left though the state lost its record
    assert _trial(tmp_path, "dead", gone, containment.Container(containment.CGROUP_V2, dead, str(cg / dead))) == dead
    live = _trial(tmp_path, "live", os.getpid(), containment.Container(containment.SUBREAPER, "lt-x-live"))
    held = {dead: [proctree.Proc(41, "7")], f"{dead}.evaluator": [], live: [proctree.Proc(42, "7")]}
    ended: list[str] = []

    def end(box, **kw):
        ended.append(box.name)
        (cg / box.name).rmdir()
        return []

    monkeypatch.setattr(orphans.proctree, "all_tagged", lambda: {})
    monkeypatch.setattr(orphans.proctree, "alive", lambda p: p.pid != 41 or not ended)
    monkeypatch.setattr(orphans.proctree, "end", lambda procs, find_more=None: [])
    monkeypatch.setattr(orphans.containment, "leftover_cgroups", lambda: {
        n: containment.Container(containment.CGROUP_V2, n, str(cg / n)) for n in (dead, f"{dead}.evaluator")})
    monkeypatch.setattr(orphans.containment, "members",
                        lambda box: held.get(box.name, []) if not box.path or (cg / box.name).is_dir() else [])
    monkeypatch.setattr(orphans.containment, "end", end)
    out = orphans.end_orphans(tmp_path)
    assert sorted(ended) == [dead, f"{dead}.evaluator"]             # never the trial whose harness runs
    assert out == [{"workdir": str(tmp_path / "p" / "dead" / "live-trial" / "20261130T101500-abcd"), "session": dead,
                    "left": [], "ended": [41], "containers": [dead, f"{dead}.evaluator"]}]
    ended.clear()
    assert orphans.end_orphans(tmp_path) == [] and ended == []     # ended already: nothing to report again
