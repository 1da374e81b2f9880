"""Where a replay left its tape (live_trial/tape/diverge.py): the nearest recorded request of the same role, and the
first difference named as a person looks for it: the message, the tool whose result changed, what was recorded and
what came now; else the system prompt, the tools or the model."""
from __future__ import annotations

import json

from live_trial.tape.diverge import difference, explain
from live_trial.tape.file import describe_request

from .tapes import ROOTS, TOOLS, call, count_trial, prompt, request, result


def req(body: dict):
    return describe_request("POST", "/v1/messages?beta=true", json.dumps(body).encode(), ROOTS)


def test_a_changed_tool_result_is_named_with_its_tool_the_turn_and_both_texts() -> None:
    tape = count_trial()
    body = request(prompt(), call("toolu_01", "Skill", {"skill": "kit:count"}),
                   result("toolu_01", "Launching skill: kit:count"),
                   call("toolu_02", "Bash", {"command": "bash /home/me/plugins/kit/skills/count/scripts/count.sh"}),
                   result("toolu_02", "items: 4"))
    div = explain(req(body), 3, tape)
    assert (div.role, div.turn, div.request, div.tape_seq) == ("session", 3, 3, 3)
    assert div.sentence() == ('turn 3 of the session (request 3): message 5 (user): the tool_result of Bash '
                              '(toolu_02) changed: recorded "items: 3", now "items: 4"')


def test_other_first_differences_are_named_too() -> None:
    base = request(prompt())
    assert difference(base, request(prompt(), call("t", "Bash", {}), result("t", "x"))).startswith(
        "message 2 (assistant) is new")
    assert difference(base, {**base, "tools": TOOLS[:2]}) == "the tools offered changed: gone Write"
    changed = {**base, "system": [{"type": "text", "text": "Primary working directory: elsewhere"}]}
    assert difference(base, changed).startswith('the system prompt changed: recorded "')
    assert difference(base, request(prompt("Do something else."))).startswith("message 1 (user): its text changed")


def test_a_role_the_tape_never_recorded_is_said_so() -> None:
    body = request(prompt(), tools=[{"name": "StructuredOutput", "input_schema": {}}])
    assert explain(req(body), 9, count_trial()).difference == "the tape holds no request of the evaluator"


def test_a_quote_is_plain_text_never_html_escaped() -> None:
    """2.1.332 sends the skill listing's descriptions HTML-escaped in its system message; the sentence quotes them as a
    person reads them, unless the escape is itself the difference. A prompt or a tool result is quoted as sent."""
    def listing(text: str) -> dict:
        return {"role": "system", "content": [{"type": "text", "text": f"The following skills are available:\n{text}"}]}
    line = "- kit:greet: writes one line \"Hello, &lt;name&gt;!\" (name from the arguments)"
    said = difference(request(prompt(), listing(line)), request(prompt(), listing(line.replace("one line", "a line"))))
    assert said.startswith("message 2 (system): its text changed") and "Hello, <name>!" in said, said
    assert "&lt;" not in said and "&gt;" not in said, said
    said = difference(request(prompt(), listing("a &lt;b&gt;")), request(prompt(), listing("a <b>")))
    assert said.endswith('a &lt;b&gt;", now "…e available:\na <b>"'), said
    said = difference(request(prompt("page &lt;p&gt; one")), request(prompt("page &lt;p&gt; two")))
    assert "&lt;p&gt;" in said, said


def test_a_run_asking_for_another_model_than_the_recording_says_which_to_replay_with() -> None:
    """A tape recorded with --model X and replayed without it (the CLI's default) differs from its first turn: the
    sentence names both models and the --model to give, before the first difference (README "Replaying a real trial
    offline")."""
    body = {**request(prompt()), "model": "claude-opus-5-5"}
    div = explain(req(body), 1, count_trial())
    assert div.difference.startswith("the tape was recorded with the model claude-opus-4-8, this run asks for "
                                     "claude-opus-5-5: replay it with --model claude-opus-4-8 (then: ")
