"""What ``reap`` ends besides sessions: the processes of trials whose harness is gone (README "Nothing left running").

A trial's processes are held in its container (:mod:`live_trial.session.containment`, recorded in its state as
``containment`` and, while the evaluator runs, ``evaluator_containment``; a cgroup left under ``live-trial/`` is found
by the session's name too): ``reap`` ends those containers, untagged processes included. They also carry its tag
(:mod:`live_trial.session.proctree`): the trial's claude and its tools, also after their pane died and they were
reparented, and the evaluator. ``reap`` kills the sessions whose harness is gone (each with its process tree); this
module then ends, for every trial of an eval root whose harness is gone, its containers, whatever still carries its tag
and the evaluator its state records. A trial whose harness runs (its ``owner_pid``) is never touched, nor one whose
session ``reap`` kept (a session driven by hand whose lease holds: its shell is gone, its claude is not a leftover;
README "The steps, one by one").
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Collection

from live_trial.errors import LiveTrialError
from live_trial.jsonfile import read_json
from live_trial.session import containment, proctree
from live_trial.session.rules import pid_alive
from live_trial.workdir_files import TRIAL_STATE

STATE_GLOB = f"*/*/live-trial/*/{TRIAL_STATE}"
#: The sessions of an activation run's prompts (README "Does it start by itself?").
PROMPT_STATE_GLOB = f"*/*/live-trial-activation/*/prompts/*/{TRIAL_STATE}"


def _box(doc: Any) -> containment.Container | None:
    return containment.Container.from_json(doc) if isinstance(doc, dict) else None


def end_orphans(eval_root: Path, keep: Collection[str] = ()) -> list[dict[str, Any]]:
    """End the leftover processes of every trial under ``eval_root`` whose harness is gone and whose session is not in
    ``keep`` (the sessions reap kept: a live lease). Returns one ``{"workdir", "session", "ended": [pids], "left":
    [pids], "containers": [names]}`` per trial that had some (processes, or a container not yet removed). Raises
    nothing for an unreadable state (it is skipped)."""
    tagged = proctree.all_tagged()       # the evaluator carries the tag too
    cgroups = containment.leftover_cgroups()
    root = Path(eval_root)
    if not (tagged or cgroups) or not root.is_dir():
        return []
    out = []
    for path in sorted([*root.glob(STATE_GLOB), *root.glob(PROMPT_STATE_GLOB)]):
        try:
            state = read_json(path, "trial-state.schema.json")
        except LiveTrialError:
            continue
        session = state["session"]
        if pid_alive(int(state["owner_pid"])) or session in keep:
            continue
        boxes = {b.name: b for b in (_box(state.get("containment")), _box(state.get("evaluator_containment"))) if b}
        for name in (session, session + containment.EVALUATOR_SUFFIX):
            if name in cgroups:
                boxes.setdefault(name, cgroups[name])
        procs = set(tagged.get(session, []))
        for name, box in list(boxes.items()):
            held = containment.members(box)
            procs |= set(held)
            if not held and not (box.path and Path(box.path).is_dir()):
                del boxes[name]         # ended long ago: nothing of it is left
        ev = state.get("evaluator")
        if ev:
            procs.add(proctree.Proc(int(ev["pid"]), str(ev["start"])))
        found = [p for p in procs if proctree.alive(p)]
        left = [p for box in boxes.values() for p in containment.end(box)]
        left += proctree.end(found, find_more=functools.partial(proctree.tagged, session))
        if not found and not boxes:
            continue
        left = sorted({p for p in left if proctree.alive(p)}, key=lambda p: p.pid)
        out.append({"workdir": str(path.parent), "session": session, "left": [p.pid for p in left],
                    "ended": sorted(p.pid for p in found if p not in left), "containers": sorted(boxes)})
    return out
