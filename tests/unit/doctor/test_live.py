"""The doctor's lines for a real trial (live_trial.doctor.live): what each says and the fix, read from a config as
claude 2.1.197 and 2.1.332 write it (references/transcript-jsonl.md "The live path") and from `claude auth status`."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from live_trial.doctor import live
from live_trial.session.claude_bin import VERIFIED_RANGE, ClaudeBinary

KEY = "sk-ant-api03-" + "k" * 80 + "AA"


def config(tmp_path, **doc) -> dict:
    (tmp_path / ".claude.json").write_text(json.dumps(doc))
    return {"CLAUDE_CONFIG_DIR": str(tmp_path)}


def status(**doc):
    def runner(argv, env):
        assert argv[1:] == ["auth", "status", "--json"]
        return subprocess.CompletedProcess(argv, 0 if doc.get("loggedIn") else 1, json.dumps(doc), "")
    return runner


def test_config_line_needs_the_first_run_set_up_done(tmp_path):
    assert not live.config_line({"CLAUDE_CONFIG_DIR": str(tmp_path)}).ok          # no .claude.json at all
    half = live.config_line(config(tmp_path, numStartups=1))
    assert not half.ok and "set-up is not finished" in half.text and "run `claude` once" in half.fix
    assert live.config_line(config(tmp_path, hasCompletedOnboarding=True)).line().startswith("config: ok ")
    assert live.claude_json({"HOME": str(tmp_path)}) == tmp_path / ".claude.json"


def test_login_is_the_clis_answer_and_a_key_must_be_approved_in_this_config(tmp_path):
    env = {**config(tmp_path, hasCompletedOnboarding=True,
                    customApiKeyResponses={"approved": [KEY[-20:]], "rejected": []}), "ANTHROPIC_API_KEY": KEY}
    api = {"loggedIn": True, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"}
    assert live.login_line(live.auth_status("claude", env, status(**api)), env).ok
    other = {**env, "ANTHROPIC_API_KEY": "sk-ant-api03-" + "o" * 80 + "BB"}
    line = live.login_line(api, other)
    assert not line.ok and "not approved" in line.text and "answer Yes" in line.fix and "…ooBB" in line.text
    assert KEY[:30] not in line.line() and other["ANTHROPIC_API_KEY"][:30] not in line.line()     # never the key
    rejected = {**config(tmp_path, customApiKeyResponses={"approved": [], "rejected": [KEY[-20:]]}),
                "ANTHROPIC_API_KEY": KEY}
    assert "refused" in live.login_line(api, rejected).text
    out = live.login_line({"loggedIn": False, "authMethod": "none"}, {})
    assert not out.ok and "claude auth login" in out.fix
    assert live.login_line({"loggedIn": True, "authMethod": "oauth_token"}, {}).ok
    assert live.login_line(None, {}).ok                              # a CLI that cannot tell: found out at start


def test_auth_status_without_json_is_no_answer():
    def runner(argv, env):
        return subprocess.CompletedProcess(argv, 1, "error: unknown command 'auth'", "")
    assert live.auth_status("claude", {}, runner) is None


def test_the_clis_answer_is_asked_on_a_private_copy_so_the_persons_config_stays_byte_for_byte(tmp_path):
    """`claude auth status` rewrites the config it runs on (.claude.json, a backups/ copy; seen on 2.1.332): it runs
    on a private copy of what it reads, which it sees whole, and the person's folder is left as it was."""
    folder = tmp_path / "me"
    folder.mkdir()
    (folder / ".claude.json").write_text('{"hasCompletedOnboarding": true}')
    (folder / ".credentials.json").write_text('{"claudeAiOauth": {}}')
    (folder / "settings.json").write_text("{}")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    seen = {}

    def rewrites(argv, env):
        private = Path(env["CLAUDE_CONFIG_DIR"])
        seen.update({p.name: p.read_bytes() for p in private.iterdir()}, folder=private)
        (private / ".claude.json").write_text('{"numStartups": 2}')            # as the CLI does
        (private / "backups").mkdir()
        return subprocess.CompletedProcess(argv, 0, json.dumps({"loggedIn": True, "authMethod": "claude.ai"}), "")

    answer = live.auth_status("claude", {"CLAUDE_CONFIG_DIR": str(folder)}, rewrites)
    assert answer == {"loggedIn": True, "authMethod": "claude.ai"}
    assert {k: v for k, v in seen.items() if k != "folder"} == before        # it read the person's files, copied
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before      # and changed none of them
    assert seen["folder"] != folder and not seen["folder"].exists()          # the copy is gone


