"""What the loaded plugins did in the session: the ledger of their hooks and MCP servers (README "What a trial leaves
behind", "Whose failure it is"; references/transcript-jsonl.md "What a plugin's hooks and MCP servers leave behind").

Each hook a loaded plugin (or the skill's frontmatter) declares, by event and command, with how many times it ran and
each outcome: ok, blocked (with its reason), error (with its exit code and first line), timeout or cancelled; each of
the plugins' MCP servers (and each stand-in a trial started in place of a server, ``mcp_fixtures``) with its state at
start and its tool calls counted. Built from what the CLI recorded, never from the session's words:

- a debug log that names every run (2.1.332: ``Hooks: … finished with status N``) decides the runs and their exit
  codes; the transcript gives the reasons and first lines, and tells a JSON ``{"decision": "block"}`` (exit 0) from ok;
- otherwise the transcript alone: it records a failed, blocking, cancelled run, and every run of a Stop hook (its
  ``stop_hook_summary``), so the successful runs of other events are unknown there (``ok`` None, never 0).

:func:`build_activity` is pure; :func:`judge_activity` says which failures the skill depends on (its trial FAILs:
``hook_failed`` / ``mcp_failed``) and which are warnings; :func:`activity_lines` are the lines the evaluator is shown
and may cite. Reading the workdir is :mod:`live_trial.session.activity_read`'s.
"""
from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from live_trial.closure.declared import DeclaredServer, PluginHook, tool_prefix
from live_trial.closure.hook_commands import read_hook_command
from live_trial.stop_reasons import StopReason
from live_trial.transcript import hook_records as hr
from live_trial.transcript.debug_log import DebugLog

#: How a citation names a line of the ledger: ``plugin-activity#<id>`` (README "Evidence").
CITE_PREFIX = "plugin-activity#"
#: The events whose every run the transcript records (a ``stop_hook_summary`` per Stop of the main session).
RECORDED_EVENTS = ("Stop",)
_ROOT_VARS = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}|\$CLAUDE_PLUGIN_ROOT(?![A-Za-z0-9_])")


@dataclass(frozen=True)
class StandIn:
    """A stand-in MCP server a trial started in place of a real one (suite ``mcp_fixtures``, ``run
    --mcp-fixture``): ``name`` as given, ``server`` its name in the session, ``command`` it ran, ``replaces`` the
    declared server it stood in for (None: a server no loaded plugin declares, such as a service of the user's)."""

    name: str
    server: str
    command: tuple[str, ...]
    replaces: DeclaredServer | None = None


#: The exit codes of a hook command the shell could not run (not executable, not found): it is broken whatever it
#: ran for, so a run about the completion marker that ended so still fails the skill's plugin.
COULD_NOT_RUN = frozenset({126, 127})


@dataclass
class HookLedger:
    """One declared hook and what became of it (``runs`` / ``ok`` None: this CLI does not record them)."""

    id: str
    plugin: str
    declared_in: str
    event: str
    matcher: str | None
    command: str
    source: str            #: skill (its frontmatter), plugin (the plugin under trial) or dependency
    runs: int | None = 0
    ok: int | None = 0
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    timeouts: int = 0
    cancelled: int = 0
    #: runs about the Write (or Edit) of the harness's completion marker that failed / that refused it: the harness's
    #: file, outside the session's folder, never the skill's work (README "Whose failure it is")
    marker_failed: int = 0
    marker_blocked: int = 0

    @property
    def failed(self) -> int:
        """Runs that errored, timed out or were cancelled: the hook did not do its work."""
        return len(self.errors) + self.timeouts + self.cancelled

    def to_doc(self) -> dict[str, Any]:
        """The ledger line as verdict.json keeps it (``plugin_activity.hooks[]``)."""
        return {k: getattr(self, k) for k in ("id", "plugin", "declared_in", "event", "matcher", "command", "source",
                                              "runs", "ok", "blocked", "errors", "timeouts", "cancelled",
                                              "marker_failed", "marker_blocked")}


