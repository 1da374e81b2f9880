"""A line of the plugins' activity as evidence (README "Evidence, watches and messages to a person"): the evaluator is
shown each line and may cite it as ``plugin-activity#<id>``; its quote must be in the line, an id the trial did not
record is refused, and the CLI's debug log itself is never a citable file."""
from __future__ import annotations

import pytest

from live_trial.judge import answer as ea
from live_trial.judge.context import Context
from live_trial.judge.prompt import build_prompt

LINE = "PostToolUse (Write) hook format.sh of kit (hooks/hooks.json): ran 3 times, ok 3"


@pytest.fixture()
def ctx(tmp_path) -> Context:
    (tmp_path / "claude-debug").mkdir()
    (tmp_path / "claude-debug" / "session.log").write_text("Hooks: PostToolUse:Write [x] finished with status 0\n")
    return Context(workdir=tmp_path, target="kit:fmt", description="formats each file it writes",
                   activity={"hook-1": LINE})


def _answer(source: str, quote: str, observed: str = "the hook formatted 3 writes, 3 of 3 ok") -> dict:
    return {"verdict": "PASS", "blockers": [], "checks": [], "unverified": [],
            "evidence": [{"claim": "the formatter hook ran after every write", "source": source, "quote": quote,
                          "observed": observed}]}


def test_the_request_lists_each_line_with_the_id_to_cite(ctx):
    prompt = build_prompt(ctx)
    assert f"- plugin-activity#hook-1 | {LINE}" in prompt


def test_a_line_of_the_activity_quoted_as_it_is_holds(ctx):
    assert ea.answer_problems(_answer("plugin-activity#hook-1", "ran 3 times, ok 3"), ctx) == []
    assert ea.answer_problems(_answer("Plugin-Activity#HOOK-1", "format.sh of kit"), ctx) == []


@pytest.mark.parametrize("source, quote, needle", [
    ("plugin-activity#hook-1", "ran 4 times", "not in the cited source"),
    ("plugin-activity#hook-9", "ran 3 times", "does not exist (the lines are hook-1)"),
    ("claude-debug/session.log", "finished with status 0", "harness writes itself"),
])
def test_a_quote_not_in_the_line_an_unknown_line_and_the_debug_log_are_refused(ctx, source, quote, needle):
    found = ea.answer_problems(_answer(source, quote), ctx)
    assert found and needle in found[0], found


def test_a_trial_that_recorded_no_activity_has_none_to_cite(tmp_path):
    ctx = Context(workdir=tmp_path, target="kit:fmt", description="d")
    [problem] = ea.answer_problems(_answer("plugin-activity#hook-1", "ran 3 times"), ctx)
    assert "this trial recorded none" in problem
    assert "plugin-activity#" not in build_prompt(ctx).split("Answer with the StructuredOutput tool")[0]
