"""The "Plugin activity" section of a trial's page and of ``show`` (README "Reading a trial", "What a trial leaves
behind"): the verdict's ledger of the loaded plugins' hooks and MCP servers as rows a person reads, each with the id
an evidence item cites it by (``plugin-activity#<id>``). Reads the verdict document only.
"""
from __future__ import annotations

from typing import Any, Mapping

from live_trial.session.plugin_activity import CITE_PREFIX, PluginActivity, hook_line, server_line, short_name


def activity_rows(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{recorded, hooks: [...], servers: [...], other: [...]}`` for the page; None when the verdict has no
    ``plugin_activity``. Each hook row: ``id``, ``event`` (with its matcher), ``hook`` (its script's name),
    ``command``, ``plugin``, ``source``, ``runs``, ``ok`` ("?" when the CLI does not record them), ``blocked``,
    ``errors``, ``timeouts`` (timeouts and cancels), ``failed``; each server row: ``id``, ``name``, ``line``,
    ``failed``."""
    activity = PluginActivity.from_doc(doc.get("plugin_activity"))
    if activity is None:
        return None
    hooks = [{"id": h.id, "anchor": f"activity-{h.id}", "event": h.event + (f" ({h.matcher})" if h.matcher else ""),
              "hook": short_name(h.command), "command": h.command, "plugin": h.plugin, "source": h.source,
              "runs": "?" if h.runs is None else h.runs, "ok": "?" if h.ok is None else h.ok,
              "blocked": h.blocked, "errors": h.errors, "timeouts": h.timeouts + h.cancelled,
              "failed": bool(h.failed), "line": hook_line(h)} for h in activity.hooks]
    servers = [{"id": s.id, "anchor": f"activity-{s.id}", "name": s.name, "line": server_line(s),
                "failed": s.at_start == "failed"} for s in activity.servers]
    other = [f"{r.get('event')}{' (' + str(r['query']) + ')' if r.get('query') else ''}: {r.get('outcome')}"
             + (f" ({r['detail']})" if r.get("detail") else "")
             + (f" · {str(r['command'])[:80]}" if r.get("command") else " · the CLI does not name its command")
             for r in activity.other_runs]
    recorded = ("every run of a hook (the CLI's debug log names each one)" if activity.runs_recorded == "every" else
                "no hook is declared, so no hook run" if not activity.hooks else
                "the failed, blocking and Stop runs of a hook only: the CLI's debug log named no run (2.1.197 names "
                "none; a newer CLI names each run that happened, so none may have) (?)")
    return {"recorded": recorded, "hooks": hooks, "servers": servers, "other": other}


def activity_href(source: str) -> str | None:
    """The page's link to the activity row ``source`` cites (``plugin-activity#hook-2`` -> ``#activity-hook-2``)."""
    if source.lower().startswith(CITE_PREFIX):
        return "#activity-" + source[len(CITE_PREFIX):].strip().lower()
    return None


def activity_text(doc: Mapping[str, Any]) -> list[str]:
    """``show``'s lines: one per hook and MCP server of the verdict's ledger (empty when it has none)."""
    rows = activity_rows(doc)
    if rows is None:
        return []
    return [f"{r['id']}: {r['line']}" for r in rows["hooks"] + rows["servers"]] + \
        [f"unattributed: {o}" for o in rows["other"]]