@dataclass
class ServerLedger:
    """One MCP server of the loaded plugins (or a stand-in) and what became of it."""

    id: str
    name: str
    plugin: str | None
    declared_in: str | None
    command: list[str]
    stand_in: dict[str, Any] | None = None   #: ``{name, replaces, replaced_command}`` of a stand-in
    #: connected, failed, suppressed (never started: the CLI kept a server of the same command from the session's own
    #: config, named in ``error``), pending (never said), unknown (no debug log)
    at_start: str = "unknown"
    error: str | None = None
    stderr: str | None = None
    closed: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    failed_calls: int = 0

    def to_doc(self) -> dict[str, Any]:
        """The ledger line as verdict.json keeps it (``plugin_activity.mcp_servers[]``)."""
        return {k: getattr(self, k) for k in ("id", "name", "plugin", "declared_in", "command", "stand_in",
                                              "at_start", "error", "stderr", "closed", "calls", "failed_calls")}


@dataclass
class PluginActivity:
    """The whole ledger: ``hooks``, ``other_runs`` (runs of hooks no loaded plugin declares, or a cancel the CLI does
    not tie to a command), ``servers``, ``runs_recorded`` (``every`` when a debug log named each run, else
    ``failures``: only failed, blocking and Stop runs are recorded)."""

    hooks: list[HookLedger] = field(default_factory=list)
    other_runs: list[dict[str, Any]] = field(default_factory=list)
    servers: list[ServerLedger] = field(default_factory=list)
    runs_recorded: str = "failures"

    def to_doc(self) -> dict[str, Any]:
        """verdict.json's ``plugin_activity`` (schemas/live-trial-verdict.schema.json)."""
        return {"runs_recorded": self.runs_recorded, "hooks": [h.to_doc() for h in self.hooks],
                "other_runs": list(self.other_runs), "mcp_servers": [s.to_doc() for s in self.servers]}

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> "PluginActivity | None":
        """The ledger a schema-valid verdict's ``plugin_activity`` holds; None for none (or one it cannot read)."""
        if not isinstance(doc, Mapping):
            return None
        try:
            return cls([HookLedger(**h) for h in doc.get("hooks") or []], list(doc.get("other_runs") or []),
                       [ServerLedger(**s) for s in doc.get("mcp_servers") or []], str(doc.get("runs_recorded")))
        except TypeError:
            return None


def expand(command: str, root: str) -> str:
    """``command`` with ``${CLAUDE_PLUGIN_ROOT}`` and ``$CLAUDE_PLUGIN_ROOT`` as ``root``, as the CLI shows it."""
    return _ROOT_VARS.sub(lambda _: root, command)


def short_name(command: str) -> str:
    """What a person calls a hook: the file name of the script it runs (``format.sh``), else its first 60
    characters."""
    read = read_hook_command(command)
    if read.script:
        return posixpath.basename(read.script)
    return '"' + (command if len(command) <= 60 else command[:57] + "...") + '"'


def _detail(seen: hr.HookSeen | None, status: int | None) -> str:
    code = seen.exit_code if seen is not None and seen.exit_code is not None else status
    text = seen.detail if seen is not None else ""
    return (f"exit {code}" if code is not None else "") + (": " if code is not None and text else "") + text


class _Matcher:
    """Ties a run (its event, query and command) to the declared hook it is."""

    def __init__(self, hooks: Sequence[HookLedger], roots: Mapping[str, str]) -> None:
        self.hooks, self.roots = hooks, roots

    def find(self, event: str, query: str, command: str | None) -> HookLedger | None:
        """The declared hook a run of ``event`` (matching ``query``) running ``command`` is; a run the CLI names no
        command of (a cancel) is tied only when one declared hook can be it."""
        same = self.candidates(event, query, command)
        return same[0] if len(same) == 1 or (same and command is not None) else None

    def candidates(self, event: str, query: str, command: str | None) -> list[HookLedger]:
        """The declared hooks a run could be: of ``event``, running ``command`` (any command when None), their
        matcher matching ``query`` when that leaves any."""
        same = [h for h in self.hooks if h.event == event]
        if command is not None:
            same = [h for h in same if command in (h.command, expand(h.command, self.roots.get(h.plugin, "")))]
        return [h for h in same if _matches(h.matcher, query)] or (same if command is not None else [])


