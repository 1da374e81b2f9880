"""A skill's acceptance tests, written with live_trial's pytest API (README "Testing a skill with pytest").

Each test runs a whole trial of hello:greet: the real claude CLI in tmux with the plugin pinned, watched to the
end and judged by a fresh evaluator. By default the model is scripted (a rehearsal, from the scenario given);
``pytest --live-trial-live`` runs the same tests against the real model (the scenario is then not used).
Run them with ``pytest examples/pytest`` (``-n 2`` runs two at once: each worker has its own tmux server and
folders). A test fails with the verdict's summary, its reasons and the path of the trial's report.html.
"""
from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1]
PLUGINS = EXAMPLES / "plugins"
SCENARIOS = EXAMPLES / "scenarios"


def test_greet_writes_the_greeting(live_trial_run):
    """The happy path: the skill runs to the end on its own and keeps its promise (greeting.txt)."""
    verdict = live_trial_run("hello:greet", scenario=SCENARIOS / "greet-happy.yaml", args="World",
                             plugins_root=PLUGINS)
    assert verdict.overall == "PASS"
    assert (verdict.workdir / "cwd" / "greeting.txt").read_text() == "Hello, World!\n"
    assert verdict.report is not None and verdict.report.is_file()


@pytest.mark.live_trial("hello:greet", scenario="../scenarios/greet-happy.yaml", plugins_root="../plugins",
                        args="World")
def test_greet_passes_as_a_marked_test(live_trial_verdict):
    """The same trial through the marker: it runs before the body; a verdict other than PASS fails the test."""
    assert live_trial_verdict.doc["target"] == "hello:greet"
    assert live_trial_verdict.reasons == []


def test_a_greeting_never_written_is_not_a_pass(live_trial_run):
    """A session that reports DONE without writing greeting.txt: finished, goal missed, so DEGRADED with the
    evaluator's blocker as the reason (``expect`` says which verdict this test wants)."""
    verdict = live_trial_run("hello:greet", scenario=SCENARIOS / "greet-eval-fail.yaml", plugins_root=PLUGINS,
                             expect="DEGRADED")
    assert any("greeting" in reason for reason in verdict.reasons)
