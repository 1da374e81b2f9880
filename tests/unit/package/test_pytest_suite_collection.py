"""A plugin's live-trials.yaml collected by pytest (README "Testing a skill with pytest"): a bad file is one
collection error naming its file, line and key, with no Python traceback; no trial is started for it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_a_bad_suite_file_is_one_collection_error_without_a_traceback(tmp_path: Path) -> None:
    plugin = tmp_path / "myp"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "myp"}')
    suite = plugin / "live-trials.yaml"
    suite.write_text("skills:\n  note:\n    cases:\n      - name: a\n        arg: typo\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(suite)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-2000:]                  # pytest: errors during collection
    assert f"{suite}:5 skills.note.cases[0].arg: unknown key 'arg'" in out, out[-2000:]
    assert "Traceback" not in out and "RefusedInput" not in out, out[-2000:]
