"""A request no rule of a rehearsal scenario answers is the scenario's gap, never the skill's doing: a trial's server
answers it with an error the CLI does not retry and names it once (its whose, human_turn, step and last input), and
``rehearsal check`` says, before any run, when no rule can answer a trial's first request or its evaluator's
(references/scenario-format.md)."""
from __future__ import annotations

import json

import pytest

from live_trial.cli.main import main
from live_trial.rehearsal.coverage import gaps
from live_trial.rehearsal.scenario import NO_RULE_TEXT, load_scenario
from live_trial.rehearsal.server import RehearsalServer

from .test_rehearsal import body, post, prompt, tool_turn

EVALUATOR_TOOLS = [{"name": n, "input_schema": {"type": "object"}} for n in ("Read", "Glob", "Grep",
                                                                               "StructuredOutput")]
SKILL = {"id": "skill", "when": {"step": 0, "human_turn": 1, "tools_include": ["Skill"]},
         "reply": {"content": [{"text": "calling it"}]}}


def test_a_trials_server_answers_a_request_no_rule_matches_with_an_error_and_names_it_once() -> None:
    told = []
    server = RehearsalServer({"rules": [SKILL]}, on_unmatched=told.append).start()
    try:
        assert post(server, body([prompt("Run the skill.")]))[0] == 200
        later = body([prompt("Run the skill."), *tool_turn("t1", "Skill", "Launching skill: kit:greet")])
        replies = [post(server, later) for _ in range(2)]            # the CLI's own retry of it too
    finally:
        server.stop()
    status, text = replies[0]
    error = json.loads(text)["error"]
    assert status == 400 and error["type"] == "invalid_request_error"       # the CLI does not retry a 400
    assert error["message"].startswith(NO_RULE_TEXT)
    assert len(told) == 1 and told[0] is server.unmatched and (told[0].role, told[0].human_turn,
                                                                  told[0].step) == ("session", 1, 1)
    assert told[0].sentence() == ("no rule matches the session's request at human_turn 1, step 1 (its last "
                                  'tool_result: "Launching skill: kit:greet")')
    assert [r["rule_missed"] for r in server.requests] == [False, True, True]


def test_an_evaluator_request_no_rule_matches_is_named_as_the_evaluators_with_its_prompt() -> None:
    server = RehearsalServer({"rules": [SKILL]}, on_unmatched=lambda _: None).start()
    try:
        status, _ = post(server, body([prompt("Judge the run.\n- side-effects/files/a.txt | 3 bytes")],
                                      tools=EVALUATOR_TOOLS))
    finally:
        server.stop()
    assert status == 400 and server.unmatched is not None
    assert server.unmatched.sentence() == ("no rule matches the evaluator's request at human_turn 1, step 0 (its "
                                           'last prompt: "Judge the run. - side-effects/files/a.txt | 3 bytes")')


def test_without_a_trial_the_server_still_answers_the_plain_text(rehearsal_server) -> None:
    srv = rehearsal_server({"rules": [SKILL]})
    _, text = post(srv, body([prompt("hi")], tools=EVALUATOR_TOOLS, stream=False))
    assert json.loads(text)["content"] == [{"type": "text", "text": NO_RULE_TEXT}] and srv.unmatched is None


@pytest.mark.parametrize("when,session,evaluator", [
    ({"human_turn": 5}, False, False),
    ({"step": 0, "human_turn": 1, "tools_include": ["Skill"]}, True, False),
    ({"tools_include": ["StructuredOutput"]}, False, True),
    ({"step": 0}, True, True),
    ({"step": 1}, False, False),
    ({"last_tool_result": {"present": False}, "last_prompt": "anything"}, True, True),
    ({"last_tool_result": {"content": "Launching"}}, False, False),
    ({"tools_exclude": ["Skill"]}, False, True),
    ({"subagent": True}, False, False),
    ({"task_notification": True}, False, False),
    ({"compaction": True}, False, False),
    ({"attempt": 2}, False, False),
])
def test_check_says_which_first_request_no_rule_can_answer(when: dict, session: bool, evaluator: bool) -> None:
    found = gaps(load_scenario({"rules": [{"id": "only", "when": when, "reply": {"content": [{"text": "x"}]}}]}))
    assert [w.split(" (")[0] for w in found] == [
        *(["no rule can answer the session's first request"] if not session else []),
        *(["no rule can answer the evaluator's request"] if not evaluator else [])]


def test_rehearsal_check_prints_what_it_checked_and_warns_of_a_first_turn_no_rule_answers(tmp_path, capsys) -> None:
    path = tmp_path / "late.yaml"
    path.write_text("rules:\n  - id: late\n    when: {human_turn: 5}\n    reply: {content: [{text: x}]}\n")
    assert main(["rehearsal", "check", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("OK: ") and out[1].startswith("checked: the schema")
    assert out[2].startswith("WARNING: no rule can answer the session's first request") and \
        out[2].endswith("stops BLOCKED scenario_unmatched at its first turn")
    assert out[3].startswith("WARNING: no rule can answer the evaluator's request") and len(out) == 4
    assert main(["rehearsal", "check", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["warnings"]) == 2 and doc["checked"].startswith("the schema")
