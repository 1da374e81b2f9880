"""What a plugin declares that runs inside the session: its command hooks and its MCP servers (references/
transcript-jsonl.md "What a plugin's hooks and MCP servers leave behind"; README "What a trial leaves behind").

The CLI loads a plugin given with ``--plugin-dir`` with the hooks of ``hooks/hooks.json`` and of plugin.json's
``hooks`` (a path, a list of paths, or the hooks inline), and the MCP servers of ``.mcp.json`` and of plugin.json's
``mcpServers`` (inline, or a path). It names such a server ``plugin:<plugin>:<server>`` and its tools
``mcp__plugin_<plugin>_<server>__<tool>`` (observed on 2.1.197 and 2.1.332; a ``-`` stays). A skill's frontmatter
``hooks`` are the skill's own hooks. The harness reads the same files to know which hooks and servers a trial loaded,
so the ledger of what ran (:mod:`live_trial.session.plugin_activity`) lists each one, also one that never ran.

A file that cannot be read, or is not of the shape the CLI reads, declares nothing here (the closure and the CLI's
validator say what is wrong with it); nothing here raises for a plugin's content.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from live_trial.closure.hook_commands import DeclaredHook, declared_hooks
from live_trial.closure.manifest import ClosureError, read_json_object

HOOKS_FILE = "hooks/hooks.json"
MCP_FILE = ".mcp.json"


@dataclass(frozen=True)
class PluginHook:
    """A hook a loaded plugin (or the skill under trial) declares."""

    plugin: str
    """The plugin's name."""
    declared_in: str
    """Where: a plugin-relative file (``hooks/hooks.json``, ``.claude-plugin/plugin.json``, ``skills/<s>/SKILL.md``)."""
    hook: DeclaredHook
    """Its event, matcher, command and timeout."""


@dataclass(frozen=True)
class DeclaredServer:
    """An MCP server a loaded plugin declares."""

    plugin: str
    """The plugin's name."""
    server: str
    """The server's key in the plugin's declaration."""
    declared_in: str
    """``.mcp.json`` or ``.claude-plugin/plugin.json`` (or the file plugin.json's ``mcpServers`` names)."""
    command: tuple[str, ...]
    """Its command and arguments as written (``${CLAUDE_PLUGIN_ROOT}`` not expanded); empty for a remote server."""

    @property
    def name(self) -> str:
        """The server's name in the session: ``plugin:<plugin>:<server>``."""
        return plugin_server_name(self.plugin, self.server)


def plugin_server_name(plugin: str, server: str) -> str:
    """``plugin:<plugin>:<server>``: how the CLI names a plugin's MCP server (its init record, its debug log)."""
    return f"plugin:{plugin}:{server}"


def tool_prefix(server_name: str) -> str:
    """``mcp__<name>__``: the prefix of the tools of the MCP server ``server_name`` in the session, every character
    outside ``[A-Za-z0-9_-]`` as ``_`` (``plugin:obskit:echo`` -> ``mcp__plugin_obskit_echo__``)."""
    return "mcp__" + re.sub(r"[^A-Za-z0-9_-]", "_", server_name) + "__"


def _json(root: Path, rel: str) -> Any:
    path = root / rel
    if not path.is_file():
        return None
    try:
        return read_json_object(path, rel)
    except ClosureError:
        return None


def _inside(root: Path, rel: str) -> str | None:
    """``rel`` normalised when it stays inside the plugin, else None."""
    norm = os.path.normpath(rel).replace(os.sep, "/")
    return None if norm.startswith("../") or norm == ".." or os.path.isabs(norm) else norm


def plugin_hooks(plugin: str, root: Path, manifest: Mapping[str, Any]) -> list[PluginHook]:
    """The command hooks the plugin at ``root`` declares (``hooks/hooks.json``, then plugin.json's ``hooks``: paths
    read as hooks files, an object read inline), in that order."""
    out = [PluginHook(plugin, HOOKS_FILE, h) for h in declared_hooks(_json(Path(root), HOOKS_FILE))]
    cfg = manifest.get("hooks")
    for item in cfg if isinstance(cfg, list) else [cfg]:
        if isinstance(item, str) and (rel := _inside(Path(root), item)) is not None and rel != HOOKS_FILE:
            out += [PluginHook(plugin, rel, h) for h in declared_hooks(_json(Path(root), rel))]
        elif isinstance(item, dict):
            out += [PluginHook(plugin, ".claude-plugin/plugin.json", h) for h in declared_hooks(item)]
    return out


def skill_hooks(plugin: str, skill: str, frontmatter: Mapping[str, Any]) -> list[PluginHook]:
    """The command hooks a skill's frontmatter ``hooks`` declares."""
    return [PluginHook(plugin, f"skills/{skill}/SKILL.md", h) for h in declared_hooks(frontmatter.get("hooks"))]


def _servers(doc: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if not isinstance(doc, dict):
        return
    servers = doc["mcpServers"] if isinstance(doc.get("mcpServers"), dict) else doc
    for name, spec in servers.items():
        if isinstance(name, str) and isinstance(spec, dict) and ("command" in spec or "url" in spec):
            yield name, spec


def _command(spec: Mapping[str, Any]) -> tuple[str, ...]:
    command = spec.get("command")
    if not isinstance(command, str):
        return ()
    args = spec.get("args")
    return (command, *(str(a) for a in args)) if isinstance(args, list) else (command,)


def plugin_servers(plugin: str, root: Path, manifest: Mapping[str, Any]) -> list[DeclaredServer]:
    """The MCP servers the plugin at ``root`` declares: ``.mcp.json`` and plugin.json's ``mcpServers`` (inline, or
    a path to such a file), in that order, each name once."""
    out: dict[str, DeclaredServer] = {}
    sources: list[tuple[str, Any]] = [(MCP_FILE, _json(Path(root), MCP_FILE))]
    cfg = manifest.get("mcpServers")
    for item in cfg if isinstance(cfg, list) else [cfg]:
        if isinstance(item, str) and (rel := _inside(Path(root), item)) is not None:
            sources.append((rel, _json(Path(root), rel)))
        elif isinstance(item, dict):
            sources.append((".claude-plugin/plugin.json", item))
    for where, doc in sources:
        for name, spec in _servers(doc):
            out.setdefault(name, DeclaredServer(plugin, name, where, _command(spec)))
    return list(out.values())
