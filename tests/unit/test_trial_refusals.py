"""Bad input to a trial is refused before anything is created (CONVENTIONS "Errors": exit 2, nothing on disk)."""
from __future__ import annotations

import os

import pytest

from live_trial.errors import RefusedInput
from live_trial.resources import repo_root
from live_trial.trial.facts import TrialRequest
from live_trial.trial.runner import Trial

PLUGINS = repo_root() / "examples" / "plugins"


def _req(tmp_path, **kw):
    return TrialRequest(target=kw.pop("target", "hello:greet"), plugins_root=PLUGINS, cwd=tmp_path,
                        eval_root=tmp_path / "eval", **kw)


@pytest.mark.parametrize("kw,code", [
    ({"target": "nosuch:greet"}, "unknown_plugin"),
    ({"target": "hello:nosuch"}, "unknown_skill"),
    ({"target": "hello:run-skill-live-trial"}, "denied_target"),
    ({"proof": True}, "proof_needs_model"),
    ({"proof": True, "model": "sonnet"}, "proof_alias"),
    ({"model": "a;b"}, "bad_model"),
    ({"gate_kind": "contractual"}, "ungrounded_contractual"),
    ({"gate_responses": ["Casual", " "]}, "empty_gate_response"),
    ({"gate_responses": ["text:"]}, "empty_gate_response"),
    ({"proof": True, "model": "claude-sonnet-4-5-20250929",
      "rehearsal": repo_root() / "examples" / "scenarios" / "greet-happy.yaml"}, "proof_with_rehearsal"),
])
def test_refused_before_anything_is_created(tmp_path, kw, code):
    with pytest.raises(RefusedInput) as err:
        Trial(_req(tmp_path, **kw), env={"IS_SANDBOX": "1", "PATH": os.environ["PATH"]}).run()
    assert err.value.code == code and "\n" not in err.value.message
    assert not (tmp_path / "eval").exists()


def test_a_real_trial_as_root_without_sandbox_is_refused_first(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(RefusedInput) as err:
        Trial(_req(tmp_path), env={"IS_SANDBOX": "yes", "PATH": os.environ["PATH"]}).run()
    assert err.value.code == "root_needs_sandbox" and "IS_SANDBOX=1" in err.value.message
    assert not (tmp_path / "eval").exists()


def test_a_malformed_scenario_is_refused_first(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [{reply: {stop_reason: nope}}]\n")
    with pytest.raises(RefusedInput):
        Trial(_req(tmp_path, rehearsal=bad), env={"PATH": os.environ["PATH"]}).run()
    assert not (tmp_path / "eval").exists()
