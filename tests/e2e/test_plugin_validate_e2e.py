"""The CLI's own ``claude plugin validate`` read by ``session.plugin_check`` gives the same load remarks on every
supported CLI version: 2.1.332's "Provides", "Hosts not read for" and plugin-directory (listing) sections are read as
what they are, not as more warnings or errors of the section above them (references/transcript-jsonl.md "Validator,
nested variables and the doctor probe")."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from live_trial.rehearsal.config import rehearsal_env
from live_trial.session import plugin_check as pc
from live_trial.session.claude_bin import find_claude

from .run_support import ROOT

pytestmark = pytest.mark.e2e

AUTHOR = "author: No author information provided. Consider adding author details for plugin attribution"


@pytest.mark.budget(8)
def test_the_load_remarks_are_the_same_on_every_supported_cli(tmp_path):
    """The test plugin has one remark (no author), the example plugin none, a manifest with ``"version": 1`` one error;
    every line the CLI printed is known to the parser."""
    bad = tmp_path / "badver"
    (bad / ".claude-plugin").mkdir(parents=True)
    (bad / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "badver", "version": 1,
                                                                    "description": "d", "author": {"name": "a"}}))
    trialkit, hello = ROOT / "tests" / "e2e" / "plugins" / "trialkit", ROOT / "examples" / "plugins" / "hello"
    env = {**os.environ, **rehearsal_env("http://127.0.0.1:9", tmp_path / "config")}
    kit, greet, broken = pc.validate_plugins(find_claude(None, env).path, [trialkit, hello, bad], env, cache=False)
    assert (kit.exit_code, kit.errors, kit.warnings) == (0, [], [(str(trialkit / ".claude-plugin" / "plugin.json"),
                                                                  AUTHOR)])
    assert (greet.exit_code, greet.errors, greet.warnings) == (0, [], [])
    assert broken.exit_code == 1 and broken.warnings == []
    assert broken.errors == [(str(bad / ".claude-plugin" / "plugin.json"),
                              "version: Invalid input: expected string, received number")]
    assert [r.unknown for r in (kit, greet, broken)] == [[], [], []]
    assert pc.check_plugins(find_claude(None, env).path, [trialkit, hello], {**env, "LIVE_TRIAL_CACHE_DIR":
                                                                             str(tmp_path / "cache")}) == [
        f"plugin trialkit: {AUTHOR} (plugin.json)"]
