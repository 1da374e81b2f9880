"""What a plugin declares that runs in the session: its command hooks and its MCP servers (live_trial/closure/
declared.py), read from the files the CLI reads."""
from __future__ import annotations

import json
from pathlib import Path

from live_trial.closure.declared import plugin_hooks, plugin_servers, skill_hooks, tool_prefix
from live_trial.closure.hook_commands import DeclaredHook, declared_hooks


def _plugin(root: Path, manifest: dict, files: dict[str, object]) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    for rel, doc in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return root


def test_each_command_hook_with_its_event_matcher_and_timeout_in_document_order():
    doc = {"hooks": {"PostToolUse": [{"matcher": "Write|Edit", "hooks": [
        {"type": "command", "command": "a.sh"}, {"type": "command", "command": "b.sh", "timeout": 5},
        {"type": "prompt", "prompt": "not a command"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "c.sh"}]}], "Bad": "not a list"}}
    assert list(declared_hooks(doc)) == [DeclaredHook("PostToolUse", "Write|Edit", "a.sh"),
                                         DeclaredHook("PostToolUse", "Write|Edit", "b.sh", 5.0),
                                         DeclaredHook("Stop", None, "c.sh")]
    assert list(declared_hooks(doc["hooks"])) == list(declared_hooks(doc))      # the inline form
    assert list(declared_hooks("not a document")) == []


def test_a_plugins_hooks_come_from_hooks_json_and_its_manifest(tmp_path):
    inline = {"Stop": [{"hooks": [{"type": "command", "command": "inline.sh"}]}]}
    root = _plugin(tmp_path / "p", {"name": "p", "hooks": ["./more/hooks.json", inline, "../outside.json"]},
                   {"hooks/hooks.json": {"hooks": {"SessionStart": [{"hooks": [{"command": "start.sh"}]}]}},
                    "more/hooks.json": {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "x"}]}]}}})
    found = [(h.declared_in, h.hook.event, h.hook.command) for h in plugin_hooks("p", root, json.loads(
        (root / ".claude-plugin" / "plugin.json").read_text()))]
    assert found == [("hooks/hooks.json", "SessionStart", "start.sh"), ("more/hooks.json", "PreToolUse", "x"),
                     (".claude-plugin/plugin.json", "Stop", "inline.sh")]
    skill = skill_hooks("p", "s", {"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"command": "f.sh"}]}]}})
    assert [(h.declared_in, h.hook.event) for h in skill] == [("skills/s/SKILL.md", "PostToolUse")]


def test_a_plugins_mcp_servers_come_from_mcp_json_and_its_manifest(tmp_path):
    manifest = {"name": "my-kit", "mcpServers": {"api": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/a.js"]},
                                                 "web": {"url": "https://example.invalid/mcp"}}}
    root = _plugin(tmp_path / "k", manifest, {".mcp.json": {"mcpServers": {"echo": {"command": "python3"},
                                                                           "api": {"command": "shadowed"}}}})
    servers = plugin_servers("my-kit", root, manifest)
    assert [(s.name, s.declared_in, s.command) for s in servers] == [
        ("plugin:my-kit:echo", ".mcp.json", ("python3",)), ("plugin:my-kit:api", ".mcp.json", ("shadowed",)),
        ("plugin:my-kit:web", ".claude-plugin/plugin.json", ())]
    assert plugin_servers("x", tmp_path / "nothing", {}) == []
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / ".mcp.json").write_text("{not json")
    assert plugin_servers("bad", tmp_path / "bad", {}) == []      # the CLI and its validator say what is wrong


def test_a_servers_tools_are_named_as_the_cli_names_them():
    # observed on 2.1.197 and 2.1.332: mcp__plugin_obskit_echo__echo, mcp__plugin_obs-kit3_my-svc__echo
    assert tool_prefix("plugin:obskit:echo") == "mcp__plugin_obskit_echo__"
    assert tool_prefix("plugin:obs-kit3:my-svc") == "mcp__plugin_obs-kit3_my-svc__"
    assert tool_prefix("github") == "mcp__github__"
