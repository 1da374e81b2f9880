"""The doctor's answer (``live_trial.doctor``): the fixed line format, the summary and exit status, and how boot's
screens become ``screen.bypass_dialog`` / ``screen.ready_prompt`` and the rehearsal log ``rehearsal.*`` — on screens
captured from 2.1.197 and 2.1.332."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from live_trial.doctor import checks as dc
from live_trial.doctor import kit
from live_trial.doctor.kit import scenario
from live_trial.doctor.probe import describe_bypass, judge_boot
from live_trial.doctor.records import judge_rehearsal
from live_trial.errors import BootFail
from live_trial.rehearsal.scenario import load_scenario

SCREENS = Path(__file__).parents[1] / "screens"
ROOT = Path(__file__).resolve().parents[3]


def screen(name: str) -> str:
    return (SCREENS / name).read_text()


def test_each_line_has_the_documented_form_and_reads_back():
    lines = [dc.Check("screen.ready_prompt", dc.HOLDS).line(), dc.Check("transcript.gate").line(),
             dc.Check("validator.format", dc.CHANGED, "unknown line\n'Offers:'").line()]
    assert lines == ["screen.ready_prompt: holds", "transcript.gate: not seen",
                     "validator.format: changed (unknown line 'Offers:')"]
    assert [dc.parse_line(ln) for ln in lines] == [dc.Check("screen.ready_prompt", dc.HOLDS),
                                                   dc.Check("transcript.gate", dc.NOT_SEEN),
                                                   dc.Check("validator.format", dc.CHANGED, "unknown line 'Offers:'")]
    assert dc.parse_line("DOCTOR: OK (19 of 19 hold) claude 2.1.197 at /x in 9s") is None
    assert len(dc.Check("print.structured_output", dc.CHANGED, "x" * 500).line()) < 260


def test_a_check_of_more_than_one_known_form_says_which_it_held_in():
    """2.1.332 names every hook run in its debug log, 2.1.197 none: both hold, and the line says which was seen."""
    checks = dc.Checks()
    checks.judge("debug_log.hook_runs", True, "never shown", form="every run named in the debug log")
    checks.judge("screen.trust_question", False, "boot stopped", form="asked")
    lines = {c.name: c.line() for c in checks.all()}
    assert lines["debug_log.hook_runs"] == "debug_log.hook_runs: holds (every run named in the debug log)"
    assert lines["screen.trust_question"] == "screen.trust_question: changed (boot stopped)"
    assert dc.parse_line(lines["debug_log.hook_runs"]) == dc.Check("debug_log.hook_runs", dc.HOLDS,
                                                                  "every run named in the debug log")
    assert dc.Report(checks.all(), "/c", "2.1.332").to_json()["checks"][list(dc.CHECKS).index(
        "debug_log.hook_runs")] == {"name": "debug_log.hook_runs", "result": "holds",
                                    "saw": "every run named in the debug log"}
    assert dc.parse_line("transcript.gate: not seen (x)") is None and dc.parse_line("transcript.gate: changed") is None


def test_the_summary_and_the_exit_status():
    checks = dc.Checks()
    for name in dc.CHECKS:
        checks.holds(name)
    ok = dc.Report(checks.all(), "/bin/claude", "2.1.197", 9.4)
    assert ok.summary() == f"DOCTOR: OK ({len(dc.CHECKS)} of {len(dc.CHECKS)} hold) claude 2.1.197 at /bin/claude in 9s"
    assert dc.exit_code(ok) == 0 and ok.to_json()["status"] == "OK"
    partly = dc.Checks()            # transcript.gate never recorded: it stays "not seen"
    for name in dc.CHECKS:
        if name != "transcript.gate":
            partly.holds(name)
    partly.changed("screen.bypass_dialog", "no numbered options")
    assert partly.result("transcript.gate") == dc.NOT_SEEN
    bad = dc.Report(partly.all(), "/bin/claude", "2.1.332", 1.0, "the probe stopped at boot (bypass_dialog)")
    assert bad.summary().startswith(f"DOCTOR: CHANGED ({len(dc.CHECKS) - 2} of {len(dc.CHECKS)} hold, 1 changed, "
                                    "1 not seen) claude 2.1.332")
    assert bad.summary().endswith("; the probe stopped at boot (bypass_dialog)") and dc.exit_code(bad) == 1
    assert [c["name"] for c in bad.to_json()["checks"]] == list(dc.CHECKS)


def test_the_probe_scenario_is_a_valid_scenario(tmp_path):
    assert {r.id for r in load_scenario(scenario(tmp_path / "stop-hook-blocked")).rules} >= {
        "task-notification", "stop-hook-feedback", "ask", "mcp-call"}


def test_the_background_shell_ends_once_the_stop_hook_ran_after_its_first_stop(tmp_path):
    """The wake-up always comes after the turn that started the shell: its end waits for the Stop hook's cue."""
    import json as _json

    marker = tmp_path / "stop-hook-blocked"
    plugin = kit.write_plugin(tmp_path / "plugins", marker)
    [rule] = [r for r in scenario(marker)["rules"] if r["id"] == "background"]
    command = rule["reply"]["content"][0]["tool_use"]["input"]["command"]
    shell = subprocess.Popen(["sh", "-c", command], stdout=subprocess.PIPE, text=True)
    stop = [str(plugin / "hooks" / "stop.sh")]
    first = subprocess.run(stop, input="{}", capture_output=True, text=True, check=True)
    assert _json.loads(first.stdout)["decision"] == "block" and shell.poll() is None
    subprocess.run(stop, input="{}", capture_output=True, text=True, check=True)
    assert shell.communicate(timeout=5)[0].strip() == kit.BACKGROUND_OUTPUT


