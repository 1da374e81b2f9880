"""What ``reap`` ends besides sessions: the processes of trials whose harness is gone (README "Nothing left running").

A trial's processes carry its tag (:mod:`live_trial.session.proctree`): the trial's claude and its tools, also after
their pane died and they were reparented, and the evaluator. ``reap`` kills the sessions whose harness is gone (each
with its process tree); this module then ends, for every trial of an eval root whose harness is gone, whatever still
carries its tag and the evaluator its state records. A trial whose harness runs (its ``owner_pid``) is never touched,
nor one whose session ``reap`` kept (a session driven by hand whose lease holds: its shell is gone, its claude is not
a leftover; README "The steps, one by one").
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Collection

from live_trial.errors import LiveTrialError
from live_trial.jsonfile import read_json
from live_trial.session import proctree
from live_trial.session.rules import pid_alive
from live_trial.workdir_files import TRIAL_STATE

STATE_GLOB = f"*/*/live-trial/*/{TRIAL_STATE}"


def end_orphans(eval_root: Path, keep: Collection[str] = ()) -> list[dict[str, Any]]:
    """End the leftover processes of every trial under ``eval_root`` whose harness is gone and whose session is not in
    ``keep`` (the sessions reap kept: a live lease). Returns one ``{"workdir", "session", "ended": [pids], "left":
    [pids]}`` per trial that had some. Raises nothing for an unreadable state (it is skipped)."""
    tagged = proctree.all_tagged()       # the evaluator carries the tag too: nothing tagged, nothing to end
    root = Path(eval_root)
    if not tagged or not root.is_dir():
        return []
    out = []
    for path in sorted(root.glob(STATE_GLOB)):
        try:
            state = read_json(path, "trial-state.schema.json")
        except LiveTrialError:
            continue
        if pid_alive(int(state["owner_pid"])) or state["session"] in keep:
            continue
        procs = list(tagged.get(state["session"], []))
        ev = state.get("evaluator")
        if ev:
            procs.append(proctree.Proc(int(ev["pid"]), str(ev["start"])))
        procs = [p for p in procs if proctree.alive(p)]
        if not procs:
            continue
        left = proctree.end(procs, find_more=functools.partial(proctree.tagged, state["session"]))
        out.append({"workdir": str(path.parent), "session": state["session"],
                    "ended": sorted(p.pid for p in procs if p not in left), "left": sorted(p.pid for p in left)})
    return out
