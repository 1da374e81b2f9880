"""The "Plugin activity" of a trial as a person reads it (README "Reading a trial", "What a trial leaves behind"):
report.html's section, each row with the id an evidence item cites it by and a link from that item; ``show``'s
block of the same lines."""
from __future__ import annotations

import json

from live_trial.cli.main import main
from live_trial.report import page
from tests.unit.report.test_report import make_workdir, verdict

ACTIVITY = {"runs_recorded": "failures", "other_runs": [], "hooks": [
    {"id": "hook-1", "plugin": "hello", "declared_in": "hooks/hooks.json", "event": "PostToolUse", "matcher": "Write",
     "command": '"${CLAUDE_PLUGIN_ROOT}/hooks/format.sh"', "source": "plugin", "runs": None, "ok": None,
     "blocked": [], "errors": ["exit 126: /bin/sh: 1: /p/hooks/format.sh: Permission denied"], "timeouts": 0,
     "cancelled": 0}],
    "mcp_servers": [{"id": "mcp-1", "name": "plugin:hello:db", "plugin": "hello", "declared_in": ".mcp.json",
                     "command": ["python3", "fake.py"], "stand_in": {"name": "db", "replaces": "plugin:hello:db",
                                                                     "replaced_command": ["node", "db.js"]},
                     "at_start": "connected", "error": None, "stderr": None, "closed": 0,
                     "calls": {"mcp__plugin_hello_db__query": 2}, "failed_calls": 0}]}
CITED = {"claim": "the stand-in answered the skill's queries", "source": "plugin-activity#mcp-1",
         "quote": "2 tool calls", "observed": "2 queries answered"}


def _workdir(tmp_path):
    wd = make_workdir(tmp_path)
    (wd / "verdict.json").write_text(json.dumps(verdict(evidence=[CITED], plugin_activity=ACTIVITY)))
    return wd


def test_the_page_has_a_row_per_hook_and_server_and_the_evidence_links_to_its_row(tmp_path):
    html = page.render(_workdir(tmp_path), "en")
    assert '<section id="activity">' in html and "Plugin activity" in html
    assert 'id="activity-hook-1" class="failed"' in html and "format.sh" in html and "Permission denied" in html
    assert 'id="activity-mcp-1"' in html and "stand-in db (python3 fake.py) in place of plugin:hello:db" in html
    assert 'href="#activity-mcp-1"' in html
    assert "debug log named no run (2.1.197 names none; a newer CLI names each run that happened" in html


def test_a_ledger_with_no_hook_says_so_not_that_the_cli_records_no_run(tmp_path):
    wd = make_workdir(tmp_path)
    doc = {**ACTIVITY, "hooks": []}
    (wd / "verdict.json").write_text(json.dumps(verdict(evidence=[CITED], plugin_activity=doc)))
    html = page.render(wd, "en")
    assert "no hook is declared, so no hook run" in html and "named no run" not in html


def test_show_prints_a_line_per_hook_and_server(tmp_path, capsys):
    assert main(["show", str(_workdir(tmp_path)), "--lang", "en"]) == 0
    out = capsys.readouterr().out
    block = out.split("plugin activity:\n", 1)[1]
    assert block.startswith("  - hook-1: PostToolUse (Write) hook format.sh of hello (hooks/hooks.json): successful "
                            "runs not recorded by this CLI, error 1 (exit 126:")
    assert "  - mcp-1: MCP server plugin:hello:db (hello, .mcp.json): stand-in db" in block
    assert main(["show", str(_workdir(tmp_path / "j")), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["plugin_activity"][1].startswith("mcp-1: MCP server plugin:hello:db")


def test_a_verdict_without_activity_has_no_section(tmp_path):
    wd = make_workdir(tmp_path)
    (wd / "verdict.json").write_text(json.dumps(verdict()))
    assert '<section id="activity">' not in page.render(wd, "en")
