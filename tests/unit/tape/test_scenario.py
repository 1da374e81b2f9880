"""A scenario written from a tape (``rehearsal from-tape``): one rule per recorded model turn, the evaluator's first,
answering as the recorded model did with placeholders where the recorded run's values were; a retried turn keeps its
recorded error once; the scenario language loads it and picks each rule for its own turn."""
from __future__ import annotations

import json

import yaml

from live_trial.rehearsal.scenario import analyse_request, load_scenario, render, select_rule
from live_trial.tape.scenario import scenario_of, scenario_text

from .tapes import WORKDIR, count_trial, entry, prompt, request, sse

EVALUATOR_PROMPT = ("Index of its records (uuid | type | tools | beginning):\n"
                    "- 0a0a0a0a-0000-4000-8000-00000000000a | user | - |  | (a prompt)\n"
                    "- 1b1b1b1b-0000-4000-8000-00000000000b | assistant | Skill | {\"skill\": \"kit:count\"}\n")


def evaluator_turn(seq: int):
    body = request({"role": "user", "content": EVALUATOR_PROMPT},
                   tools=[{"name": "StructuredOutput", "input_schema": {}}])
    answer = sse("msg_01E", {"type": "tool_use", "id": "toolu_09", "name": "StructuredOutput", "input": {
        "verdict": "PASS", "blockers": [], "checks": [], "evidence": [{
            "claim": "the skill ran", "source": "1b1b1b1b-0000-4000-8000-00000000000b", "quote": "kit:count",
            "observed": "1 call"}]}})
    return entry(seq, body, answer)


def test_one_rule_per_recorded_turn_with_placeholders_for_the_recorded_values() -> None:
    tape = [*count_trial(), evaluator_turn(5)]
    doc = scenario_of(tape, "count")
    assert [r["id"] for r in doc["rules"]] == ["evaluator-turn-1", *(f"session-turn-{n}" for n in range(1, 5))]
    assert [r["when"] for r in doc["rules"][1:]] == [{"human_turn": 1, "step": n} for n in range(4)]
    write = doc["rules"][3]["reply"]["content"][0]["tool_use"]
    assert write == {"name": "Write", "input": {"file_path": "{{cwd}}/count.txt", "content": "items: 3\n"},
                     "id": "toolu_03"}
    bash = doc["rules"][2]["reply"]["content"][0]["tool_use"]["input"]["command"]
    assert bash == "bash /home/me/plugins/kit/skills/count/scripts/count.sh"    # never named in its own request
    source = doc["rules"][0]["reply"]["content"][0]["tool_use"]["input"]["evidence"][0]["source"]
    assert source == r"{{re:- ([0-9a-fA-F-]{36}) \| assistant \| Skill \| }}"
    scenario = load_scenario(yaml.safe_load(scenario_text(tape, "count", "model-tape.jsonl")))
    # the rule of each recorded request is the one the scenario language picks for it
    for rule_id, e in zip(["session-turn-1", "session-turn-2", "session-turn-3", "session-turn-4",
                           "evaluator-turn-1"], tape):
        view = analyse_request(json.loads(json.dumps(e.request.body).replace("<workdir>", WORKDIR)))
        picked = select_rule(scenario, view)
        assert picked is not None and picked.id == rule_id
    filled = render({"s": source}, analyse_request({"messages": [{"role": "user", "content": EVALUATOR_PROMPT
                                                                  .replace("1b1b1b1b", "2c2c2c2c")}]}), [])
    assert filled["s"] == "2c2c2c2c-0000-4000-8000-00000000000b"


def test_a_retried_turn_answers_its_recorded_error_once() -> None:
    body = request(prompt())
    overloaded = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    doc = scenario_of([entry(1, body, overloaded, status=529), entry(2, body, sse("m", {"type": "text", "text": "ok"}))],
                      "retried")
    first, second = doc["rules"]
    assert first["times"] == 1 and first["reply"] == {"error": {"status": 529, "type": "overloaded_error",
                                                                "message": "Overloaded"}}
    assert "times" not in second and second["reply"]["content"] == [{"text": "ok"}]
