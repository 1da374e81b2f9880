"""The plugin activity of one trial's workdir, read from what it holds (README "What a trial leaves behind"): the
plugins ``trial-state.json`` recorded at start (the closure's plugins and the folders boot gave the CLI) and the
stand-in MCP servers it started, the declarations in those folders (:mod:`live_trial.closure.declared`), the session's
transcripts (the ones it left with ``/clear``, ``transcript.jsonl``, ``subagents/``) and its debug log
(``claude-debug/session.log``). :func:`read_activity` gives the ledger of
:func:`live_trial.session.plugin_activity.build_activity`; the verdict, the evaluator's request and the report read
it the same way, so they say the same.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from live_trial.closure.declared import DeclaredServer, PluginHook, plugin_hooks, plugin_servers, skill_hooks
from live_trial.closure.manifest import ClosureError, read_json_object
from live_trial.jsonfile import parse_json
from live_trial.session.plugin_activity import PluginActivity, StandIn, build_activity
from live_trial.transcript.debug_log import read_debug_log
from live_trial.transcript.hook_records import read_hook_records
from live_trial.transcript.reader import iter_records
from live_trial.workdir_files import Workdir

MANIFEST = ".claude-plugin/plugin.json"


def _state(wd: Workdir) -> Mapping[str, Any]:
    try:
        doc = parse_json(wd.trial_state.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _manifest(folder: Path) -> Mapping[str, Any]:
    try:
        return read_json_object(folder / MANIFEST, "plugin.json")
    except ClosureError:
        return {}


def _line_matters(line: bytes) -> bool:
    return b"hook" in line or b"tool_use" in line or b"failedMcpServers" in line


def stand_ins(state: Mapping[str, Any], declared: list[DeclaredServer]) -> list[StandIn]:
    """The stand-in MCP servers ``trial-state.json`` records (``mcp_fixtures``), each with the declared server it
    replaced (by its name in the session)."""
    by_name = {s.name: s for s in declared}
    out = []
    for item in state.get("mcp_fixtures") or []:
        if isinstance(item, dict) and isinstance(item.get("server"), str):
            out.append(StandIn(str(item.get("name")), item["server"], tuple(str(c) for c in item.get("command") or []),
                               by_name.get(item["server"])))
    return out


def read_activity(workdir: Path, frontmatter: Mapping[str, Any] | None = None) -> PluginActivity | None:
    """The ledger of the trial in ``workdir``; ``frontmatter``: the skill's (its own ``hooks``). None when the trial
    loaded no plugin, or its plugins and the skill declare no hook and no MCP server and it started no stand-in. Never
    raises for content: a file that cannot be read adds nothing."""
    wd = Workdir.of(workdir)
    state = _state(wd)
    closure = state.get("closure") if isinstance(state.get("closure"), dict) else None
    if not closure:
        return None
    target = state.get("plugin")
    hooks: list[tuple[PluginHook, str]] = []
    servers: list[DeclaredServer] = []
    roots: dict[str, str] = {}
    for name, folder in zip(closure.get("plugins") or [], closure.get("plugin_dirs") or []):
        root = Path(str(folder))
        manifest = _manifest(root)
        roots[str(name)] = str(root)
        source = "plugin" if name == target else "dependency"
        hooks += [(h, source) for h in plugin_hooks(str(name), root, manifest)]
        servers += plugin_servers(str(name), root, manifest)
    if target and frontmatter:
        hooks = [(h, "skill") for h in skill_hooks(str(target), str(state.get("skill")), frontmatter)] + hooks
    standing = stand_ins(state, servers)
    if not hooks and not servers and not standing:
        return None         # nothing declared to account for: the transcripts are not read again
    paths = [*wd.session_transcripts, *sorted(wd.subagents.glob("*.jsonl"))]
    records = read_hook_records(rec for path in paths if path.is_file()
                                for rec in iter_records(path, select=_line_matters))
    log = read_debug_log(wd.debug_log)
    activity = build_activity(hooks, servers, standing, records, log, target_plugin=target, roots=roots,
                              marker=str(wd.marker))
    if not activity.hooks and not activity.servers and not activity.other_runs:
        return None
    return activity
