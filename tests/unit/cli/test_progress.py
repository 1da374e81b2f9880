"""What a person sees while run polls: the tick line's fields, plain lines off a TTY, nothing with --json."""
from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest

from live_trial.cli.progress import Progress, outcome_json, tick_line


def test_tick_line_names_every_field_a_person_needs():
    line = tick_line({"state": "BUSY_TOOL", "elapsed_s": 75, "since_progress_s": 12, "stall_in_s": 288,
                      "hard_cap_in_s": 7125, "pending_tool": "Bash", "nudges": 1, "gate_responses": 2})
    for part in ("state BUSY_TOOL", "elapsed 1m15s", "last growth 12s ago", "STALL in 4m48s",
                 "HARD_CAP in 118m45s", "tool Bash", "nudges 1", "gate answers 2"):
        assert part in line


def test_plain_output_prints_decisions_and_warnings_not_every_tick():
    out = io.StringIO()
    p = Progress(stream=out)
    p.event("workdir", {"path": "/w", "session": "lt-x"})
    p.event("tick", {"state": "BUSY_GENERATING", "elapsed_s": 1})
    p.event("tick", {"state": "BUSY_GENERATING", "elapsed_s": 2})
    p.event("decision", {"at": "t", "step": "poll", "decision": "WARN", "message": "WARN: HARD_CAP 80% (80s of 100s)"})
    p.event("decision", {"at": "t", "step": "stall", "decision": "nudge", "row": 4})
    text = out.getvalue()
    assert text.count("state BUSY_GENERATING") == 1  # at most one tick line per 15 s off a TTY
    assert "WARN: HARD_CAP 80%" in text and 'stall: nudge {"row": 4}' in text


def test_json_mode_prints_only_the_final_object():
    out = io.StringIO()
    p = Progress(json_mode=True, stream=out)
    p.event("workdir", {"path": "/w", "session": "lt-x"})
    p.event("tick", {"state": "IDLE_TURN_COMPLETE"})
    outcome = SimpleNamespace(overall="PASS", exit_code=0, workdir="/w", verdict_path="/w/verdict.json",
                              scenario_origin="live", stop_reason=None, summary="ok", notification=None)
    p.final(outcome)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == outcome_json(outcome)


def test_json_mode_never_loads_the_terminal_ui():
    """A script running trials with --json pays nothing for rich: events, the final object and a plan's table."""
    import subprocess
    import sys

    code = """
import io, json, sys
from types import SimpleNamespace
from live_trial.cli.progress import Progress
from live_trial.cli import plan_run
p = Progress(json_mode=True, stream=io.StringIO())
p.event("workdir", {"path": "/w", "session": "lt-x"})
p.event("tick", {"state": "BUSY_TOOL"})
p.close()
p.final(SimpleNamespace(overall="PASS", exit_code=0, workdir="/w", verdict_path=None, scenario_origin="live",
                        stop_reason=None, summary="ok", notification=None))
plan_run.print_plan_summary([], json_mode=True)
print(json.dumps(sorted(m for m in sys.modules if m == "rich" or m.startswith("rich."))), file=sys.stderr)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
    assert '"trials": []' in proc.stdout


@pytest.mark.parametrize("delivery, label", [
    ("sent", "message sent:"), ("failed", "message (webhook failed; sent again later):"),
    ("not_configured", "message (kept in notifications.jsonl; no webhook set):")])
def test_the_panel_says_where_the_message_went(delivery, label):
    """'message sent' was printed even when no webhook was set (a new user took it for a delivered message)."""
    from rich.console import Console

    from live_trial.trial.facts import TrialOutcome
    out = io.StringIO()
    p = Progress(json_mode=False, stream=out)
    p.console = Console(file=out, width=200)
    p.final(TrialOutcome(workdir=None, overall="PASS", exit_code=0, verdict=None, verdict_path=None,
                         scenario_origin="live", summary="ok", notification="✅ done", notification_delivery=delivery))
    assert f"{label} ✅ done" in out.getvalue()


def test_make_demo_prints_the_scripted_trials_tokens():
    """``make demo`` runs ``run`` without --json (its panel) on greet-happy.yaml: the panel prints the verdict's usage,
    the tokens each reply of the scenario scripts, added up per part (README "What a trial costs")."""
    import re
    from pathlib import Path

    import yaml

    from live_trial.transcript.usage import Tokens, Usage, usage_doc

    root = Path(__file__).resolve().parents[3]
    recipe = (root / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "--rehearsal examples/scenarios/greet-happy.yaml" in recipe and "--json" not in recipe
    rules = yaml.safe_load((root / "examples" / "scenarios" / "greet-happy.yaml").read_text())["rules"]
    scripted = {r["id"]: Tokens.of_usage(r["reply"]["usage"]) for r in rules}
    judge = scripted.pop("evaluator-verdict")
    session = sum(scripted.values(), Tokens())
    assert (session.input_tokens, session.responses) == (5700, 4)
    verdict = {"usage": usage_doc(Usage({"claude-opus-4-8": session}), Usage({"claude-opus-4-8": judge}), None,
                                  billed=False)}
    out = io.StringIO()
    outcome = SimpleNamespace(overall="PASS", exit_code=0, workdir="/w", verdict_path="/w/verdict.json",
                              scenario_origin="rehearsal", stop_reason=None, summary="ok", notification=None,
                              verdict=verdict, report=None)
    Progress(stream=out).final(outcome)
    text = re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", out.getvalue()))        # the panel's lines, unwrapped
    assert "cost: $0 (a rehearsal" in text, text
    assert "session claude-opus-4-8: in 5,700 · out 280 · cache read 39,800 · cache write 1,400 (4 responses)" in text
    assert "evaluator claude-opus-4-8: in 6,000 · out 400 · cache read 0 · cache write 0" in text
