"""``live-trial rehearsal new``: the scenario it writes loads, plays the skill by the name the CLI needs, and its
evaluator answer holds under the evidence rules for the file its Write makes (judge.answer.review on that file's
copy). That it runs to PASS on the real CLI is tests/e2e/test_by_hand.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from live_trial.cli.main import main
from live_trial.closure.target import resolve_target
from live_trial.judge.answer import review, settle
from live_trial.judge.evaluator import build_context
from live_trial.rehearsal.scaffold import promised_file, scenario_text
from live_trial.rehearsal.scenario import analyse_request, load_scenario, render
from live_trial.trial.changes import session_output

ROOT = Path(__file__).resolve().parents[3]
PLUGINS = ROOT / "examples" / "plugins"
SKILL_MD = """---
name: summarize
description: Reads notes.txt and writes a summary to summary.md with one bullet per topic. Use when asked to summarize.
allowed-tools: Skill, Read, Write
feedback_contract:
  criteria:
    - {id: OUT1, text: summary.md has one bullet per topic, verify_by: evaluator}
    - {id: IN1, text: the bullet writer is unit tested, verify_by: test}
---
body
"""


def fresh_plugin(tmp_path: Path) -> Path:
    root = tmp_path / "plugins"
    (root / "notes" / ".claude-plugin").mkdir(parents=True)
    (root / "notes" / ".claude-plugin" / "plugin.json").write_text('{"name": "notes", "version": "0.1.0"}')
    (root / "notes" / "skills" / "summarize").mkdir(parents=True)
    (root / "notes" / "skills" / "summarize" / "SKILL.md").write_text(SKILL_MD)
    return root


@pytest.mark.parametrize("description, skill, expected", [
    ("Writes a greeting file greeting.txt in the current working folder", "greet", "greeting.txt"),
    ("Summarizes into docs/summary.md for the team", "summarize", "docs/summary.md"),
    ("Reads notes.txt and writes a summary to summary.md", "summarize", "summary.md"),
    ("Checks config.yaml for typos", "lint", "config.yaml"),
    ("Sends a message to the channel", "Post Message", "post-message-output.txt"),
    ("", "x", "x-output.txt"),
])
def test_the_promised_file_comes_from_the_description(description, skill, expected):
    assert promised_file(description, skill) == expected


def _view(marker: str, cwd: str):
    task = f'Skill({{skill: "t", args: "World"}})\nCompletion marker: {marker}\n'
    return analyse_request({"model": "m", "tools": [{"name": "Skill"}],
                            "system": [{"type": "text", "text": f" - Primary working directory: {cwd}"}],
                            "messages": [{"role": "user", "content": [{"type": "text", "text": task}]}]})


def _rules(text: str) -> dict:
    return {r.id: r for r in load_scenario(yaml.safe_load(text)).rules}


@pytest.mark.parametrize("gate, no_marker", [(False, False), (True, False), (False, True), (True, True)])
def test_every_variant_loads_and_calls_the_skill_by_its_qualified_name(gate, no_marker):
    rules = _rules(scenario_text("hello:greet", "writes greeting.txt", [], gate=gate, no_marker=no_marker))
    assert list(rules)[0] == "evaluator-verdict"
    assert rules["evaluator-verdict"].when == {"tools_include": ["StructuredOutput"]}
    misses: list[str] = []
    call = render(rules["skill-call"].reply, _view("/w/out/status.json", "/w/cwd"), misses)
    assert call["content"][1]["tool_use"] == {"name": "Skill", "input": {"skill": "hello:greet", "args": "World"}}
    assert ("ask" in rules) is gate and ("write-marker" in rules) is (not no_marker)
    first_work = rules["ask"] if gate else rules["write-output"]
    assert first_work.when["last_tool_result"]["content"] == "Launching skill: hello:greet"
    if gate:
        question = rules["ask"].reply["content"][1]["tool_use"]
        assert question["name"] == "AskUserQuestion"
        assert [o["label"] for o in question["input"]["questions"][0]["options"]] == ["Go on", "Stop"]
    if not no_marker:
        mark = render(rules["write-marker"].reply, _view("/w/out/status.json", "/w/cwd"), misses)
        assert mark["content"][0]["tool_use"]["input"]["file_path"] == "/w/out/status.json"
    assert misses == []
    steps = [r.when.get("step") for r in rules.values() if "step" in r.when and r.id != "cancelled"]
    assert steps == list(range(len(steps)))          # one rule per step, in order


def _judged(tmp_path: Path, target, text: str) -> tuple[dict, object]:
    """The generated evaluator answer, reviewed against a workdir whose session wrote what the Write rule writes."""
    rules = _rules(text)
    wd = tmp_path / "wd"
    write = render(rules["write-output"].reply, _view(str(wd / "out" / "status.json"), str(wd / "cwd")), [])
    written = write["content"][0]["tool_use"]["input"]
    rel = Path(written["file_path"]).relative_to(wd / "cwd").as_posix()
    copy = wd / "side-effects" / "files" / rel
    copy.parent.mkdir(parents=True)
    copy.write_text(written["content"])
    (wd / "side-effects" / "files.json").write_text(json.dumps({"added": [rel], "changed": [], "removed": [],
                                                                "copied": [rel]}))
    answer = rules["evaluator-verdict"].reply["content"][0]["tool_use"]["input"]
    ctx = build_context(wd, target, session_output(wd))
    return answer, ctx


def test_the_evaluator_answer_holds_under_the_evidence_rules_for_the_example_skill(tmp_path):
    target = resolve_target("hello:greet", PLUGINS)
    answer, ctx = _judged(tmp_path, target, scenario_text(target.qualified, target.frontmatter["description"], []))
    checked = review(answer, ctx)
    assert checked.problems == [] and [i["source"] for i in checked.items] == ["side-effects/files/greeting.txt"]
    assert settle(answer, ctx, checked)["goal_result"] == "PASS"


def test_a_fresh_skill_gets_its_own_file_and_a_passing_check_per_judged_criterion(tmp_path, capsys):
    plugins = fresh_plugin(tmp_path)
    assert main(["rehearsal", "new", "notes:summarize", "--plugins-root", str(plugins)]) == 0
    text = capsys.readouterr().out
    assert "# Reads notes.txt and writes a summary to summary.md" in text
    target = resolve_target("notes:summarize", plugins)
    answer, ctx = _judged(tmp_path, target, text)
    assert [c["id"] for c in answer["checks"]] == ["OUT1"]                  # IN1 is verified by a test, not here
    checked = review(answer, ctx)
    assert checked.problems == [] and checked.items[0]["source"] == "side-effects/files/summary.md"
    assert settle(answer, ctx, checked)["goal_result"] == "PASS"


def test_new_writes_a_file_once_and_refuses_an_unknown_skill(tmp_path, capsys):
    out = tmp_path / "greet.yaml"
    assert main(["rehearsal", "new", "hello:greet", "--plugins-root", str(PLUGINS), "--gate", "-o", str(out)]) == 0
    printed = capsys.readouterr().err       # the command to run it, with the plugins root it was found under
    assert f'live-trial run hello:greet --plugins-root {PLUGINS} --rehearsal {out} --gate-response "Go on"' in printed
    assert load_scenario(out).rules
    before = out.read_bytes()
    assert main(["rehearsal", "new", "hello:greet", "--plugins-root", str(PLUGINS), "-o", str(out)]) == 2
    assert "exists" in capsys.readouterr().err and out.read_bytes() == before
    assert main(["rehearsal", "new", "hello:nope", "--plugins-root", str(PLUGINS)]) == 2


def test_an_activation_case_has_two_should_and_two_should_not_prompts_its_scenario_tells_apart(tmp_path, capsys):
    """README "Does it start by itself?": ``rehearsal new --activation --suite FILE --case NAME`` appends an activation
    case (none of its prompts names the skill) and writes a scenario whose rules tell each prompt apart by a regex on
    the first prompt: the Skill call for those that should start it, plain text for the others."""
    import shutil

    from live_trial.acceptance.suite import load_suite
    from live_trial.rehearsal.scenario import select_rule

    shutil.copytree(PLUGINS / "hello", tmp_path / "hello")
    suite = tmp_path / "hello" / "live-trials.yaml"
    assert main(["rehearsal", "new", "hello:greet", "--plugins-root", str(tmp_path), "--activation", "--suite",
                 str(suite), "--case", "words"]) == 0
    assert "the case words of greet" in capsys.readouterr().err
    case = next(c for c in load_suite(suite).cases["greet"] if c.name == "words")
    assert case.activation and case.stop_after_trigger
    assert [p.should_trigger for p in case.prompts] == [True, True, False, False]
    assert not any("greet" in p.text or "hello" in p.text for p in case.prompts)
    scenario = load_scenario(case.scenario)
    for prompt in case.prompts:
        body = {"model": "m", "tools": [{"name": "Skill"}], "messages": [{"role": "user", "content": prompt.text}]}
        rule = select_rule(scenario, analyse_request(body))
        called = any("tool_use" in block for block in rule.reply["content"])
        assert called == prompt.should_trigger, (prompt.text, rule.id)
    assert main(["rehearsal", "new", "hello:greet", "--plugins-root", str(tmp_path), "--activation", "--gate"]) == 2
