"""``live-trial doctor --cli`` on the real CLI in real tmux (README "Is this claude one the harness reads?"): every
assumption holds on a supported CLI, within its time, each of the two that the supported releases meet in different
ways saying the form this release showed; and on a claude whose bypass dialog says other words it exits 1 naming that
assumption and what the screen showed instead."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from live_trial.doctor import activity, trust
from live_trial.doctor.checks import CHECKS, HOLDS, parse_line
from live_trial.session.claude_bin import find_claude

from .run_support import ROOT

pytestmark = pytest.mark.e2e

DOCTOR_MAX_S = 40


def doctor(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", "doctor", *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


@pytest.mark.budget(25)
def test_every_assumption_holds_on_the_cli_under_test():
    started = time.monotonic()
    proc = doctor("--cli", find_claude().path, "--json")
    elapsed = time.monotonic() - started
    report = json.loads(proc.stdout)
    changed = [c for c in report["checks"] if c["result"] != HOLDS]
    assert (proc.returncode, changed) == (0, []), report
    assert [c["name"] for c in report["checks"]] == list(CHECKS) and report["status"] == "OK"
    assert elapsed < DOCTOR_MAX_S
    # the forms each supported release was seen in (references/transcript-jsonl.md): 2.1.332 names every hook run in
    # its debug log and asks about a git work tree under a trusted folder; 2.1.197 does neither
    forms = {c["name"]: c["saw"] for c in report["checks"]}
    every = report["claude"]["version"] != "2.1.197"
    assert forms["debug_log.hook_runs"] == (activity.EVERY_RUN if every else activity.FAILURES_ONLY), forms
    assert forms["screen.trust_question"] == (trust.ASKED if every else trust.NOT_ASKED), forms


FAKE_CLAUDE = """#!/bin/bash
# A claude whose bypass dialog says "Yes, I agree": every other use goes to the real one.
case " $* " in
  *" --version "*|*" plugin "*|*" -p "*) exec {real} "$@";;
esac
printf '\\n  WARNING: Claude Code running in Bypass Permissions mode\\n\\n'
printf '  By proceeding, you accept all responsibility for actions taken in this mode.\\n\\n'
printf '  \\xe2\\x9d\\xaf 1. No, exit\\n    2. Yes, I agree\\n\\n  Enter to confirm \\xc2\\xb7 Esc to cancel\\n'
exec sleep 300
"""


@pytest.mark.budget(12)
def test_a_changed_bypass_dialog_is_named_with_what_it_showed(tmp_path):
    fake = tmp_path / "claude"
    fake.write_text(FAKE_CLAUDE.format(real=find_claude().path))
    fake.chmod(0o755)
    proc = doctor("--cli", str(fake))
    lines = proc.stdout.splitlines()
    checks = {c.name: c for c in map(parse_line, lines[:-1])}
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert list(checks) == list(CHECKS) and lines[-1].startswith("DOCTOR: CHANGED (")
    assert checks["screen.bypass_dialog"].line() == ("screen.bypass_dialog: changed (missing 'Yes, I accept'; "
                                                    "options: ❯ 1. No, exit | 2. Yes, I agree)")
    assert checks["screen.ready_prompt"].result == "not seen" and checks["transcript.prompt"].result == "not seen"
    assert checks["print.structured_output"].result == checks["validator.format"].result == HOLDS
    assert "the probe stopped at boot" in lines[-1]
