"""The harness as a Claude Code plugin on the pinned CLI (README "Use it from Claude Code"): the repository's
marketplace is added and its plugin installed offline into a fresh config, and a session started with that config
lists the skill ``live-trial:run-skill-live-trial`` (references/transcript-jsonl.md, "Plugins from a marketplace")."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from live_trial.rehearsal.config import rehearsal_env, seed_config
from live_trial.session import send
from live_trial.session.boot import BootRequest, boot
from live_trial.session.claude_bin import find_claude
from live_trial.transcript.order import causal_order
from live_trial.transcript.paths import locate
from live_trial.transcript.reader import read_records
from live_trial.trial.loading import skill_listing
from tests.e2e.run_support import ROOT
from tests.e2e.session_support import PLAIN_SCENARIO, TrackingBackend, session_name
from tests.e2e.waiting import wait_for

pytestmark = pytest.mark.e2e

SKILL = "live-trial:run-skill-live-trial"


def no_network_prefix() -> list[str]:
    """``unshare -n`` (a network namespace with no interface up) when this process may make one, else nothing."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def install_from_marketplace(config: Path, cwd: Path, *scope: str) -> list[subprocess.CompletedProcess]:
    """``claude plugin marketplace add <this repository>`` then ``claude plugin install live-trial@live-trial``
    (``scope``: e.g. ``--scope local``; none: the default, user) into ``config``, run in ``cwd``, with no network when
    the machine allows it; returns both processes."""
    env = {**os.environ, **rehearsal_env("http://127.0.0.1:9", config)}
    claude = find_claude(None, env).path
    return [subprocess.run([*no_network_prefix(), claude, "plugin", *argv], cwd=cwd, env=env, capture_output=True,
                           text=True, timeout=120)
            for argv in (["marketplace", "add", str(ROOT)], ["install", "live-trial@live-trial", *scope])]


@pytest.fixture
def backend():
    b = TrackingBackend()
    yield b
    b.cleanup()


def boot_installed(backend, tmp_path: Path, server_url: str, *scope: str, setting_sources: str | None = None):
    """A fresh config with the plugin installed from the marketplace, and a session booted with it (no
    ``--plugin-dir``: the plugin comes from the install; ``setting_sources`` None: every settings source, as a person
    starts ``claude``). Returns (boot result, cwd, config)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    config = seed_config(tmp_path / "config", [cwd])
    for proc in install_from_marketplace(config, cwd, *scope):
        assert proc.returncode == 0, (proc.args, proc.stdout, proc.stderr)
    req = BootRequest(session=session_name("plugin"), cwd=cwd, env_overrides=rehearsal_env(server_url, config),
                      rehearsal=True, owner_pid=os.getpid(), timeout_s=90, setting_sources=setting_sources)
    return boot(req, backend), cwd, config


def listed_skills(backend, result, cwd: Path, config: Path, tmp_path: Path) -> list[str]:
    """The names of the skill listing the CLI attaches to the session's first prompt (a one-line prompt sent)."""
    task = tmp_path / "hello.md"
    task.write_text("list your skills\n")
    tpath = locate(result.session_id, cwd, config)
    send.send_file(backend, result.session, task, transcript_path=tpath)
    return wait_for(lambda: skill_listing(read_records(tpath).records), what="the skill listing of the first prompt")


@pytest.mark.budget(20)
def test_the_plugin_added_from_the_marketplace_offline_is_listed_in_a_session(backend, tmp_path, rehearsal_server):
    """The CLI's validator passes the marketplace and the plugin without a warning; the README's two commands
    (default scope: user) into a fresh config, offline; a session started as a person starts ``claude`` lists the
    skill."""
    env = {**os.environ, **rehearsal_env("http://127.0.0.1:9", tmp_path / "validate-config")}
    for folder in (ROOT, ROOT / "claude-plugin" / "live-trial"):       # the marketplace, then the plugin
        checked = subprocess.run([find_claude(None, env).path, "plugin", "validate", str(folder)], env=env,
                                 capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0 and "✔ Validation passed\n" in checked.stdout, checked.stdout   # no warnings
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, config = boot_installed(backend, tmp_path, srv.url)
    assert not [a for a in result.argv if a in ("--plugin-dir", "--setting-sources")], result.argv
    installed = json.loads((config / "plugins" / "installed_plugins.json").read_text())
    assert list(installed["plugins"]) == ["live-trial@live-trial"]
    (entry,) = installed["plugins"]["live-trial@live-trial"]
    assert (Path(entry["installPath"]) / "skills" / "run-skill-live-trial" / "SKILL.md").is_file()

    assert SKILL in listed_skills(backend, result, cwd, config, tmp_path)


@pytest.mark.budget(20)
@pytest.mark.parametrize("scope,listed", [("user", False), ("local", True)])
def test_a_trial_session_sees_only_a_local_scope_install(backend, tmp_path, rehearsal_server, scope, listed):
    """A trial's session reads only local settings (seed 001 absolute rule 3, ``--setting-sources local``): a plugin
    installed for the user does not reach it, one installed with ``--scope local`` in its folder does."""
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, config = boot_installed(backend, tmp_path, srv.url, "--scope", scope, setting_sources="local")
    assert result.argv[result.argv.index("--setting-sources") + 1] == "local"
    assert (SKILL in listed_skills(backend, result, cwd, config, tmp_path)) is listed


def tool_calls(records: list[dict]) -> list[tuple[dict, dict | None]]:
    """Each main-chain tool_use of the transcript with its tool_result block (None when none came), in the order they
    happened (the file is not in that order: references/transcript-jsonl.md "Order")."""
    records = causal_order(records)
    results = {}
    for rec in records:
        content = (rec.get("message") or {}).get("content")
        if rec.get("type") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[block.get("tool_use_id")] = block
    calls = []
    for rec in records:
        if rec.get("type") == "assistant" and rec.get("isSidechain") is not True:
            for block in rec["message"]["content"]:
                if block.get("type") == "tool_use":
                    calls.append((block, results.get(block["id"])))
    return calls


def result_text(result: dict | None) -> str:
    content = (result or {}).get("content")
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content or "")


def tmux_on(socket: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tmux", "-L", socket, *argv], capture_output=True, text=True)
