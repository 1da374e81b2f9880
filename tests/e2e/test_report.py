"""A trial a person can read (README "Reading a trial"): the report ``run`` writes opens in a real browser (headless
Chromium) with the verdict, its summary, the timeline and every section, and no console error; what the session wrote
stays text; ``ls`` and ``show latest`` read the same eval-log.

Each test runs the real ``python -m live_trial run`` on the real claude CLI in real tmux, the model played by a
rehearsal scenario, as the demo does.
"""
from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.browser_support import all_of, chromium, console_errors, open_page, text
from tests.e2e.run_support import EXAMPLES, PLUGINS, ROOT, SCENARIOS, final_json, run_cmd, verdict_doc

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SECTIONS = ("verdict", "timeline", "evidence", "conversation", "screen", "files")


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", *args, "--eval-root", str(tmp_path / "eval")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


@pytest.mark.budget(25)
def test_the_demo_report_opens_with_the_verdict_and_the_timeline_and_ls_and_show_read_it(tmp_path):
    proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", str(EXAMPLES / "plugins"),
                   "--rehearsal", str(EXAMPLES / "scenarios" / "greet-happy.yaml"), "--args", "World",
                   env={"LIVE_TRIAL_LANG": "ja"})
    result = final_json(proc)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = verdict_doc(result)
    assert doc["summary"].startswith("greet（hello のスキル）は最後まで自分で動き") and doc["summary"].count("。") == 1
    report = Path(result["report"])
    assert report == Path(result["workdir"]) / "report.html"
    assert stat.S_IMODE(report.stat().st_mode) == 0o644
    with chromium(tmp_path / "profile") as driver:
        open_page(driver, report)
        assert text(driver, "#overall") == "PASS"
        assert text(driver, "#summary") == doc["summary"]
        for section in SECTIONS:
            assert all_of(driver, f"section#{section}"), section
        lanes = {e.get_attribute("data-lane") for e in all_of(driver, "#timeline .lane")}
        assert {"boot", "send", "session", "collect", "evaluate", "verdict"} <= lanes, lanes
        states = [e.get_attribute("title") for e in all_of(driver, '#timeline .lane[data-lane="session"] .bar')]
        assert states and any(s.startswith(("BUSY_", "IDLE_TURN_COMPLETE")) for s in states), states
        widths = [e.size["width"] for e in all_of(driver, "#timeline .bar")]
        assert widths and all(w >= 1 for w in widths)
        links = {e.text: e.get_attribute("href") for e in all_of(driver, "#evidence a")}
        assert links["side-effects/files/greeting.txt"].endswith("/side-effects/files/greeting.txt")
        record = next(k for k, v in links.items() if "#rec-" in v)
        all_of(driver, f'#evidence a[href="#rec-{record}"]')[0].click()
        target = all_of(driver, f"#rec-{record}")[0]
        assert target.is_displayed() and "Skill" in target.text
        assert "Hello, World!" in driver.find_element("id", "conversation").get_attribute("textContent")
        assert "Claude Code" in text(driver, "#pane")
        assert console_errors(driver) == []
    listed = _cli(tmp_path, "ls")
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.strip().splitlines()[1:]
    assert "hello:greet" in line and "PASS" in line and "rehearsal" in line
    shown = _cli(tmp_path, "show", "latest")
    assert shown.returncode == 0, shown.stderr
    assert f"summary: {doc['summary']}" in shown.stdout
    assert "next step: run it live" in shown.stdout and "side-effects/files/greeting.txt" in shown.stdout


@pytest.mark.budget(25)
def test_what_the_session_wrote_stays_text_and_the_report_names_the_question_to_answer(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:choose", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "choose-hostile.yaml"), "--stall-limit", "4", "--hard-cap", "90",
                   env={"LIVE_TRIAL_LANG": "en"})
    result = final_json(proc)
    assert proc.returncode == 1 and result["stop_reason"] == "gate_unanswered", \
        (result.get("stop_reason"), result.get("summary"), result.get("reasons"), proc.stderr[-3000:])
    doc = verdict_doc(result)
    assert doc["summary"].startswith("choose (a skill of trialkit) did not get to the end: it asked a question")
    assert "waiting for an answer" not in result["notification"] and "Reply" not in result["notification"]
    assert 'Give the answer to the question "Which <b>greeting</b> style?" (for example "Formal")' in \
        result["notification"]
    with chromium(tmp_path / "profile") as driver:
        open_page(driver, Path(result["report"]))
        assert driver.title.startswith("FAIL") and driver.execute_script("return window.pwned") is None
        assert text(driver, "#overall") == "FAIL"
        words = driver.find_element("id", "conversation").get_attribute("textContent")
        assert "</script><script>window.pwned = 1;" in words and '<img src=x onerror="window.pwned = 2">' in words
        assert all_of(driver, "#conversation img") == [] and len(all_of(driver, "script")) == 1
        failed = all_of(driver, "#conversation .entry.tool.failed")
        assert failed and "/nonexistent/</script>.txt" in failed[0].get_attribute("textContent")
        assert "--gate-response 'Formal'" in text(driver, "#next-step")
        assert console_errors(driver) == []
    shown = json.loads(_cli(tmp_path, "show", result["workdir"], "--json").stdout)
    assert shown["next_step"].startswith("add --gate-response 'Formal' (the question: Which <b>greeting</b> style?)")
    assert any("stopped at a question it had to ask: Which <b>greeting</b> style?" in r for r in shown["reasons"])
