"""Unit tests of scenario loading, request analysis, matching and templating (pure; no network)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.cli.main import main
from live_trial.errors import RefusedInput
from live_trial.rehearsal.scenario import analyse_request, conversation_key, load_scenario, render

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, field", [
    ("name: x\n", "<root>"),
    ("rules:\n  - reply: {stop_reason: nope}\n", "rules/0/reply/stop_reason"),
    ("rules:\n  - when: {stepp: 1}\n    reply: {}\n", "rules/0/when"),
    ("rules:\n  - when: {step: -1}\n    reply: {}\n", "rules/0/when/step"),
    ("rules:\n  - reply: {content: [{tool_use: {input: {}}}]}\n", "rules/0/reply/content/0/tool_use"),
    ("rules:\n  - reply: {error: {status: 200}}\n", "rules/0/reply/error/status"),
    ("rules:\n  - reply: {hang: sometimes}\n", "rules/0/reply/hang"),
    ("rules:\n  - when: {first_prompt: '(unclosed'}\n    reply: {}\n", "rules/0/when/first_prompt"),
    ("rules:\n  - when: {last_tool_result: {content: '[x'}}\n    reply: {}\n", "rules/0/when/last_tool_result/content"),
    ("rules:\n  - reply: {content: [{text: '{{re:no group}}'}]}\n", "rules/0/reply/content/0/text"),
    ("rules:\n  - reply: {content: [{text: '{{nosuch}}'}]}\n", "rules/0/reply/content/0/text"),
])
def test_malformed_scenario_is_one_line_naming_file_and_field(tmp_path, text, field):
    path = write(tmp_path, text)
    with pytest.raises(RefusedInput) as info:
        load_scenario(path)
    msg = info.value.message
    assert "\n" not in msg
    assert str(path) in msg
    assert f"field {field}" in msg
    assert info.value.exit_code == 2


def test_invalid_yaml_names_the_line(tmp_path):
    path = write(tmp_path, "rules:\n  - reply: {content: [\n")
    with pytest.raises(RefusedInput) as info:
        load_scenario(path)
    assert "not valid YAML at line" in info.value.message and str(path) in info.value.message


def test_missing_file(tmp_path):
    with pytest.raises(RefusedInput, match="scenario file not found"):
        load_scenario(tmp_path / "nope.yaml")


def test_cli_check_exit_codes(tmp_path, capsys):
    assert main(["rehearsal", "check", str(EXAMPLES / "greet-happy.yaml")]) == 0
    assert capsys.readouterr().out.startswith("OK: greet-happy:")
    bad = write(tmp_path, "rules: 3\n")
    assert main(["rehearsal", "check", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("REFUSED: malformed scenario: field rules") and len(err.splitlines()) == 1


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_scenario_loads(path):
    scenario = load_scenario(path)
    assert scenario.rules and len({r.id for r in scenario.rules}) == len(scenario.rules)


def _greet_task(marker: str) -> str:
    return ("# Live trial task\n\n1. Invoke the skill with this literal call, and nothing else first:\n"
            '   Skill({skill: "hello:greet", args: "World"})\n'
            f"4. ...\n   Completion marker: {marker}\n"
            '   Its content is JSON: {"status": "<ok or failed>", "summary": "<one line>"}\n')


def test_greet_happy_templates_pick_the_marker_and_args():
    scenario = load_scenario(EXAMPLES / "greet-happy.yaml")
    marker = "/tmp/eval log/x/out/status.json"  # spaces in the eval root are allowed
    view = analyse_request({"model": "m", "tools": [{"name": "Skill"}],
                            "system": [{"type": "text", "text": " - Primary working directory: /tmp/my project"}],
                            "messages": [{"role": "user", "content": [{"type": "text", "text": _greet_task(marker)}]}]})
    rules = {r.id: r for r in scenario.rules}
    misses: list[str] = []
    skill = render(rules["skill-call"].reply, view, misses)
    assert skill["content"][1]["tool_use"]["input"] == {"skill": "hello:greet", "args": "World"}
    greet = render(rules["write-greeting"].reply, view, misses)
    assert greet["content"][0]["tool_use"]["input"]["file_path"] == "/tmp/my project/greeting.txt"
    mark = render(rules["write-marker"].reply, view, misses)
    assert mark["content"][0]["tool_use"]["input"]["file_path"] == marker
    assert json.loads(mark["content"][0]["tool_use"]["input"]["content"])["status"] == "ok"
    assert misses == []


def test_analyse_request_basics():
    view = analyse_request({
        "model": "claude-x", "stream": True, "tools": [{"name": "Read"}],
        "system": [{"type": "text", "text": "env\n - Primary working directory: /w/d\n - Is a git repository: false"}],
        "metadata": {"user_id": json.dumps({"session_id": "abc"})},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
                                         {"type": "text", "text": "first prompt"}]},
            {"role": "system", "content": "listing"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"p": 1}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                          "content": [{"type": "text", "text": "line one"}], "is_error": True},
                                         {"type": "text", "text": "skill body"}]},
        ]})
    assert (view.step, view.human_turn, view.message_count, view.side_query) == (1, 1, 4, False)
    assert view.first_prompt == "first prompt" == view.last_prompt
    assert view.last_tool_result == {"content": "line one", "is_error": True, "tool_use_id": "t"}
    assert view.conversation_id == "abc" and view.stream
    misses: list[str] = []
    assert render("{{cwd}} {{session_id}} {{re:line (\\w+)}} {{re:\"p\": (\\d)}}", view, misses) == "/w/d abc one 1"
    assert misses == []


def test_conversation_key_variants():
    assert conversation_key({"metadata": {"user_id": json.dumps({"session_id": "s1"})}}) == "s1"
    legacy = "user_x_account__session_0a1b2c3d-0000-4000-8000-000000000001"
    assert conversation_key({"metadata": {"user_id": legacy}}) == "0a1b2c3d-0000-4000-8000-000000000001"
    assert conversation_key({}) == ""


def test_placeholder_regex_with_braces():
    view = analyse_request({"model": "m", "tools": [{"name": "x"}],
                            "messages": [{"role": "user", "content": "uuid 1234abcd-ef"}]})
    assert render("{{re:([0-9a-f]{8})}}", view, []) == "1234abcd"


def test_a_non_mapping_file_is_refused_without_echoing_its_content(tmp_path):
    from live_trial.errors import RefusedInput

    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:secret-value-123\n")
    with pytest.raises(RefusedInput) as err:
        load_scenario(secret)
    assert "secret-value-123" not in err.value.message and "not a mapping" in err.value.message