def test_a_bypass_dialog_boot_could_not_accept_is_changed_with_its_options_as_drawn():
    """2.1.332 draws the dialog without numbers: what doctor reports shows no invented numbers."""
    capture = screen("bypass_dialog_332.txt")
    assert describe_bypass(capture) == "all four markers; options: ❯ No, exit | Yes, I accept"
    checks = dc.Checks()
    judge_boot(checks, [capture], BootFail("bypass-permissions dialog without a \"Yes, I accept\" option",
                                           code="bypass_dialog"), False)
    assert checks.result("screen.bypass_dialog") == dc.CHANGED and checks.result("screen.ready_prompt") == dc.NOT_SEEN


def test_a_dialog_with_other_words_names_the_marker_missing():
    capture = screen("bypass_dialog.txt").replace("Yes, I accept", "Yes, I agree")
    assert describe_bypass(capture) == "missing 'Yes, I accept'; options: ❯ 1. No, exit | 2. Yes, I agree"


def test_a_2_1_197_boot_holds_and_another_blocking_screen_is_a_changed_ready_prompt():
    checks = dc.Checks()
    judge_boot(checks, [screen("bypass_dialog.txt"), screen("ready_after_bypass.txt")], None, True)
    assert checks.result("screen.bypass_dialog") == checks.result("screen.ready_prompt") == dc.HOLDS
    checks = dc.Checks()
    judge_boot(checks, [screen("trust_question.txt")], BootFail("boot stopped at the folder-trust question",
                                                                code="blocking_screen"), False)
    assert checks.result("screen.bypass_dialog") == dc.NOT_SEEN
    assert checks.result("screen.ready_prompt") == dc.CHANGED
    assert "blocking_screen: boot stopped at the folder-trust question" in checks.all()[1].saw


