"""What a CLI release the harness was never shown writes is named, never guessed at (README "Set-up"): a record of
an unknown type in the session's own transcript is left out of every count and named in the verdict with the CLI
version; the trial's outcome is still its own."""
from __future__ import annotations

import pytest

from live_trial.session.claude_bin import find_claude

from .run_support import FAST, PLUGINS, SCENARIOS, final_json, no_leftovers, run_cmd, verdict_doc, workdirs


@pytest.mark.budget(10)
def test_a_record_of_a_type_no_release_wrote_is_named_in_the_verdict_with_the_cli_version(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-future-record.yaml"), *FAST)
    result = final_json(proc)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = verdict_doc(result)
    assert doc["overall"]["verdict"] == "PASS"
    wd = workdirs(tmp_path)[0]
    assert '"type":"future-record"' in (wd / "transcript.jsonl").read_text()        # the session appended it
    named = [n for n in doc["notes"] if "future-record ×1" in n]
    assert len(named) == 1, doc["notes"]
    assert f"claude {find_claude().version}" in named[0] and "live-trial doctor --cli" in named[0]
    assert not any("does not know" in n and "future-record" not in n for n in doc["notes"])   # nothing else unknown
    no_leftovers(wd)
