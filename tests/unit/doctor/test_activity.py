"""The doctor's checks of what the plugins' activity ledger reads (``live_trial.doctor.activity``): ``debug_log.*``,
``transcript.hook_records`` and ``mcp.stand_in`` on what the probe's session left on 2.1.197 and 2.1.332 (its debug
log's hook and MCP lines and its transcript's hook and MCP records, kept in ``sessions/<version>/`` with the probe's
folder as ``@ROOT@``), and on the same with one thing changed."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from live_trial.doctor import activity, kit
from live_trial.doctor.checks import CHANGED, HOLDS, Checks
from live_trial.doctor.records import tool_answer

SESSIONS = Path(__file__).parent / "sessions"
NAMES = ("debug_log.mcp_server", "debug_log.hook_runs", "transcript.hook_records", "mcp.stand_in")


@dataclass
class Probe:
    """A probe folder as the probe leaves it, with the session of one version written into it."""

    root: Path
    plugin: Path
    files: activity.ActivityFiles
    log: str
    transcript: list[str]

    def judge(self, pending: tuple[str, ...] = ()) -> Checks:
        if self.log:
            self.files.debug_log.write_text(self.log)
        records = [json.loads(line) for line in self.transcript]
        ledgers = activity.read_ledgers(self.plugin, records, self.files.debug_log)
        checks = Checks()
        activity.judge_servers(checks, ledgers, list(pending))
        activity.judge_hook_runs(checks, ledgers)
        activity.judge_hook_records(checks, ledgers)
        activity.judge_stand_in(checks, ledgers, self.files, tool_answer(records, kit.ECHO_TOOL))
        return checks


def probe(tmp_path: Path, version: str) -> Probe:
    marker = tmp_path / "stop-hook-blocked"
    plugin = kit.write_plugin(tmp_path / "plugins", marker)
    files = activity.write_files(tmp_path, plugin, marker)
    log = (SESSIONS / version / "session.log").read_text().replace("@ROOT@", str(tmp_path))
    lines = (SESSIONS / version / "transcript.jsonl").read_text().replace("@ROOT@", str(tmp_path)).splitlines()
    return Probe(tmp_path, plugin, files, log, lines)


def line(checks: Checks, name: str) -> str:
    return next(c.line() for c in checks.all() if c.name == name)


@pytest.mark.parametrize("version, form", [("197", activity.FAILURES_ONLY), ("332", activity.EVERY_RUN)])
def test_what_both_supported_versions_left_holds_and_the_hook_runs_line_names_its_form(tmp_path, version, form):
    checks = probe(tmp_path, version).judge()
    assert [line(checks, n) for n in NAMES] == [
        "debug_log.mcp_server: holds", f"debug_log.hook_runs: holds ({form})", "transcript.hook_records: holds",
        "mcp.stand_in: holds"]


def test_hook_run_lines_in_a_third_form_are_changed_and_quoted(tmp_path):
    """A release that still names each run, in words the reader does not take, would leave the ledger counting only
    failures while the log says more: the doctor says so rather than taking it for 2.1.197's form."""
    p = probe(tmp_path, "332")
    p.log = re.sub(r"finished with status|timed out after", "ended, code", p.log)
    saw = line(p.judge(), "debug_log.hook_runs")
    assert saw == ("debug_log.hook_runs: changed (3 lines naming a hook's script that the reader takes for no run, "
                   "the first: Hooks: PostToolUse:Bash [\".../hooks/fail-once.sh\"] (plugin doctorkit@inline) ended, "
                   "code 1 (7ms))")


def test_a_run_line_missing_from_the_every_run_form_is_changed_with_the_ledger(tmp_path):
    p = probe(tmp_path, "332")
    p.log = "\n".join(ln for ln in p.log.splitlines() if "finished with status 0" not in ln or "fail-once" not in ln)
    assert line(p.judge(), "debug_log.hook_runs") == (
        "debug_log.hook_runs: changed (expected 2 runs of the PostToolUse (Bash) hook, 1 ok: ran 1 time, ok 0, error 1 "
        f"(exit 1: {kit.HOOK_ERROR}))")


def test_no_debug_log_changes_both_debug_log_checks(tmp_path):
    p = probe(tmp_path, "332")
    p.log = ""
    checks = p.judge()
    assert line(checks, "debug_log.hook_runs") == ("debug_log.hook_runs: changed (the CLI wrote no debug log "
                                                   "(--debug-file))")
    assert line(checks, "debug_log.mcp_server").startswith("debug_log.mcp_server: changed (the CLI wrote no debug log")
    assert line(checks, "transcript.hook_records") == "transcript.hook_records: holds"


