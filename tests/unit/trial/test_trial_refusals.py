"""Bad input to a trial is refused before anything is created (CONVENTIONS "Errors": exit 2, nothing on disk)."""
from __future__ import annotations

import json
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
    ({"gate_responses": ["Yes", "A"], "gate_response_kinds": ["rescue", "contractual"]}, "ungrounded_contractual"),
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


def test_gate_answers_keep_their_order_and_kind_from_the_command_line():
    """README "Questions (gates)": --gate-response is a rescue answer, --gate-response-contractual a contractual
    one; answers are used in the order given, whichever option gave them."""
    from live_trial.cli.main import build_parser

    args = build_parser().parse_args(["run", "p:s", "--gate-response", "A", "--gate-response-contractual", "Yes",
                                      "--gate-response", "text:why not"])
    assert args.gate_answers == [("A", "rescue"), ("Yes", "contractual"), ("text:why not", "rescue")]
    assert args.gate_response == ["A", "text:why not"] and args.gate_response_contractual == ["Yes"]
    assert not hasattr(build_parser().parse_args(["run", "p:s"]), "gate_answers")


def test_gate_kind_contractual_makes_every_answer_contractual():
    from live_trial.trial.inputs import gate_kinds

    req = TrialRequest(target="p:s", gate_responses=["A", "B"], gate_response_kinds=["rescue", "contractual"])
    assert gate_kinds(req) == ["rescue", "contractual"]
    req.gate_kind = "contractual"
    assert gate_kinds(req) == ["contractual", "contractual"]
    assert gate_kinds(TrialRequest(target="p:s", gate_responses=["A"])) == ["rescue"]


@pytest.mark.parametrize("flag", ["--gate-response", "--gate-response-contractual"])
def test_a_plan_refuses_answers_to_one_skills_questions(tmp_path, capsys, flag):
    from live_trial.cli.main import main

    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    assert main(["run", "--plan", str(plan), flag, "Yes", "--eval-root", str(tmp_path / "eval")]) == 2
    assert f"{flag} describe one skill's trial" in capsys.readouterr().err
    assert not (tmp_path / "eval").exists()


def _fake_claude(tmp_path, auth: dict) -> str:
    """A claude that answers ``--version`` and ``auth status --json`` as 2.1.332 does, nothing else."""
    path = tmp_path / "claude"
    code = 0 if auth["loggedIn"] else 1
    path.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo '2.1.332 (Claude Code)'; exit 0; }\n"
                    f"[ \"$1 $2\" = 'auth status' ] && {{ echo '{json.dumps(auth)}'; exit {code}; }}\n"
                    "exit 9\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("auth,key,said", [
    ({"loggedIn": False, "authMethod": "none"}, None, "not logged in"),
    ({"loggedIn": True, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"}, "sk-ant-api03-" + "n" * 60,
     "is not approved in this config yet"),
])
def test_a_real_trial_the_cli_would_not_start_is_refused_with_the_doctors_lines(tmp_path, auth, key, said):
    config = tmp_path / "cfg"
    config.mkdir()
    (config / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": ["x" * 20], "rejected": []},
        "projects": {str(tmp_path): {"hasTrustDialogAccepted": True}}}))
    env = {"PATH": os.environ["PATH"], "IS_SANDBOX": "1", "CLAUDE_CONFIG_DIR": str(config),
           "LIVE_TRIAL_CLAUDE_BIN": _fake_claude(tmp_path, auth), **({"ANTHROPIC_API_KEY": key} if key else {})}
    req = TrialRequest(target="hello:greet", plugins_root=PLUGINS, eval_root=tmp_path / "eval")
    with pytest.raises(RefusedInput) as err:
        Trial(req, env=env).run()
    assert err.value.code == "live_login" and said in err.value.message and "\n" not in err.value.message
    lines = err.value.details["doctor"]
    assert [ln.split(":")[0] for ln in lines[:-1]] == ["claude", "config", "login", "trust", "tmux", "sandbox"]
    assert lines[-1] == "DOCTOR: NOT READY (1 missing: login)", lines
    assert not (tmp_path / "eval").exists()


def test_a_message_language_with_no_catalogue_is_refused_before_the_trial_not_after_it(tmp_path):
    """LIVE_TRIAL_LANG=fr: the one message to a person could never be written; refused first (exit 2, nothing on
    disk), as --lang fr is, instead of a trial whose message is silently dropped at its end."""
    with pytest.raises(RefusedInput) as err:
        Trial(_req(tmp_path), env={"IS_SANDBOX": "1", "PATH": os.environ["PATH"], "LIVE_TRIAL_LANG": "fr"}).run()
    assert err.value.code == "unknown_lang" and "'fr'" in err.value.message and "ja" in err.value.fix
    assert not (tmp_path / "eval").exists()


def test_a_real_trial_missing_several_things_names_every_fix_in_its_one_refusal(tmp_path):
    """A fresh config (first run not finished, not logged in) and an untrusted folder: the refusal is the trust's,
    and it says a real trial also needs the config and the login, so following it is not a loop of refusals."""
    config = tmp_path / "cfg"
    config.mkdir()
    (config / ".claude.json").write_text("{}")
    env = {"PATH": os.environ["PATH"], "IS_SANDBOX": "1", "CLAUDE_CONFIG_DIR": str(config),
           "LIVE_TRIAL_CLAUDE_BIN": _fake_claude(tmp_path, {"loggedIn": False, "authMethod": "none"})}
    req = TrialRequest(target="hello:greet", plugins_root=PLUGINS, eval_root=tmp_path / "eval")
    with pytest.raises(RefusedInput) as err:
        Trial(req, env=env).run()
    assert err.value.code == "folder_not_trusted", err.value.code
    assert "a real trial also needs: config, login (the doctor's lines say how)" in err.value.message
    assert "\n" not in err.value.message and not (tmp_path / "eval").exists()