def _matches(matcher: str | None, query: str) -> bool:
    if not matcher or matcher == "*" or not query:
        return True
    try:
        return re.fullmatch(matcher, query) is not None
    except re.error:
        return matcher == query


def _take(pending: list[hr.HookSeen], hook: HookLedger, outcome: str, m: _Matcher, *,
          codes: tuple[int | None, ...] | None = None) -> hr.HookSeen | None:
    """The first transcript record of ``outcome`` for ``hook`` not taken yet (removed from ``pending``); ``codes``:
    only a record whose exit code is one of them (None: a JSON decision, which gives none)."""
    for i, seen in enumerate(pending):
        if seen.outcome == outcome and seen.event == hook.event and (codes is None or seen.exit_code in codes) \
                and m.find(seen.event, seen.query, seen.command) is hook:
            return pending.pop(i)
    return None


def _from_debug(log: DebugLog, seen: list[hr.HookSeen], m: _Matcher, other: list[dict[str, Any]]) -> None:
    pending = list(seen)
    for run in log.hook_runs:
        hook = m.find(run.event, run.query, run.command)
        if hook is None:
            outcome = hr.TIMEOUT if run.timed_out else hr.OK if run.status == 0 else \
                hr.BLOCKED if run.status == 2 else hr.ERROR
            other.append({"event": run.event, "query": run.query, "command": run.command, "outcome": outcome,
                          "detail": None if run.status in (0, None) else f"exit {run.status}", "candidates": []})
            continue
        assert hook.runs is not None and hook.ok is not None
        hook.runs += 1
        if run.timed_out:
            hook.timeouts += 1
        elif run.status == 0:
            json_block = _take(pending, hook, hr.BLOCKED, m, codes=(None,))
            if json_block is not None:
                hook.blocked.append(json_block.detail)
            else:
                hook.ok += 1
        elif run.status == 2:
            said = _take(pending, hook, hr.BLOCKED, m, codes=(2, None))
            hook.blocked.append(said.detail if said is not None and said.detail else "exit 2")
        else:
            hook.errors.append(_detail(_take(pending, hook, hr.ERROR, m), run.status))


def _from_transcript(seen: list[hr.HookSeen], m: _Matcher, other: list[dict[str, Any]]) -> None:
    for hook in m.hooks:
        if hook.event not in RECORDED_EVENTS:
            hook.runs = hook.ok = None      # a successful run of these events is not recorded without the debug log
    for s in seen:
        found = m.find(s.event, s.query, s.command)
        if found is None:
            other.append({"event": s.event, "query": s.query, "command": s.command, "outcome": s.outcome,
                          "detail": s.detail or None,
                          "candidates": [h.id for h in m.candidates(s.event, s.query, s.command)]})
            continue
        hook = found
        if hook.runs is not None:
            hook.runs += 1
        if s.outcome == hr.OK:
            hook.ok = (hook.ok or 0) + 1 if hook.ok is not None else None
        elif s.outcome == hr.BLOCKED:
            hook.blocked.append(s.detail)
        elif s.outcome == hr.ERROR:
            hook.errors.append(_detail(s, None))
        elif s.outcome == hr.CANCELLED:
            hook.cancelled += 1