@pytest.mark.parametrize("version", ["197", "332"])
def test_a_transcript_without_the_cancelled_run_changes_hook_records(tmp_path, version):
    p = probe(tmp_path, version)
    p.transcript = [ln for ln in p.transcript if '"hook_cancelled"' not in ln]
    assert line(p.judge(), "transcript.hook_records") == (
        "transcript.hook_records: changed (expected the PostToolUse hook of the echo tool stopped at its timeout: "
        "successful runs not recorded by this CLI)")


def test_a_failed_run_recorded_without_its_stderr_changes_hook_records(tmp_path):
    p = probe(tmp_path, "197")
    p.transcript = [ln.replace(kit.HOOK_ERROR, "") for ln in p.transcript]
    saw = line(p.judge(), "transcript.hook_records")
    assert "the PostToolUse (Bash) hook failed once (exit 1, its stderr)" in saw, saw


def test_a_plugin_server_started_beside_the_stand_in_changes_stand_in(tmp_path):
    p = probe(tmp_path, "332")
    p.files.declared_marker.touch()
    assert line(p.judge(), "mcp.stand_in") == "mcp.stand_in: changed (the plugin's own echo server was started too)"


def test_a_call_the_plugins_own_server_answered_changes_stand_in(tmp_path):
    p = probe(tmp_path, "197")
    p.transcript = [ln.replace(kit.STAND_IN_ANSWER, "declared echo: ") for ln in p.transcript]
    assert line(p.judge(), "mcp.stand_in") == (f"mcp.stand_in: changed (the call of {kit.ECHO_TOOL} answered "
                                               "'declared echo: doctor')")


def test_servers_still_connecting_at_the_paste_or_a_failure_without_its_stderr_change_mcp_server(tmp_path):
    p = probe(tmp_path, "332")
    saw = line(p.judge(pending=(kit.ECHO_SERVER,)), "debug_log.mcp_server")
    assert saw.startswith(f"debug_log.mcp_server: changed (still connecting when the task was pasted: "
                          f"{kit.ECHO_SERVER}; MCP server {kit.BROKEN_SERVER}"), saw
    p.log = "\n".join(ln for ln in p.log.splitlines() if "Server stderr" not in ln)
    saw = line(p.judge(), "debug_log.mcp_server")
    assert "failed to start (CONNECTION_CLOSED: Connection closed)" in saw and "stderr" not in saw, saw


def test_the_servers_are_awaited_until_each_said_how_its_start_went(tmp_path):
    log = tmp_path / "session.log"
    line = '2026-12-06T00:39:30.018Z [DEBUG] MCP server "{0}": {1}\n'
    # the CLI writes its debug log late: the first look finds no server at all, and the probe waits for its two
    bursts = [[], [line.format(kit.ECHO_SERVER, "Starting connection with timeout of 30000ms"),
                    line.format(kit.BROKEN_SERVER, "Starting connection with timeout of 30000ms")],
              [line.format(kit.ECHO_SERVER, "Successfully connected (transport: stdio) in 203ms")],
              [line.format(kit.BROKEN_SERVER, "Connection failed after 219ms: MCP error -32000: Connection closed")]]
    log.write_text("")
    slept = []

    def sleep(s: float) -> None:
        slept.append(s)
        with log.open("a") as fh:
            fh.writelines(bursts[len(slept)])
    assert activity.await_servers(log, 5.0, sleep=sleep) == [] and len(slept) == 3
    log.write_text(bursts[1][0])
    assert activity.await_servers(log, 0.0, sleep=lambda s: None) == [kit.ECHO_SERVER, kit.BROKEN_SERVER]


def test_the_plugin_declares_what_the_checks_count_on(tmp_path):
    """The ledger reads the plugin as the CLI does: three command hooks, two servers, the stand-in's config."""
    p = probe(tmp_path, "332")
    ledgers = activity.read_ledgers(p.plugin, [], p.files.debug_log)
    assert [(h.event, h.matcher) for h in ledgers.with_log.hooks] == [
        ("Stop", None), ("PostToolUse", "Bash"), ("PostToolUse", kit.ECHO_TOOL)]
    assert sorted(s.name for s in ledgers.with_log.servers) == [kit.BROKEN_SERVER, kit.ECHO_SERVER]
    assert json.loads(p.files.mcp_config.read_text())["mcpServers"][kit.ECHO_SERVER]["args"][-1] == "stand-in"
    assert p.files.flags() == ["--debug-file", str(p.files.debug_log), "--mcp-config", str(p.files.mcp_config)]
    assert HOLDS != CHANGED