def test_the_rehearsal_checks_name_the_request_no_rule_matched():
    served = [{"rule": "tool-done", "side_query": False}, {"rule": "stop-hook-feedback", "side_query": False},
              {"rule": "task-notification", "side_query": False}]
    checks = dc.Checks()
    judge_rehearsal(checks, served)
    assert checks.result("rehearsal.task_notification") == checks.result("rehearsal.stop_hook_feedback") == dc.HOLDS
    missed = [{"rule": None, "rule_missed": True, "side_query": False, "step": 3, "human_turn": 1,
               "prompt_head": "Doctor probe, first prompt"}, {"rule": "task-notification", "side_query": False}]
    checks = dc.Checks()
    judge_rehearsal(checks, missed)
    assert checks.result("rehearsal.task_notification") == dc.HOLDS
    assert checks.all()[list(dc.CHECKS).index("rehearsal.stop_hook_feedback")].line() == (
        "rehearsal.stop_hook_feedback: changed (a request at step 3 of human turn 1 (last prompt 'Doctor probe, "
        "first prompt') matched no rule)")


def _cli(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", "doctor", *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, env={**os.environ, **(env or {})})


def test_doctor_without_cli_says_whether_a_real_trial_can_start_one_line_each(tmp_path):
    proc = _cli("--claude-bin", str(tmp_path / "no-claude"), "--eval-root", str(tmp_path / "eval"),
                env={"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [ln.split(":")[0] for ln in lines[:-1]] == ["claude", "config", "login", "trust", "tmux", "sandbox"]
    assert lines[0].startswith("claude: MISSING") and "; fix: " in lines[0], lines[0]
    assert lines[-1].startswith("DOCTOR: NOT READY (") and "claude, config, login, trust" in lines[-1], lines[-1]


@pytest.mark.parametrize("what", ["claude", "tmux"])
def test_doctor_that_cannot_run_is_blocked_exit_3(tmp_path, what):
    if what == "claude":
        proc = _cli("--cli", str(tmp_path / "no-claude"))
    else:
        fake = tmp_path / "claude"
        fake.write_text("#!/bin/sh\necho 2.1.197\n")
        fake.chmod(0o755)
        proc = _cli("--cli", str(fake), env={"PATH": str(tmp_path)})
    assert proc.returncode == 3 and proc.stderr.startswith("BLOCKED: ") and proc.stdout == ""


def test_a_cli_path_that_is_not_there_is_named_by_the_flag_it_came_from(tmp_path):
    """The doctor's flag is --cli: its refusal names --cli (not run's --claude-bin) and says the file is missing."""
    proc = _cli("--cli", str(tmp_path / "no-claude"))
    assert proc.returncode == 3 and len(proc.stderr.strip().splitlines()) == 1
    assert "named by --cli does not exist" in proc.stderr and "point --cli at" in proc.stderr
    assert "--claude-bin" not in proc.stderr
    not_executable = tmp_path / "claude.txt"
    not_executable.write_text("text")
    proc = _cli("--cli", str(not_executable))
    assert proc.returncode == 3 and "named by --cli is not an executable file" in proc.stderr


def test_a_validator_that_answers_nothing_with_exit_0_does_not_hold(tmp_path, monkeypatch):
    """A binary that is not claude (``/bin/true``) exits 0 and prints nothing: the validator's format is not seen."""
    from live_trial.doctor import probe
    from live_trial.session.plugin_check import Validation

    monkeypatch.setattr(probe, "validate_plugins", lambda *a, **k: [Validation(tmp_path, exit_code=0)])
    holds, saw = probe.validator_holds("/bin/true", tmp_path, {})
    assert holds is False and "no result line" in saw
    answered = Validation(tmp_path, exit_code=0, result="✔ Validation passed")
    monkeypatch.setattr(probe, "validate_plugins", lambda *a, **k: [answered])
    assert probe.validator_holds("/bin/true", tmp_path, {}) == (True, "exit 0")


def test_the_readme_lists_every_line_in_the_order_printed():
    """README "Is this claude one the harness reads?" names each line doctor --cli prints, in its order."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Is this claude one the harness reads?"):text.index("## How the code is laid out")]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    named = [n for row in rows for n in re.findall(r"`([a-z_]+\.[a-z_]+)`", row.split(" | ")[0])]
    assert sorted(named, key=list(dc.CHECKS).index) == named and set(named) == set(dc.CHECKS), named