def build_activity(hooks: Sequence[tuple[PluginHook, str]], servers: Sequence[DeclaredServer],
                   stand_ins: Sequence[StandIn], records: hr.HookRecords, log: DebugLog | None, *,
                   target_plugin: str | None, roots: Mapping[str, str], marker: str | None = None) -> PluginActivity:
    """The ledger (module docstring). ``hooks``: each declared hook with its source (``skill``, ``plugin``,
    ``dependency``); ``servers``: the declared MCP servers; ``stand_ins``: the stand-ins started; ``records``: what
    the session's transcripts hold; ``log``: its debug log (None: none); ``roots``: plugin name -> the folder the CLI
    was given (``${CLAUDE_PLUGIN_ROOT}``); ``marker``: the path of the trial's completion marker (the runs about its
    Write are counted apart: ``marker_failed``, ``marker_blocked``). Pure."""
    ledger = [HookLedger(f"hook-{n}", h.plugin, h.declared_in, h.hook.event, h.hook.matcher, h.hook.command, source)
              for n, (h, source) in enumerate(hooks, 1)]
    activity = PluginActivity(hooks=ledger)
    m = _Matcher(ledger, roots)
    if log is not None and log.names_runs:
        activity.runs_recorded = "every"
        _from_debug(log, records.hooks, m, activity.other_runs)
    else:
        _from_transcript(records.hooks, m, activity.other_runs)
    for run in records.runs_on(marker) if marker else ():
        hook = m.find(run.event, run.query, run.command)
        if hook is not None and run.outcome == hr.BLOCKED:
            hook.marker_blocked += 1
        elif hook is not None and run.outcome in (hr.ERROR, hr.TIMEOUT, hr.CANCELLED) \
                and run.exit_code not in COULD_NOT_RUN:     # a hook that could not run fails on any file: no excuse
            hook.marker_failed += 1
    activity.servers = _servers(servers, stand_ins, records, log, target_plugin)
    return activity


def _servers(servers: Sequence[DeclaredServer], stand_ins: Sequence[StandIn], records: hr.HookRecords,
             log: DebugLog | None, target_plugin: str | None) -> list[ServerLedger]:
    replaced = {s.replaces.name for s in stand_ins if s.replaces is not None}
    rows = [ServerLedger("", s.name, s.plugin, s.declared_in, list(s.command))
            for s in servers if s.name not in replaced]
    for s in stand_ins:
        real = s.replaces
        rows.append(ServerLedger("", s.server, real.plugin if real else None, real.declared_in if real else None,
                                 list(s.command), stand_in={"name": s.name, "replaces": real.name if real else None,
                                                            "replaced_command": list(real.command) if real else None}))
    for n, row in enumerate(rows, 1):
        row.id = f"mcp-{n}"
        seen = log.servers.get(row.name) if log is not None else None
        if seen is not None:
            row.at_start, row.error, row.stderr, row.closed = seen.at_start, seen.error, seen.stderr, seen.closed
            if seen.at_start == "suppressed":
                row.error = seen.suppressed_why
        elif row.name in records.failed_servers:
            row.at_start, row.error = "failed", records.failed_servers[row.name] or None
        prefix = tool_prefix(row.name)
        for call in records.mcp_calls:
            if call.tool.startswith(prefix):
                row.calls[call.tool] = row.calls.get(call.tool, 0) + 1
                row.failed_calls += 0 if call.ok else 1
    return rows


def hook_line(h: HookLedger) -> str:
    """``PostToolUse (Write) hook format.sh of myplugin (hooks/hooks.json): ran 3 times, ok 3`` and the failures."""
    where = f"{h.event}{f' ({h.matcher})' if h.matcher else ''} hook {short_name(h.command)} of {h.plugin} " \
            f"({h.declared_in})"
    parts = []
    if h.runs is None:
        parts.append("successful runs not recorded by this CLI")
    else:
        parts.append(f"ran {h.runs} time{'s' if h.runs != 1 else ''}" + (f", ok {h.ok}" if h.runs else ""))
    if h.blocked:
        parts.append(f"blocked {len(h.blocked)} (" + "; ".join(f'"{b}"' for b in h.blocked[:3]) + ")")
    if h.errors:
        parts.append(f"error {len(h.errors)} (" + "; ".join(h.errors[:3]) + ")")
    if h.timeouts:
        parts.append(f"timeout {h.timeouts}")
    if h.cancelled:
        parts.append(f"cancelled {h.cancelled} (timed out or stopped: the CLI does not say which)")
    return f"{where}: " + ", ".join(parts)


def start_failure(error: str | None, stderr: str | None) -> str:
    """What the CLI recorded of a server's failed start, in one form wherever it is shown (the ledger's line, the
    verdict's note, the stop a poll makes of it): ``<error>; stderr: <first line>``, either part alone when the other
    is missing, ``""`` when both are."""
    return "; ".join(p for p in (error, f"stderr: {stderr}" if stderr else None) if p)


