"""What the plugin did in the session, on the real CLI (README "What a trial leaves behind", "Whose failure it is"):
its hooks' runs and its MCP servers' starts and calls are counted in the verdict and may be cited; a hook that could
not run, or an MCP server the skill needs that did not start, fails the trial; a stand-in takes a server's place."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from .run_support import (
    FAST,
    PLUGINS,
    SCENARIOS,
    final_json,
    kill_at_phase,
    resume_cmd,
    run_cmd,
)

pytestmark = pytest.mark.e2e


def _copy(tmp_path: Path, name: str) -> Path:
    """A private copy of a test plugin (its hooks keep their state beside it), under a plugins root of its own."""
    root = tmp_path / "plugins"
    shutil.copytree(PLUGINS / name, root / name)
    return root


def _verdict(proc) -> dict:
    result = final_json(proc)
    return json.loads(Path(result["verdict_path"]).read_text())


@pytest.mark.budget(20)
def test_a_stop_hook_that_blocks_once_and_an_mcp_call_are_counted_and_cited_in_a_pass(tmp_path):
    root = _copy(tmp_path, "mcpkit")
    proc = run_cmd(tmp_path, "mcpkit:call", "--plugins-root", str(root), "--rehearsal",
                   str(SCENARIOS / "call-mcp-stop-once.yaml"), *FAST)
    doc = _verdict(proc)
    assert proc.returncode == 0 and doc["overall"]["verdict"] == "PASS", proc.stderr[-2000:] + json.dumps(doc)[-3000:]
    assert doc["nudge_count"] == 0
    activity = doc["plugin_activity"]
    [stop] = [h for h in activity["hooks"] if h["event"] == "Stop"]
    assert (stop["runs"], stop["ok"], stop["blocked"]) == (2, 1, ["report the echo's answer before you stop"]), stop
    servers = {s["name"]: s for s in activity["mcp_servers"]}
    echo, dead = servers["plugin:mcpkit:echo"], servers["plugin:mcpkit:dead"]
    # the task was pasted once the CLI said the server connected: its one call was answered
    assert (echo["at_start"], echo["calls"], echo["failed_calls"]) == ("connected", {
        "mcp__plugin_mcpkit_echo__echo": 1}, 0), echo
    assert dead["at_start"] == "failed" and dead["stderr"].startswith("echo_server: the service"), dead
    # a server nobody needed failed: a warning, never silence, never a FAIL
    assert any("plugin:mcpkit:dead failed to start" in w for w in doc["warnings"]), doc["warnings"]
    cited = {e["source"] for e in doc["evidence"]}
    assert cited == {f"plugin-activity#{echo['id']}", f"plugin-activity#{stop['id']}"}, doc["evidence"]


@pytest.mark.budget(20)
def test_a_post_tool_use_hook_that_is_not_executable_fails_the_trial_and_is_named(tmp_path):
    root = _copy(tmp_path, "hookfail")
    proc = run_cmd(tmp_path, "hookfail:mark", "--plugins-root", str(root), "--rehearsal",
                   str(SCENARIOS / "mark-happy.yaml"), *FAST)
    doc = _verdict(proc)
    assert proc.returncode == 1 and doc["overall"]["verdict"] == "FAIL", json.dumps(doc)[-3000:]
    assert doc["stop_reason"] == "hook_failed" and not doc["blocked"], doc["stop_reason"]
    [hook] = doc["plugin_activity"]["hooks"]
    assert hook["event"] == "PostToolUse" and len(hook["errors"]) == 1, hook
    assert hook["errors"][0].startswith("exit 126:") and "format.sh: Permission denied" in hook["errors"][0], hook
    named = [r for r in doc["overall"]["reasons"] if "format.sh" in r]
    assert named and "Permission denied" in named[0], doc["overall"]["reasons"]


@pytest.mark.budget(20)
def test_an_mcp_server_the_skill_needs_that_exits_at_start_stops_the_trial_before_the_stall_limit(tmp_path):
    root = _copy(tmp_path, "mcpkit")
    started = time.monotonic()
    proc = run_cmd(tmp_path, "mcpkit:needs", "--plugins-root", str(root), "--rehearsal",
                   str(SCENARIOS / "needs-dead-mcp.yaml"), "--stall-limit", "600", "--hard-cap", "900", timeout=60)
    took = time.monotonic() - started
    doc = _verdict(proc)
    assert proc.returncode == 1 and doc["overall"]["verdict"] == "FAIL", json.dumps(doc)[-3000:]
    assert doc["stop_reason"] == "mcp_failed" and doc["poll_exit"] != "STALL", (doc["stop_reason"], doc["poll_exit"])
    assert any("plugin:mcpkit:dead failed to start" in r for r in doc["overall"]["reasons"]), doc["overall"]
    assert took < 60, took


@pytest.mark.budget(20)
def test_a_resumed_trial_watches_the_needed_mcp_server_again(tmp_path):
    """A harness killed while it polled, then ``run --resume``: the needed server that failed at start still stops
    the trial at once (README "Resuming a trial"), never a STALL limit (600 s) later."""
    root = _copy(tmp_path, "mcpkit")
    wd = kill_at_phase(tmp_path, "polling", "mcpkit:needs", "--plugins-root", str(root), "--rehearsal",
                       str(SCENARIOS / "needs-dead-mcp.yaml"), "--stall-limit", "600", "--hard-cap", "900")
    started = time.monotonic()
    resumed = resume_cmd(wd, timeout=60)
    took = time.monotonic() - started
    doc = json.loads((wd / "verdict.json").read_text())
    assert resumed.returncode == 1 and doc["stop_reason"] == "mcp_failed", json.dumps(doc)[-3000:]
    assert took < 60, took


@pytest.mark.budget(20)
def test_a_stand_in_takes_the_place_of_the_plugins_mcp_server_and_both_are_named(tmp_path):
    root = _copy(tmp_path, "mcpkit")
    server = root / "mcpkit" / "bin" / "echo_server.py"
    proc = run_cmd(tmp_path, "mcpkit:needs", "--plugins-root", str(root), "--rehearsal",
                   str(SCENARIOS / "needs-standin.yaml"), "--mcp-fixture", f"dead=python3 {server}", *FAST)
    doc = _verdict(proc)
    assert proc.returncode == 0 and doc["overall"]["verdict"] == "PASS", json.dumps(doc)[-3000:]
    [dead] = [s for s in doc["plugin_activity"]["mcp_servers"] if s["name"] == "plugin:mcpkit:dead"]
    assert dead["stand_in"] == {"name": "dead", "replaces": "plugin:mcpkit:dead",
                                "replaced_command": ["python3", "${CLAUDE_PLUGIN_ROOT}/bin/echo_server.py",
                                                     "--exit-at-start"]}, dead
    assert dead["command"] == ["python3", str(server)] and dead["at_start"] == "connected", dead
    assert dead["calls"] == {"mcp__plugin_mcpkit_dead__echo": 1} and doc["stop_reason"] is None, dead
    # the stand-in has the command of the plugin's echo server: the CLI kept the stand-in and never started echo
    [echo] = [s for s in doc["plugin_activity"]["mcp_servers"] if s["name"] == "plugin:mcpkit:echo"]
    assert echo["at_start"] == "suppressed" and "the CLI kept plugin:mcpkit:dead" in echo["error"], echo


@pytest.mark.budget(20)
def test_a_stand_in_that_takes_the_command_of_a_server_the_skill_needs_is_refused_before_anything_starts(tmp_path):
    """The same stand-in for a skill that calls echo: the CLI would never start the plugin's echo server (it keeps a
    server of its own config with the same command), so the skill's tool would be missing through the person's
    stand-in. Refused before anything is created (exit 2 ``bad_mcp_fixture``), the fix named."""
    root = _copy(tmp_path, "mcpkit")
    server = root / "mcpkit" / "bin" / "echo_server.py"
    proc = run_cmd(tmp_path, "mcpkit:call", "--plugins-root", str(root), "--rehearsal",
                   str(SCENARIOS / "call-mcp-stop-once.yaml"), "--mcp-fixture", f"dead=python3 {server}", *FAST)
    assert proc.returncode == 2 and "is the command of plugin:mcpkit:echo" in proc.stderr + proc.stdout, (
        proc.stdout[-2000:], proc.stderr[-2000:])
    assert "give the stand-in a command of its own" in proc.stderr + proc.stdout
    assert not (tmp_path / "eval").exists() or not any((tmp_path / "eval").rglob("trial-state.json"))


@pytest.mark.budget(20)
def test_a_stand_in_that_exits_at_start_is_blocked_as_the_persons_input_never_a_fail_of_the_skill(tmp_path):
    """The same failed start as the plugin's own dead server, but the command is the person's stand-in: BLOCKED
    ``mcp_fixture_failed`` (README "Whose failure it is"), the note naming the stand-in and the server it replaced."""
    root = _copy(tmp_path, "mcpkit")
    server = root / "mcpkit" / "bin" / "echo_server.py"
    started = time.monotonic()
    proc = run_cmd(tmp_path, "mcpkit:needs", "--plugins-root", str(root), "--rehearsal",
                   str(SCENARIOS / "needs-dead-mcp.yaml"), "--mcp-fixture", f"dead=python3 {server} --exit-at-start",
                   "--stall-limit", "600", "--hard-cap", "900", timeout=60)
    took = time.monotonic() - started
    doc = _verdict(proc)
    assert proc.returncode == 3 and doc["overall"]["verdict"] == "BLOCKED", json.dumps(doc)[-3000:]
    assert doc["stop_reason"] == "mcp_fixture_failed" and doc["blocked"], (doc["stop_reason"], doc["blocked"])
    named = [r for r in doc["overall"]["reasons"] + doc.get("notes", []) if "stand-in MCP server dead" in r]
    assert named and "in place of plugin:mcpkit:dead" in named[0], (doc["overall"]["reasons"], doc.get("notes"))
    assert took < 60, took


@pytest.mark.budget(20)
def test_an_activation_case_measures_the_choice_though_the_skills_mcp_server_failed_and_names_it(tmp_path):
    """Which skill the model picks is decided from the listing, which holds the skill whether or not its server
    started: a failed server never cuts the turn before the model chose (README "Does it start by itself?"); each run
    names the server that failed."""
    root = _copy(tmp_path, "mcpkit")
    suite = tmp_path / "live-trials.yaml"
    suite.write_text("\n".join([
        "skills:", "  needs:", "    cases:", "      - name: natural", "        kind: activation", "        prompts:",
        '          - {prompt: "Please look up the record for me.", should_trigger: true}',
        '          - {prompt: "How is the weather today?", should_trigger: false}',
        "        stop_after_trigger: true", f"        scenario: {SCENARIOS / 'activation-needs-dead-mcp.yaml'}",
        "        stall_limit: 600", "        hard_cap: 900"]) + "\n")
    proc = run_cmd(tmp_path, "mcpkit:needs", "--case", "natural", "--suite", str(suite), "--plugins-root", str(root),
                   "--max-concurrency", "2", timeout=120)
    out = final_json(proc)
    assert (proc.returncode, out["status"]) == (0, "PASS"), (out.get("reasons"), proc.stderr[-2000:])
    doc = json.loads(Path(out["verdict_path"]).read_text())
    runs = {p["n"]: p["runs"][0] for p in doc["prompts"]}
    assert (runs[1]["outcome"], runs[1]["ended"]) == ("triggered", "stopped_after_trigger"), runs[1]
    assert (runs[2]["outcome"], runs[2]["ended"]) == ("not_triggered", "turn_end"), runs[2]
    assert all("the MCP server plugin:mcpkit:dead failed to start" in (r["note"] or "") for r in runs.values()), runs


@pytest.mark.budget(20)
def test_a_hook_that_refuses_the_harness_marker_is_blocked_and_one_that_fails_only_on_it_is_no_failure(tmp_path):
    """The completion marker is the harness's file, outside the session's folder (README "Whose failure it is"): a
    plugin's guard that refuses writes outside the project refuses it, and the trial is BLOCKED ``marker_refused``,
    never the skill's FAIL. The guard that lets through what the session's LIVE_TRIAL_MARKER names lets the trial
    PASS, and the formatter that fails on that file (and on nothing of the skill's) is a warning, never
    ``hook_failed``."""
    root = _copy(tmp_path, "guardkit")
    proc = run_cmd(tmp_path, "guardkit:mark", "--plugins-root", str(root), "--rehearsal",
                   str(SCENARIOS / "mark-happy.yaml"), *FAST)
    doc = _verdict(proc)
    assert proc.returncode == 3 and (doc["overall"]["verdict"], doc["stop_reason"]) == ("BLOCKED", "marker_refused"), (
        json.dumps(doc)[-3000:])
    [guard] = [h for h in doc["plugin_activity"]["hooks"] if h["event"] == "PreToolUse"]
    assert guard["marker_blocked"] == 1 and "refusing to write outside the project" in guard["blocked"][0], guard
    assert any(n.startswith("marker_refused: PreToolUse") for n in doc["notes"]), doc["notes"]

    (root / "guardkit" / "hooks" / "allow-marker").write_text("")
    proc = run_cmd(tmp_path, "guardkit:mark", "--plugins-root", str(root), "--rehearsal",
                   str(SCENARIOS / "mark-happy.yaml"), *FAST)
    doc = _verdict(proc)
    assert proc.returncode == 0 and doc["overall"]["verdict"] == "PASS", json.dumps(doc)[-3000:]
    [fmt] = [h for h in doc["plugin_activity"]["hooks"] if h["event"] == "PostToolUse"]
    assert fmt["marker_failed"] == 1 and fmt["errors"] and "no formatter" in fmt["errors"][0], fmt
    assert any("failed only on the harness's completion marker" in w for w in doc["warnings"]), doc["warnings"]
