"""The ledger of a trial's plugin activity (live_trial/session/plugin_activity.py), built from what 2.1.197 and
2.1.332 recorded for the same plugin (tests/unit/transcripts/cli*-plugin-activity.*), and what it means for the
verdict (README "Whose failure it is")."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.closure.declared import DeclaredServer, PluginHook
from live_trial.closure.hook_commands import declared_hooks
from live_trial.jsonfile import schema_errors
from live_trial.session.activity_judgement import judge_activity
from live_trial.session.plugin_activity import (
    PluginActivity,
    StandIn,
    activity_lines,
    build_activity,
    named_servers,
)
from live_trial.stop_reasons import StopReason
from live_trial.transcript.debug_log import read_debug_log
from live_trial.transcript.hook_records import HookRecords, read_hook_records
from live_trial.transcript.reader import iter_records

HERE = Path(__file__).resolve().parents[1] / "transcripts"
ROOT = "/tmp/obs/plugins/obskit"        # the plugin folder the recordings were made with
L = 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/log.sh" '
HOOKS = {"hooks": {
    "SessionStart": [{"hooks": [{"command": L + "SessionStart"}]}],
    "UserPromptSubmit": [{"hooks": [{"command": L + "UserPromptSubmit"}]}],
    "PreToolUse": [{"matcher": "Write", "hooks": [{"command": L + "PreToolUse"}]}],
    "PostToolUse": [{"matcher": "Write", "hooks": [
        {"command": L + "PostToolUse-ok"}, {"command": L + "PostToolUse-fail 1 'format failed: bad indent'"},
        {"command": "${CLAUDE_PLUGIN_ROOT}/hooks/noexec.sh"}, {"command": "${CLAUDE_PLUGIN_ROOT}/hooks/slow.sh",
                                                              "timeout": 1}]},
                    {"matcher": "mcp__.*", "hooks": [{"command": L + "PostToolUse-mcp"}]}],
    "Stop": [{"hooks": [{"command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/stop-once.sh"'}]}],
    "SubagentStop": [{"hooks": [{"command": L + "SubagentStop"}]}]}}
SERVERS = [DeclaredServer("obskit", s, ".mcp.json", ("python3", "${CLAUDE_PLUGIN_ROOT}/bin/mcp_echo.py", mode))
           for s, mode in (("echo", "ok"), ("broken", "exit"), ("fragile", "die-after-call"))]


def _activity(cli: str, *, source: str = "plugin", log: bool = True, stand_ins=()) -> PluginActivity:
    hooks = [(PluginHook("obskit", "hooks/hooks.json", h), source) for h in declared_hooks(HOOKS)]
    records = read_hook_records(iter_records(HERE / f"cli{cli}-plugin-activity.jsonl"))
    debug = read_debug_log(HERE / f"cli{cli}-plugin-activity.debug.log") if log else None
    return build_activity(hooks, SERVERS, stand_ins, records, debug, target_plugin="obskit", roots={"obskit": ROOT})


def test_with_a_debug_log_that_names_each_run_every_hook_is_counted():
    lines = dict(activity_lines(_activity("332")))
    assert lines["hook-1"] == "SessionStart hook log.sh of obskit (hooks/hooks.json): ran 1 time, ok 1"
    assert lines["hook-8"] == "PostToolUse (mcp__.*) hook log.sh of obskit (hooks/hooks.json): ran 3 times, ok 3"
    assert lines["hook-6"].endswith("ran 1 time, ok 0, error 1 (exit 126: /bin/sh: 1: "
                                    "/tmp/obs/plugins/obskit/hooks/noexec.sh: Permission denied)")
    assert lines["hook-7"].endswith("ran 1 time, ok 0, timeout 1")
    assert lines["hook-9"].endswith("ran 2 times, ok 1, blocked 1 (\"write the summary line first\")")
    assert lines["hook-10"].endswith("ran 0 times")
    assert lines["mcp-1"] == ("MCP server plugin:obskit:echo (obskit, .mcp.json): connected at start; 1 tool call: "
                              "mcp__plugin_obskit_echo__echo ×1")
    assert lines["mcp-2"].startswith("MCP server plugin:obskit:broken (obskit, .mcp.json): failed to start "
                                     "(CONNECTION_CLOSED: Connection closed; stderr: mcp_echo: cannot reach")


def test_without_one_the_successful_runs_are_unknown_never_zero():
    activity = _activity("197")
    assert activity.runs_recorded == "failures"
    by_id = {h.id: h for h in activity.hooks}
    assert (by_id["hook-1"].runs, by_id["hook-1"].ok) == (None, None)        # SessionStart ran; nothing says so
    assert (by_id["hook-6"].runs, len(by_id["hook-6"].errors)) == (None, 1)
    assert (by_id["hook-9"].runs, by_id["hook-9"].ok) == (2, 1)                 # every Stop run has its summary
    assert by_id["hook-10"].runs is None                                        # SubagentStop: not in a transcript
    [cancel] = activity.other_runs            # the CLI does not say which PostToolUse (Write) hook it cancelled
    assert cancel["outcome"] == "cancelled" and cancel["candidates"] == ["hook-4", "hook-5", "hook-6", "hook-7"]
    assert "successful runs not recorded by this CLI" in dict(activity_lines(activity))["hook-1"]


@pytest.mark.parametrize("cli", ["197", "332"])
def test_a_failing_hook_of_the_plugin_under_trial_is_hook_failed_of_a_dependency_a_warning(cli):
    judged = judge_activity(_activity(cli), "Skill, Write, mcp__plugin_obskit_echo__echo")
    # the broken server failed to start and the session called its tool: the skill depended on it
    assert judged.stop == "mcp_failed"
    assert any(n.startswith("hook_failed: ") and "noexec.sh" in n and "Permission denied" in n for n in judged.notes)
    as_dependency = judge_activity(_activity(cli, source="dependency"), "Skill, Write")
    assert not any(n.startswith("hook_failed") for n in as_dependency.notes)
    assert any("a hook of the dependency obskit failed" in w for w in as_dependency.warnings)


def test_an_mcp_server_nobody_named_or_called_is_a_warning():
    records = HookRecords(failed_servers={"plugin:obskit:broken": "CONNECTION_CLOSED: Connection closed"})
    activity = build_activity([], SERVERS, (), records, None, target_plugin="obskit", roots={})
    judged = judge_activity(activity, "Skill, Write")
    assert judged.stop is None and judged.notes == ()
    assert judged.warnings == ("the MCP server plugin:obskit:broken failed to start (CONNECTION_CLOSED: Connection "
                               "closed); neither the skill's allowed-tools nor the session used it",)
    named = judge_activity(activity, ["Skill", "mcp__plugin_obskit_broken__*"])
    assert named.stop == "mcp_failed" and "the skill's allowed-tools name its tools" in named.notes[0]


def test_allowed_tools_name_a_server_by_a_tool_a_pattern_or_the_server():
    servers = ["plugin:obskit:echo", "plugin:obskit:broken", "github"]
    assert named_servers("Skill, mcp__plugin_obskit_echo__echo mcp__github", servers) == ["plugin:obskit:echo",
                                                                                         "github"]
    assert named_servers(["mcp__plugin_obskit_broken__*"], servers) == ["plugin:obskit:broken"]
    assert named_servers(None, servers) == []


def test_a_stand_in_takes_its_servers_line_and_names_both():
    stand_in = StandIn("broken", "plugin:obskit:broken", ("python3", "/tmp/fake.py"), SERVERS[1])
    activity = build_activity([], SERVERS, [stand_in], HookRecords(), None, target_plugin="obskit", roots={})
    [row] = [s for s in activity.servers if s.name == "plugin:obskit:broken"]
    assert row.stand_in == {"name": "broken", "replaces": "plugin:obskit:broken",
                            "replaced_command": ["python3", "${CLAUDE_PLUGIN_ROOT}/bin/mcp_echo.py", "exit"]}
    assert row.command == ["python3", "/tmp/fake.py"] and len(activity.servers) == 3



def test_a_stand_in_that_failed_to_start_is_the_persons_input_never_the_skills_failure():
    """README "Whose failure it is": a failed stand-in is mcp_fixture_failed (BLOCKED), the real server mcp_failed."""
    records = HookRecords(failed_servers={"plugin:obskit:broken": "CONNECTION_CLOSED: Connection closed"})
    stand_in = StandIn("broken", "plugin:obskit:broken", ("python3", "/tmp/fake.py"), SERVERS[1])
    activity = build_activity([], SERVERS, [stand_in], records, None, target_plugin="obskit", roots={})
    judged = judge_activity(activity, ["Skill", "mcp__plugin_obskit_broken__*"])
    assert judged.stop == "mcp_fixture_failed" and StopReason.MCP_FIXTURE_FAILED.verdict == "BLOCKED"
    assert judged.notes[0].startswith("mcp_fixture_failed: the stand-in MCP server broken")
    assert "broken (python3 /tmp/fake.py) in place of plugin:obskit:broken" in judged.notes[0]

@pytest.mark.parametrize("cli", ["197", "332"])
def test_the_ledger_fits_the_verdict_schema_and_reads_back(cli):
    activity = _activity(cli)
    doc = activity.to_doc()
    errors = [e for e in schema_errors({"plugin_activity": doc}, "live-trial-verdict.schema.json")
              if e.startswith("plugin_activity")]
    assert errors == []
    again = PluginActivity.from_doc(doc)
    assert again is not None and again.to_doc() == doc and activity_lines(again) == activity_lines(activity)