def mcp_failed_note(name: str, failure: str, why: str, *, stand_in: Any = None,
                    command: Sequence[str] = ()) -> str:
    """The verdict's note for a server the skill depends on that failed to start (``mcp_failed``): ``mcp_failed: the MCP
    server <name> failed to start (<failure>); <why>``, the same words whether a poll saw it while the session ran or
    the ledger at the end (README "Plugin activity"). A stand-in the person gave (``stand_in``, its ledger entry's
    ``{name, replaces}``, and its ``command`` words; README "Stand-in MCP servers") is ``mcp_fixture_failed``, named
    as the stand-in it is: ``the stand-in MCP server <name> (<command>) in place of <server>``."""
    if stand_in is not None:
        what = f"the stand-in MCP server {stand_in.get('name') or name}" + (f" ({shlex.join(command)})" if command
                                                                            else "")
        place = f" in place of {stand_in['replaces']}" if stand_in.get("replaces") else f" added as {name}"
        return (f"{StopReason.MCP_FIXTURE_FAILED.value}: {what}{place}, given to the trial (--mcp-fixture, "
                f"mcp_fixtures), failed to start" + (f" ({failure})" if failure else "") + f"; {why}")
    return (f"{StopReason.MCP_FAILED.value}: the MCP server {name} failed to start" + (f" ({failure})" if failure
                                                                                        else "") + f"; {why}")


def server_line(s: ServerLedger) -> str:
    """``MCP server plugin:p:echo (p, .mcp.json): connected at start; 1 tool call: mcp__plugin_p_echo__echo ×1``."""
    who = f"MCP server {s.name}" + (f" ({s.plugin}, {s.declared_in})" if s.plugin else "")
    if s.stand_in is not None:
        real = s.stand_in.get("replaces")
        who += (f": stand-in {s.stand_in['name']} ({' '.join(s.command)[:80]}) "
                + (f"in place of {real} ({' '.join(s.stand_in.get('replaced_command') or [])[:80]})" if real
                   else "added for the trial (no loaded plugin declares a server of that name)"))
    state = {"connected": "connected at start", "failed": "failed to start", "pending": "no connection result "
             "recorded", "unknown": "its start is not recorded"}.get(s.at_start, s.at_start)
    if s.at_start == "suppressed":
        state = f"never started: {s.error}"
    elif s.error or s.stderr:
        state += f" ({start_failure(s.error, s.stderr)})"
    if s.closed:
        state += f"; its connection ended {s.closed} time(s) while the session ran"
    total = sum(s.calls.values())
    each = ", ".join(f"{t} ×{n}" for t, n in sorted(s.calls.items()))
    calls = f"{total} tool call{'s' if total != 1 else ''}" + (f": {each}" if total else "")
    if s.failed_calls:
        calls += f" ({s.failed_calls} failed)"
    return f"{who}: {state}; {calls}"


def activity_lines(activity: PluginActivity | None) -> list[tuple[str, str]]:
    """``[(id, line)]``: one line per hook and per MCP server of the ledger, the text the evaluator is shown and may
    cite as ``plugin-activity#<id>`` (:data:`CITE_PREFIX`)."""
    if activity is None:
        return []
    return [(h.id, hook_line(h)) for h in activity.hooks] + [(s.id, server_line(s)) for s in activity.servers]


#: Why a server is one the skill depends on, when its ``allowed-tools`` name its tools (:func:`mcp_failed_note`).
NAMED_BY_ALLOWED_TOOLS = "the skill's allowed-tools name its tools"


def named_servers(allowed_tools: Any, servers: Iterable[str]) -> list[str]:
    """The server names among ``servers`` whose tools the skill's ``allowed-tools`` names (``mcp__<server>__<tool>``,
    ``mcp__<server>__*`` or ``mcp__<server>``)."""
    if isinstance(allowed_tools, str):
        tools = [t.strip() for t in re.split(r"[,\s]+", allowed_tools) if t.strip()]
    else:
        tools = [str(t).strip() for t in allowed_tools or []]
    out = []
    for name in servers:
        prefix = tool_prefix(name)
        if any(t.startswith(prefix) or t == prefix[:-2] for t in tools):
            out.append(name)
    return out
