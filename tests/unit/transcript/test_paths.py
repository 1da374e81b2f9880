"""The CLI's live status file, found from the pane's pid (live_trial/transcript/paths.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from live_trial.transcript.paths import read_cli_session_status


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="a PID namespace needs root here")
def test_the_status_file_of_a_cli_in_a_pid_namespace_is_found_by_the_panes_pid(tmp_path):
    """README "Nothing left running": the holder may run the CLI in a PID namespace, which names its
    sessions/<pid>.json by its pid there; the pane's pid (the holder's) still finds it, through its descendants."""
    ns = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "sh", "-c", "sleep 30"])
    try:
        time.sleep(0.3)
        (tmp_path / "sessions").mkdir()
        (tmp_path / "sessions" / "2.json").write_text('{"pid": 2, "sessionId": "s-1", "status": "idle"}')
        assert read_cli_session_status(tmp_path, ns.pid) == {"pid": 2, "sessionId": "s-1", "status": "idle"}
        (tmp_path / "sessions" / "2.json").write_text('{"pid": 7, "sessionId": "s-2"}')     # another pid's file
        assert read_cli_session_status(tmp_path, ns.pid) is None
    finally:
        ns.kill()
        ns.wait()
