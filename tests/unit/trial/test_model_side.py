"""A recorded trial's CLI runs with the variables every rehearsal and replay sets to keep it quiet: the requests it
sends depend on them (references/transcript-jsonl.md "Two runs of one trial, request by request"), and a tape must
hold what its replay will send."""
from __future__ import annotations

from pathlib import Path

from live_trial.rehearsal.config import rehearsal_env
from live_trial.trial.model_side import RECORDING_ENV


def test_a_recording_runs_the_cli_as_quiet_as_its_replay_will() -> None:
    replayed = rehearsal_env("http://127.0.0.1:1", Path("/tmp/config"))
    assert RECORDING_ENV == {k: replayed[k] for k in RECORDING_ENV}
    assert {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY"} <= set(RECORDING_ENV)
