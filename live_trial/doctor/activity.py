"""The doctor's checks of what the plugins' activity ledger reads (README "What a trial leaves behind";
references/transcript-jsonl.md "What a plugin's hooks and MCP servers leave behind"): the CLI's ``--debug-file`` log
lines of hook runs and of MCP servers' starts, the transcript's hook records, and a ``--mcp-config`` stand-in taking
the place of a plugin's server of the same name.

The probe's claude is started as a trial's is (``--debug-file``, ``--mcp-config``: ``trial/activity.py``); what it
left is read with the harness's own readers (:func:`~live_trial.transcript.debug_log.read_debug_log`,
:func:`~live_trial.transcript.hook_records.read_hook_records`) into the ledger the verdict keeps
(:func:`~live_trial.session.plugin_activity.build_activity`), and each check compares that ledger with what the
probe's plugin did (:mod:`live_trial.doctor.kit`). Pure but for reading the files the session left.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from live_trial.closure.declared import plugin_hooks, plugin_servers
from live_trial.doctor import kit
from live_trial.doctor.checks import Checks
from live_trial.session import mcp_start
from live_trial.session.activity_read import stand_ins
from live_trial.session.plugin_activity import HookLedger, PluginActivity, build_activity, hook_line, server_line
from live_trial.transcript.debug_log import DebugLog, read_debug_log
from live_trial.transcript.hook_records import read_hook_records

#: The two forms a CLI's debug log takes for hook runs (2.1.332 names every run; 2.1.197 none).
EVERY_RUN = "every run named in the debug log"
FAILURES_ONLY = "no hook run in the debug log: only the transcript's records of failed, blocking and Stop runs"
#: The hook scripts of the probe's plugin: the Stop hook, the PostToolUse hook that fails once, the one that times out.
SCRIPTS = ("stop.sh", "fail-once.sh", "slow.sh")


@dataclass(frozen=True)
class ActivityFiles:
    """Where the probe's session writes what the ledger reads: ``debug_log`` (``--debug-file``), ``mcp_config``
    (``--mcp-config``, the stand-in) and ``declared_marker`` (made only if the CLI started the plugin's own echo
    server)."""

    debug_log: Path
    mcp_config: Path
    declared_marker: Path

    def flags(self) -> list[str]:
        """The flags of the probe's claude, as a trial's claude gets them (``trial/activity.py`` session_flags)."""
        return ["--debug-file", str(self.debug_log), "--mcp-config", str(self.mcp_config)]


def write_files(root: Path, plugin: Path, stop_marker: Path) -> ActivityFiles:
    """Make the debug log's folder (the CLI writes a ``latest`` link beside the log) and write the ``--mcp-config``
    document (:func:`live_trial.doctor.kit.mcp_config`) under ``root``. Raises OSError."""
    files = ActivityFiles(root / "claude-debug" / "session.log", root / "mcp-fixtures.json",
                          kit.declared_echo_marker(stop_marker))
    files.debug_log.parent.mkdir(parents=True)
    files.mcp_config.write_text(json.dumps(kit.mcp_config(plugin), indent=2) + "\n")
    return files


def await_servers(debug_log: Path, timeout_s: float, *, sleep: Callable[[float], None] = time.sleep) -> list[str]:
    """Wait, at most ``timeout_s``, until the probe plugin's two MCP servers (:data:`live_trial.doctor.kit.ECHO_SERVER`,
    :data:`~live_trial.doctor.kit.BROKEN_SERVER`) and any other server whose ``Starting connection`` the debug log
    shows have said how their start went, as a trial does before it pastes its task
    (:func:`live_trial.session.mcp_start.await_servers`). Returns the servers still pending (``[]``: all settled)."""
    return mcp_start.await_servers(debug_log, timeout_s=timeout_s, sleep=sleep,
                                   expected=(kit.ECHO_SERVER, kit.BROKEN_SERVER))[1]


@dataclass
class Ledgers:
    """The probe session's ledger read as the verdict reads it: ``with_log`` (transcript and debug log) and
    ``transcript_only`` (the transcript alone, as with a CLI that writes no hook run to its log), the ``log``
    (None: the CLI wrote none) and its raw text."""

    with_log: PluginActivity
    transcript_only: PluginActivity
    log: DebugLog | None
    log_text: str


def read_ledgers(plugin: Path, records: list[dict[str, Any]], debug_log: Path) -> Ledgers:
    """The ledgers of the probe's session: the plugin's declared hooks and servers (``closure/declared.py``), the
    stand-in of :func:`live_trial.doctor.kit.mcp_config` (``session/activity_read.py``), the transcript's
    ``records`` and the debug log."""
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    hooks = [(h, "plugin") for h in plugin_hooks(kit.PLUGIN, plugin, manifest)]
    servers = plugin_servers(kit.PLUGIN, plugin, manifest)
    standing = stand_ins({"mcp_fixtures": [{"name": kit.ECHO_SERVER, "server": kit.ECHO_SERVER,
                                            "command": list(kit.stand_in_command(plugin))}]}, servers)
    hook_records = read_hook_records(records)
    log = read_debug_log(debug_log)
    try:
        text = debug_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""

    def ledger(with_log: DebugLog | None) -> PluginActivity:
        return build_activity(hooks, servers, standing, hook_records, with_log, target_plugin=kit.PLUGIN,
                              roots={kit.PLUGIN: str(plugin)})
    return Ledgers(ledger(log), ledger(None), log, text)


def _hook(activity: PluginActivity, script: str) -> HookLedger | None:
    return next((h for h in activity.hooks if h.command.endswith(f"/hooks/{script}\"")), None)


def _said(hook: HookLedger | None) -> str:
    """What the ledger says of ``hook``, without naming it (:func:`hook_line` after the hook's name)."""
    return "not in the ledger" if hook is None else hook_line(hook).split(f"({hook.declared_in}): ", 1)[-1]


def _unrecorded(activity: PluginActivity) -> list[str]:
    """What a ledger lacks of the runs every CLI records (the transcript's records), each with what it says."""
    stop, fail, slow = (_hook(activity, s) for s in SCRIPTS)
    out = []
    if stop is None or stop.blocked != [kit.STOP_HOOK_REASON] or (stop.ok or 0) < 1 or (stop.runs or 0) < 2:
        out.append(f"the Stop hook blocked once with its reason, then let the turn end: {_said(stop)}")
    if fail is None or fail.errors != [f"exit {kit.HOOK_ERROR_STATUS}: {kit.HOOK_ERROR}"]:
        out.append(f"the PostToolUse (Bash) hook failed once (exit {kit.HOOK_ERROR_STATUS}, its stderr): {_said(fail)}")
    if slow is None or slow.failed != 1:
        out.append(f"the PostToolUse hook of the echo tool stopped at its timeout: {_said(slow)}")
    out += [f"a run tied to no declared hook: {o.get('event')} {o.get('outcome')}" for o in activity.other_runs]
    return out


def judge_hook_records(checks: Checks, ledgers: Ledgers) -> None:
    """``transcript.hook_records``: the transcript alone (``hook_non_blocking_error``, ``hook_blocking_error``,
    ``hook_cancelled``, ``stop_hook_summary``) gives the ledger the blocking Stop hook and every Stop, the failed
    PostToolUse run and the cancelled one (the same on every CLI: the ledger's form without a debug log)."""
    activity = ledgers.transcript_only
    missing = _unrecorded(activity)
    slow = _hook(activity, SCRIPTS[2])
    if slow is not None and slow.failed == 1 and slow.cancelled != 1:
        missing.append(f"the stopped hook's run as hook_cancelled: {_said(slow)}")
    checks.judge("transcript.hook_records", not missing, f"expected {'; '.join(missing)}")


def _run_lines(text: str) -> list[str]:
    """The lines of a debug log naming either PostToolUse hook's script, without their time and with the probe's
    folder left out (what a changed ``debug_log.hook_runs`` quotes)."""
    named = [ln for ln in text.splitlines() if any(f"/{s}" in ln for s in SCRIPTS[1:])]
    return [re.sub(r"/\S*/hooks/", ".../hooks/", re.sub(r"^\S+Z \[[A-Z]+\] ", "", ln)).strip()[:100]
            for ln in named]


def judge_hook_runs(checks: Checks, ledgers: Ledgers) -> None:
    """``debug_log.hook_runs``, in one of two known forms (:data:`EVERY_RUN`: each run of the three hooks named with
    its exit status or its timeout, tied to its declared hook; :data:`FAILURES_ONLY`: the log names neither
    PostToolUse hook's script, and the ledger reads the transcript alone). A log naming those scripts in lines the
    reader takes for no run is a third form: changed. Both versions name the Stop hook's script in one more line,
    ``Hook Stop ("<command as written>") returned permissionDecision: deny``, for its JSON block: not a run line."""
    log = ledgers.log
    if log is None:
        checks.changed("debug_log.hook_runs", "the CLI wrote no debug log (--debug-file)")
        return
    if not log.names_runs:
        named = _run_lines(ledgers.log_text)
        checks.judge("debug_log.hook_runs", not named, f"{len(named)} lines naming a hook's script that the reader "
                     f"takes for no run, the first: {named[0] if named else ''}", form=FAILURES_ONLY)
        return
    activity = ledgers.with_log
    stop, fail, slow = (_hook(activity, s) for s in SCRIPTS)
    missing = _unrecorded(activity)
    if fail is not None and (fail.runs, fail.ok) != (2, 1):
        missing.append(f"2 runs of the PostToolUse (Bash) hook, 1 ok: {_said(fail)}")
    if slow is not None and (slow.runs, slow.timeouts) != (1, 1):
        missing.append(f"1 run of the PostToolUse hook of the echo tool, timed out: {_said(slow)}")
    said_stop = _hook(ledgers.transcript_only, SCRIPTS[0])
    if stop is not None and said_stop is not None and stop.runs != said_stop.runs:
        missing.append(f"the {said_stop.runs} Stop hook runs of the transcript's stop_hook_summary: {_said(stop)}")
    checks.judge("debug_log.hook_runs", not missing, f"expected {'; '.join(missing)}", form=EVERY_RUN)


def judge_servers(checks: Checks, ledgers: Ledgers, pending: list[str]) -> None:
    """``debug_log.mcp_server``: the log says the plugin's ``broken`` server started and failed (its error and its
    line of stderr), the stand-in for ``echo`` started and connected, and both said so before the task was pasted."""
    log = ledgers.log
    if log is None:
        checks.changed("debug_log.mcp_server", "the CLI wrote no debug log (--debug-file)")
        return
    broken, echo = log.servers.get(kit.BROKEN_SERVER), log.servers.get(kit.ECHO_SERVER)
    rows = {s.name: s for s in ledgers.with_log.servers}
    ok = (broken is not None and broken.starts >= 1 and broken.at_start == "failed" and bool(broken.error)
          and broken.stderr == kit.BROKEN_STDERR and echo is not None and echo.at_start == "connected" and not pending)
    said = "; ".join(server_line(rows[n]) for n in (kit.BROKEN_SERVER, kit.ECHO_SERVER) if n in rows)
    checks.judge("debug_log.mcp_server", ok, (f"still connecting when the task was pasted: {', '.join(pending)}; "
                                               if pending else "") + (said or "no MCP server line"))


def judge_stand_in(checks: Checks, ledgers: Ledgers, files: ActivityFiles, answer: str | None) -> None:
    """``mcp.stand_in``: the ``--mcp-config`` server named ``plugin:doctorkit:echo`` took the place of the plugin's
    server of that name: the plugin's command never started, the log has one start of that name (the stand-in's,
    connected), and the one call of the plugin's tool name was answered by the stand-in. ``answer``: the text of that
    call's tool_result (None: no such call)."""
    row = next((s for s in ledgers.with_log.servers if s.name == kit.ECHO_SERVER), None)
    seen = ledgers.log.servers.get(kit.ECHO_SERVER) if ledgers.log is not None else None
    problems = []
    if files.declared_marker.exists():
        problems.append("the plugin's own echo server was started too")
    if seen is None or seen.starts != 1 or seen.at_start != "connected":
        problems.append(f"{seen.starts if seen else 0} starts of {kit.ECHO_SERVER} in the debug log, "
                        f"{seen.at_start if seen else 'none'}")
    if answer != kit.STAND_IN_ANSWER + kit.ECHO_TEXT:
        problems.append(f"the call of {kit.ECHO_TOOL} answered {answer!r}")
    if row is None or row.calls != {kit.ECHO_TOOL: 1} or row.failed_calls:
        problems.append(f"the ledger: {server_line(row) if row else 'no row for ' + kit.ECHO_SERVER}")
    checks.judge("mcp.stand_in", not problems, "; ".join(problems))
