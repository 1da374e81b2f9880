"""The plugins' activity in the verdict (README "What a trial leaves behind", "Whose failure it is"): the ledger is
recorded, a failure the skill depends on is a FAIL (hook_failed / mcp_failed) with the hook or server named, any
other failure a warning; never silently a PASS. ``run`` and ``verdict`` derive it alike from the workdir."""
from __future__ import annotations

import json

from live_trial.acceptance.derive import derive_verdict
from live_trial.acceptance.findings import recorded_findings
from live_trial.jsonfile import schema_errors
from live_trial.notices.outcome import summariser
from tests.unit.acceptance.test_verdict_cmd import tree
from tests.unit.acceptance.test_verdict_derive import WHEN, _facts, _recorded

__all__ = ["tree"]       # the fixture, used by name

FORMAT = '"${CLAUDE_PLUGIN_ROOT}/hooks/format.sh"'


def _failed_hook(tree, plugin: str) -> None:
    """``plugin`` declares a PostToolUse hook; the transcript records its one run as not executable (2.1.197 and
    2.1.332 write the same attachment)."""
    root = tree["plugins"] / plugin
    doc = json.loads((root / "hooks" / "hooks.json").read_text())
    doc["hooks"]["PostToolUse"] = [{"matcher": "Write", "hooks": [{"type": "command", "command": FORMAT}]}]
    (root / "hooks" / "hooks.json").write_text(json.dumps(doc))
    (root / "hooks" / "format.sh").write_text("exit 0\n")
    attachment = {"type": "attachment", "uuid": "9d1e0000-0000-4000-8000-000000000001", "attachment": {
        "type": "hook_non_blocking_error", "hookName": "PostToolUse:Write", "hookEvent": "PostToolUse",
        "toolUseID": "toolu_x", "command": FORMAT, "exitCode": 126,
        "stderr": f"Failed with non-blocking status code: /bin/sh: 1: {root}/hooks/format.sh: Permission denied"}}
    with open(tree["wd"] / "transcript.jsonl", "a") as fh:
        fh.write(json.dumps(attachment) + "\n")


def _verdict(tree) -> dict:
    facts = _facts(tree)
    return derive_verdict(facts, recorded_findings(facts.origin.state), summarise=summariser("en"),
                          clock=lambda: WHEN).to_doc()


def test_a_hook_of_the_plugin_under_trial_that_could_not_run_fails_a_trial_that_passed_otherwise(tree) -> None:
    _failed_hook(tree, "union-target")
    _recorded(tree["wd"], tree["plugins"])
    doc = _verdict(tree)
    assert schema_errors(doc, "live-trial-verdict.schema.json") == []
    assert (doc["overall"]["verdict"], doc["stop_reason"]) == ("FAIL", "hook_failed")
    assert doc["overall"]["reasons"][0].startswith("a hook the skill depends on")
    assert any("format.sh" in r and "exit 126" in r and "Permission denied" in r for r in doc["overall"]["reasons"])
    [hook] = [h for h in doc["plugin_activity"]["hooks"] if h["command"] == FORMAT]
    assert (hook["source"], hook["runs"], hook["errors"][0][:9]) == ("plugin", None, "exit 126:")


def test_a_failing_hook_of_a_dependency_is_a_warning_of_a_pass(tree) -> None:
    _failed_hook(tree, "union-manifest-dep")
    _recorded(tree["wd"], tree["plugins"])
    doc = _verdict(tree)
    assert doc["overall"]["verdict"] == "PASS" and doc["stop_reason"] is None
    assert any(w.startswith("a hook of the dependency union-manifest-dep failed") for w in doc["warnings"]), doc
    [hook] = [h for h in doc["plugin_activity"]["hooks"] if h["command"] == FORMAT]
    assert hook["source"] == "dependency"


def test_a_declared_stop_hook_the_transcript_shows_no_run_of_ran_0_times(tree) -> None:
    _recorded(tree["wd"], tree["plugins"])
    doc = _verdict(tree)
    stops = [h for h in doc["plugin_activity"]["hooks"] if h["event"] == "Stop" and h["source"] == "plugin"]
    assert stops and all((h["runs"], h["ok"]) == (0, 0) for h in stops), stops
    assert doc["overall"]["verdict"] == "PASS" and doc["plugin_activity"]["runs_recorded"] == "failures"


def test_an_early_mcp_failed_stop_names_its_cause_not_an_unfinished_turn(tree) -> None:
    note = "mcp_failed: the MCP server plugin:union-target:db failed to start; the skill's allowed-tools name its tools"
    _recorded(tree["wd"], tree["plugins"], completion="FAIL", goal=None, evidence=[], poll_exit=None,
              stop_reason="mcp_failed", notes=[note])
    reasons = _verdict(tree)["overall"]["reasons"]
    assert reasons[0].startswith("an MCP server of its plugin that the skill depends on"), reasons
    assert note in reasons and not any("did not complete on its own" in r for r in reasons), reasons


GUARD = 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"'


def test_a_hook_that_refused_the_marker_blocks_and_the_evaluators_findings_are_no_reason(tree) -> None:
    """The plugin's guard refused the Write of the harness's completion marker (the tool_result of that call names
    the hook): BLOCKED ``marker_refused``, never the skill's FAIL; the evaluator, which judged the trial all the same
    and found the result missing, keeps its finding in goal_blockers, never among the reasons of a BLOCKED verdict."""
    from tests.unit.fakes import write_evaluation

    root = tree["plugins"] / "union-target"
    doc = json.loads((root / "hooks" / "hooks.json").read_text())
    doc["hooks"]["PreToolUse"] = [{"matcher": "Write", "hooks": [{"type": "command", "command": GUARD}]}]
    (root / "hooks" / "hooks.json").write_text(json.dumps(doc))
    (root / "hooks" / "guard.sh").write_text("exit 2\n")
    marker = str(tree["wd"] / "out" / "status.json")
    refused = f"PreToolUse:Write hook error: [{GUARD}]: guard: refusing to write outside the project: {marker}"
    with open(tree["wd"] / "transcript.jsonl", "a") as fh:
        fh.write(json.dumps({"type": "assistant", "uuid": "9d1e0000-0000-4000-8000-000000000002", "message": {
            "role": "assistant", "model": "claude-opus-4-8", "content": [
                {"type": "tool_use", "id": "toolu_m", "name": "Write", "input": {"file_path": marker, "content": "{}"}}]
        }}) + "\n")
        fh.write(json.dumps({"type": "user", "uuid": "9d1e0000-0000-4000-8000-000000000003", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_m", "is_error": True,
                                         "content": f"<tool_use_error>{refused}</tool_use_error>"}]}}) + "\n")
    _recorded(tree["wd"], tree["plugins"], completion="FAIL", goal="FAIL", goal_blockers=["no report was written"],
              stop_reason="contract_violation", poll_exit="STALL")
    write_evaluation(tree["wd"], "FAIL", blockers=["no report was written"])
    verdict = _verdict(tree)
    assert (verdict["overall"]["verdict"], verdict["stop_reason"]) == ("BLOCKED", "marker_refused"), verdict["overall"]
    [guard] = [h for h in verdict["plugin_activity"]["hooks"] if h["command"] == GUARD]
    assert guard["marker_blocked"] == 1, guard
    assert not any("no report was written" in r for r in verdict["overall"]["reasons"]), verdict["overall"]["reasons"]
    assert verdict["goal_blockers"] == ["no report was written"], verdict["goal_blockers"]