def test_trust_is_the_folder_or_one_above_it(tmp_path):
    env = config(tmp_path, projects={str(tmp_path / "work"): {"hasTrustDialogAccepted": True},
                                     str(tmp_path / "no"): {"hasTrustDialogAccepted": False}})
    assert live.trusted_above(tmp_path / "work" / "eval-log", env) == tmp_path / "work"
    line = live.trust_line(tmp_path / "no" / "eval-log", env)
    assert not line.ok and "Yes, I trust this folder" in line.fix and line.name == "trust"


def test_sandbox_matters_only_for_root():
    assert live.sandbox_line({}, euid=1000).ok
    assert not live.sandbox_line({}, euid=0).ok and "IS_SANDBOX=1" in live.sandbox_line({}, euid=0).fix
    assert live.sandbox_line({"IS_SANDBOX": "1"}, euid=0).ok


def test_summary_names_what_is_missing():
    lines = [live.Line("claude", True, "x"), live.Line("login", False, "y", "z"), live.Line("trust", False, "t", "f")]
    assert live.summary(lines) == "DOCTOR: NOT READY (2 missing: login, trust)"
    assert live.summary(lines[:1]) == "DOCTOR: READY (a live trial can start)"
    assert lines[1].line() == "login: MISSING y; fix: z"


@pytest.mark.parametrize("version, inside", [("2.1.197", True), ("2.1.332", True), ("2.1.250", True),
                                             ("2.1.196", False), ("2.1.333", False), ("unknown", False)])
def test_the_claude_line_says_whether_its_version_is_in_the_supported_range(version, inside):
    """A claude outside the range still runs a trial (with a warning): the line holds either way, and says which."""
    line = live.claude_line(ClaudeBinary("/opt/claude", version, "path"))
    assert line.ok and line.line().startswith(f"claude: ok {version} at /opt/claude")
    if inside:
        assert f"(in the supported range {VERIFIED_RANGE})" in line.text
    else:
        assert f"is outside the supported range {VERIFIED_RANGE}" in line.text
        assert "`live-trial doctor --cli /opt/claude` checks it" in line.text


def test_a_missing_claude_and_a_missing_tmux_are_missing_lines_with_their_fix(tmp_path, monkeypatch):
    from live_trial.session.backend import Backend

    monkeypatch.setattr(Backend, "tmux_version", lambda self: None)
    env = {**config(tmp_path, hasCompletedOnboarding=True), "PATH": str(tmp_path / "empty")}
    lines = {ln.name: ln for ln in live.check_live(env, folder=tmp_path, claude_bin=str(tmp_path / "no-claude"),
                                                     euid=1000)}
    assert not lines["claude"].ok and lines["claude"].line().startswith("claude: MISSING ")
    assert "does not exist" in lines["claude"].text and "--claude-bin" in lines["claude"].fix
    assert (lines["login"].ok, lines["login"].fix) == (False, "install claude first (`make setup`)")
    assert lines["tmux"].line() == "tmux: MISSING tmux not found; fix: `apt-get install tmux` (or `make setup` as root)"
    assert live.summary(list(lines.values())).startswith("DOCTOR: NOT READY (")
    assert "claude" in live.summary(list(lines.values())) and "tmux" in live.summary(list(lines.values()))
