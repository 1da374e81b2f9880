"""What a session of one activation prompt says of why it stopped (README "Does it start by itself?"); the sessions
themselves run on the real CLI in tests/e2e/test_activation.py and tests/e2e/test_plugin_activity.py."""
from __future__ import annotations

from live_trial.trial.prompt_run import cause_note

HELD = ("containment: cgroup-v2: the trial's processes were held by the cgroup v2 subtree /sys/fs/cgroup/x with a PID "
        "namespace inside it")


def test_the_cause_of_a_stop_is_named_never_the_line_saying_what_held_the_processes():
    gap = "the scenario does not cover this run: no rule matches the session's request at human_turn 1, step 0"
    assert cause_note([gap, HELD]) == gap
    assert cause_note([HELD]) is None and cause_note([]) is None
