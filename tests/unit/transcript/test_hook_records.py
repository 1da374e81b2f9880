"""What the transcript and the debug log say of a plugin's hooks and MCP servers, read from what 2.1.197 and 2.1.332
wrote for the same plugin (tests/unit/transcripts/cli*-plugin-activity.*, cli*-hook-blocks.jsonl; rehearsal server;
references/transcript-jsonl.md "What a plugin's hooks and MCP servers leave behind")."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.transcript.debug_log import DebugTail, read_debug_log
from live_trial.transcript.hook_records import BLOCKED, CANCELLED, ERROR, OK, is_missing_tool, read_hook_records
from live_trial.transcript.reader import iter_records

HERE = Path(__file__).resolve().parents[1] / "transcripts"


def _records(name: str):
    return read_hook_records(iter_records(HERE / name))


@pytest.mark.parametrize("cli", ["197", "332"])
def test_only_failures_and_stop_runs_are_in_the_transcript(cli):
    seen = _records(f"cli{cli}-plugin-activity.jsonl").hooks
    outcomes = [(h.event, h.outcome) for h in seen]
    assert outcomes == [("PostToolUse", ERROR), ("PostToolUse", ERROR), ("PostToolUse", CANCELLED),
                        ("Stop", BLOCKED), ("Stop", OK)]
    noexec, failing, cancelled, blocked, _ = seen
    assert (noexec.command, noexec.exit_code) == ("${CLAUDE_PLUGIN_ROOT}/hooks/noexec.sh", 126)
    assert noexec.detail.endswith("noexec.sh: Permission denied")      # the CLI's prefix is taken off
    assert (failing.exit_code, failing.detail) == (1, "format failed: bad indent")
    assert cancelled.command is None and cancelled.query == "Write"      # the CLI does not name what it cancelled
    assert (blocked.command, blocked.detail) == ('sh "${CLAUDE_PLUGIN_ROOT}/hooks/stop-once.sh"',
                                                 "write the summary line first")


@pytest.mark.parametrize("cli", ["197", "332"])
def test_mcp_calls_are_counted_with_their_results(cli):
    read = _records(f"cli{cli}-plugin-activity.jsonl")
    calls = [(c.tool, c.ok) for c in read.mcp_calls]
    assert calls == [("mcp__plugin_obskit_echo__echo", True), ("mcp__plugin_obskit_fragile__echo", True),
                     ("mcp__plugin_obskit_fragile__echo", True), ("mcp__plugin_obskit_broken__echo", False)]
    assert is_missing_tool(read.mcp_calls[-1].error) and all(c.uuid for c in read.mcp_calls)
    # 2.1.332 also names the servers that failed (deferred_tools_delta); 2.1.197 says nothing of them
    assert read.failed_servers == ({"plugin:obskit:broken": "CONNECTION_CLOSED: Connection closed",
                                    "plugin:obskit:fragile": ""} if cli == "332" else {})


@pytest.mark.parametrize("cli", ["197", "332"])
def test_a_json_stop_block_a_refused_tool_and_a_session_start_hook_with_output(cli):
    seen = _records(f"cli{cli}-hook-blocks.jsonl").hooks
    assert [(h.event, h.outcome) for h in seen] == [("SessionStart", OK), ("PreToolUse", BLOCKED), ("Stop", BLOCKED),
                                                    ("Stop", OK)]
    start, refused, json_block, _ = seen
    assert start.command is not None and "SessionStart" in start.command
    assert (refused.query, refused.detail, refused.exit_code) == ("Bash", "Bash is not allowed here: use Write", 2)
    # a {"decision": "block"} gives no exit code: that is how the debug log's status 0 is told from ok
    assert (json_block.detail, json_block.exit_code) == ("add the summary line", None)


def test_the_debug_log_of_2_1_332_names_every_run_and_each_servers_start():
    log = read_debug_log(HERE / "cli332-plugin-activity.debug.log")
    assert log is not None and log.names_runs
    runs = [(r.event, r.query, r.status, r.timed_out) for r in log.hook_runs]
    assert ("PostToolUse", "Write", 126, False) in runs and ("PostToolUse", "Write", None, True) in runs
    assert [r.status for r in log.hook_runs if r.event == "Stop"] == [2, 0]
    assert log.hook_runs[0].command == 'sh "/tmp/obs/plugins/obskit/hooks/log.sh" SessionStart'  # root expanded
    broken = log.servers["plugin:obskit:broken"]
    assert (broken.at_start, broken.error, broken.stderr) == ("failed", "CONNECTION_CLOSED: Connection closed",
                                                              "mcp_echo: cannot reach the service")
    assert log.servers["plugin:obskit:echo"].at_start == "connected"
    assert log.servers["plugin:obskit:fragile"].closed == 1


def test_the_debug_log_of_2_1_197_names_no_run_but_each_servers_start():
    log = read_debug_log(HERE / "cli197-plugin-activity.debug.log")
    assert log is not None and not log.names_runs and log.hook_runs == []
    assert log.servers["plugin:obskit:broken"].error == "MCP error -32000: Connection closed"
    assert log.servers["plugin:obskit:echo"].at_start == "connected"


def test_a_tail_reads_each_byte_once_and_waits_for_a_line_to_end(tmp_path):
    path = tmp_path / "session.log"
    path.write_text('2026-12-05T23:09:06.165Z [DEBUG] MCP server "plugin:p:s": Starting connection with timeout\n'
                    '2026-12-05T23:09:06.532Z [DEBUG] MCP server "plugin:p:s": Connection failed after 374ms (CONN')
    tail = DebugTail(path)
    assert tail.read().servers["plugin:p:s"].at_start == "pending"
    with open(path, "a") as fh:
        fh.write("ECTION_CLOSED): Connection closed\n")
    server = tail.read().servers["plugin:p:s"]
    assert (server.starts, server.at_start, server.error) == (1, "failed", "CONNECTION_CLOSED: Connection closed")
    assert tail.offset == path.stat().st_size and tail.log.bytes_read == tail.offset


def test_a_missing_debug_log_is_none(tmp_path):
    assert read_debug_log(tmp_path / "none.log") is None and read_debug_log(None) is None
