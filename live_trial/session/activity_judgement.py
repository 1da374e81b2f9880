"""What the plugins' activity ledger means for the verdict (README "Whose failure it is"): which failures of the
hooks and MCP servers of :mod:`live_trial.session.plugin_activity`'s ledger the skill depends on (the stop reason and
a note naming each), which refused the harness's own completion marker (BLOCKED), and which are only warnings. Pure.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from live_trial.session.plugin_activity import (
    NAMED_BY_ALLOWED_TOOLS,
    PluginActivity,
    hook_line,
    mcp_failed_note,
    named_servers,
    short_name,
    start_failure,
)
from live_trial.stop_reasons import StopReason
from live_trial.transcript import hook_records as hr
from live_trial.workdir_files import MARKER_ENV


@dataclass(frozen=True)
class ActivityJudgement:
    """What the ledger means for the verdict: ``stop`` (``hook_failed`` / ``mcp_failed`` when the skill depends on a
    failure; None otherwise), ``notes`` naming each such failure, ``warnings`` for the others."""

    stop: str | None
    notes: tuple[str, ...]
    warnings: tuple[str, ...]


def judge_activity(activity: PluginActivity | None, allowed_tools: Any) -> ActivityJudgement:
    """Which failures of the ledger the skill depends on (README "Whose failure it is"): an MCP server that failed to
    start whose tools the skill's ``allowed-tools`` name or the session called (``mcp_failed``); a hook of the skill's
    frontmatter or of the plugin under trial that errored, timed out or was cancelled (``hook_failed``; a hook that
    failed ran, so its event fired), unless its every failure was on the harness's completion marker; a hook that
    refused the marker's Write (``marker_refused``, BLOCKED: the harness's file, outside the session's folder). Any
    other failure (a dependency's hook, a server nobody used, a run the CLI ties to no declared hook) is a warning.
    Never silently nothing. Pure."""
    if activity is None:
        return ActivityJudgement(None, (), ())
    notes: list[str] = []
    warnings: list[str] = []
    stop: str | None = None
    named = set(named_servers(allowed_tools, [s.name for s in activity.servers]))
    for s in activity.servers:
        if s.at_start != "failed":
            continue
        failure = start_failure(s.error, s.stderr)
        if s.name in named or s.calls:
            why = NAMED_BY_ALLOWED_TOOLS if s.name in named else "the session called its tools"
            code = StopReason.MCP_FAILED if s.stand_in is None else StopReason.MCP_FIXTURE_FAILED
            notes.append(mcp_failed_note(s.name, failure, why, stand_in=s.stand_in, command=s.command))
            stop = stop or code.value
        else:
            warnings.append(f"the MCP server {s.name} failed to start" + (f" ({failure})" if failure else "")
                            + "; neither the skill's allowed-tools nor the session used it")
    for h in activity.hooks:
        line = hook_line(h)
        if h.marker_blocked:
            notes.append(f"{StopReason.MARKER_REFUSED.value}: {line}: it refused the Write of the harness's completion "
                         f"marker, which lies outside the session's folder; let it allow the path the session's "
                         f"{MARKER_ENV} names")
            stop = stop or StopReason.MARKER_REFUSED.value
        if not h.failed:
            continue
        if h.failed <= h.marker_failed:
            warnings.append(f"{line}: it failed only on the harness's completion marker, never on the skill's work")
            continue
        if h.source in ("skill", "plugin"):
            notes.append(f"{StopReason.HOOK_FAILED.value}: {line}")
            stop = stop or StopReason.HOOK_FAILED.value
        else:
            warnings.append(f"a hook of the dependency {h.plugin} failed: {line}")
    by_id = {h.id: h for h in activity.hooks}
    for run in activity.other_runs:
        if run.get("outcome") in (hr.OK, hr.BLOCKED):
            continue
        could = [by_id[i] for i in run.get("candidates") or [] if i in by_id]
        what = (f"a {run.get('event')}{' (' + str(run['query']) + ')' if run.get('query') else ''} hook run ended "
                f"{run.get('outcome')}" + (f" ({run['detail']})" if run.get("detail") else ""))
        if could and all(h.source in ("skill", "plugin") for h in could):
            names = ", ".join(dict.fromkeys(short_name(h.command) for h in could))
            notes.append(f"{StopReason.HOOK_FAILED.value}: {what}; the CLI does not say which of the hooks of "
                         f"{could[0].plugin} it was: {names}")
            stop = stop or StopReason.HOOK_FAILED.value
        else:
            warnings.append(f"{what}, and the harness cannot tie it to a hook the skill depends on: "
                            f"{str(run.get('command') or '(the CLI does not name its command)')[:120]}")
    return ActivityJudgement(stop, tuple(notes), tuple(warnings))
