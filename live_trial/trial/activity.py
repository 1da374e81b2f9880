"""What a trial does so that its plugins' hooks and MCP servers can be accounted for.

README "What a trial leaves behind", "Whose failure it is"; references/transcript-jsonl.md "What a plugin's hooks and
MCP servers leave behind":

- the session's claude writes its debug log into the workdir (``--debug-file claude-debug/session.log``: the only
  record of a successful hook run and of an MCP server's start on every supported CLI), sealed at collect;
- a trial with stand-in MCP servers (suite ``mcp_fixtures``, ``run --mcp-fixture NAME=COMMAND``) starts its claude with
  ``--mcp-config mcp-fixtures.json``: a stand-in named as a loaded plugin's server takes that server's place (the CLI
  keeps one server per name: observed on 2.1.197 and 2.1.332), any other name is added; ``trial-state.json`` records
  each one's name, its name in the session, its command and the server it replaced;
- before the task is pasted, the MCP servers the CLI started connecting say how their start went (a person typing
  the task would not meet them still connecting), at most the boot timeout;
- while the session runs, each poll tick reads what the debug log added: an MCP server the skill's ``allowed-tools``
  name that failed to start stops the trial at once (:class:`~live_trial.errors.PluginFailed`, ``mcp_failed``), not
  after the STALL limit.

The ledger itself is read from the workdir by :func:`live_trial.session.activity_read.read_activity`.
"""
from __future__ import annotations

import os
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from live_trial.acceptance.suite import fixture_command, missing_program
from live_trial.acceptance.verdict_doc import fixture_words
from live_trial.closure.declared import DeclaredServer, plugin_servers
from live_trial.closure.manifest import ClosureError, read_json_object
from live_trial.errors import Blocked, PluginFailed, RefusedInput
from live_trial.jsonfile import make_private_dirs, write_text_atomic
from live_trial.session import mcp_start
from live_trial.session.plugin_activity import (
    NAMED_BY_ALLOWED_TOOLS,
    expand,
    mcp_failed_note,
    named_servers,
    start_failure,
)
from live_trial.stop_reasons import StopReason
from live_trial.transcript.debug_log import DebugTail
from live_trial.workdir_files import Workdir

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


@dataclass(frozen=True)
class Fixture:
    """A stand-in MCP server: ``name`` as given, ``server`` its name in the session, ``command`` it runs (no shell),
    ``replaces`` the loaded plugin's server it takes the place of (None: added)."""

    name: str
    server: str
    command: tuple[str, ...]
    replaces: str | None

    def to_doc(self) -> dict[str, Any]:
        """As trial-state.json's ``mcp_fixtures`` keeps it, with ``contract``: the command's words as the task
        contract holds them, its script files by their content when the trial starts
        (:func:`live_trial.acceptance.verdict_doc.fixture_words`)."""
        return {"name": self.name, "server": self.server, "command": list(self.command), "replaces": self.replaces,
                "contract": list(fixture_words(self.command))}


def parse_fixture(text: str, base: Path) -> tuple[str, str]:
    """``(NAME, COMMAND)`` of ``run --mcp-fixture NAME=COMMAND``, each word of COMMAND starting ``./`` or ``../`` made
    absolute from ``base`` (the claude of the trial starts it in the trial's own folder). Raises RefusedInput."""
    name, sep, command = text.partition("=")
    if not sep:
        raise RefusedInput(f"--mcp-fixture must be NAME=COMMAND (got {text!r})", where="--mcp-fixture",
                           code="bad_mcp_fixture", fix="e.g. --mcp-fixture github='python3 ./fake_github.py'")
    return name.strip(), fixture_command(command, base)


def _declared(plugins: Iterable[tuple[str, Path]]) -> list[DeclaredServer]:
    out: list[DeclaredServer] = []
    for name, root in plugins:
        try:
            manifest = read_json_object(Path(root) / ".claude-plugin" / "plugin.json", "plugin.json")
        except ClosureError:
            manifest = {}
        out += plugin_servers(name, Path(root), manifest)
    return out


def resolve_fixtures(fixtures: Sequence[tuple[str, str]], plugins: Iterable[tuple[str, Path]]) -> list[Fixture]:
    """The stand-ins of ``fixtures`` (``(NAME, COMMAND)``) for a trial loading ``plugins`` (``(name, folder)``): a NAME
    that is a loaded plugin's server (``echo``, or ``plugin:<plugin>:echo``) replaces it, any other is added under
    NAME. Raises RefusedInput (nothing created) for a bad NAME, a NAME given twice, a COMMAND that is empty or
    cannot be split as a shell would or names a program or script that does not exist, a NAME two loaded plugins
    declare, a ``plugin:<plugin>:<server>`` NAME no loaded plugin declares."""
    declared = _declared(plugins)
    out: list[Fixture] = []
    for name, command in fixtures:
        where = f"mcp_fixtures {name!r}"
        if not NAME_RE.match(name or ""):
            raise RefusedInput(f"a stand-in MCP server needs a name of letters, digits, '.', '_', ':' or '-' "
                               f"(got {name!r})", where=where, code="bad_mcp_fixture",
                               fix="name the server it replaces")
        try:
            words = tuple(shlex.split(command))
        except ValueError as exc:
            raise RefusedInput(f"the stand-in's command cannot be split ({exc})", where=where,
                               code="bad_mcp_fixture", fix="quote it as a shell would") from None
        if not words:
            raise RefusedInput("the stand-in's command is empty", where=where, code="bad_mcp_fixture",
                               fix="give the command that starts the stand-in MCP server")
        missing = missing_program(words)
        if missing is not None:
            raise RefusedInput(f"the stand-in's command names {missing}", where=f"{where}: {shlex.join(words)}",
                               code="bad_mcp_fixture",
                               fix="give a program on PATH or the path of an existing script (./ and ../ are taken "
                                   "from the suite file's folder, or the current one for --mcp-fixture)")
        real = [s for s in declared if name in (s.server, s.name)]
        if len(real) > 1:
            raise RefusedInput(f"{len(real)} loaded plugins declare an MCP server {name!r}", where=where,
                               code="bad_mcp_fixture", fix="name it plugin:<plugin>:<server>")
        if not real and name.startswith("plugin:"):
            # the CLI's own form for a plugin's server: a name of that form no loaded plugin declares is a typo, and
            # added beside the real server it would leave that one to fail as if the skill's had
            known = ", ".join(s.name for s in declared) or "none"
            raise RefusedInput(f"no loaded plugin declares the MCP server {name} (the loaded plugins' servers: "
                               f"{known})", where=where, code="bad_mcp_fixture",
                               fix="name a server the loaded plugins declare, or a name without plugin: to add one")
        server = real[0].name if real else name
        if any(f.server == server for f in out):
            raise RefusedInput(f"two stand-ins for the MCP server {server}", where=where, code="bad_mcp_fixture",
                               fix="give one per server")
        out.append(Fixture(name, server, words, real[0].name if real else None))
    return out


def refuse_shadowing(fixtures: Sequence[Fixture], plugins: Iterable[tuple[str, Path]], allowed_tools: Any) -> None:
    """Refuse (RefusedInput ``bad_mcp_fixture``, exit 2, nothing created) a stand-in whose command is the command of
    another server the loaded plugins declare that the skill's ``allowed-tools`` name: the CLI would keep the stand-in
    and never start that server (references/transcript-jsonl.md "MCP servers in the session"), so the skill's tools
    would be missing through the stand-in. A server nobody names is left to the ledger ("never started")."""
    plugins = list(plugins)
    roots = {name: str(root) for name, root in plugins}
    declared = _declared(plugins)
    needed = set(named_servers(allowed_tools, [s.name for s in declared]))
    for f in fixtures:
        for s in declared:
            words = tuple(expand(w, roots.get(s.plugin, "")) for w in s.command)
            if s.name != f.replaces and s.name in needed and words and words == f.command:
                raise RefusedInput(f"the stand-in's command is the command of {s.name}, which the skill's "
                                   f"allowed-tools name: the CLI would keep the stand-in and never start {s.name}",
                                   where=f"mcp_fixtures {f.name!r}: {shlex.join(f.command)}", code="bad_mcp_fixture",
                                   fix="give the stand-in a command of its own (another script, or an argument)")


def write_fixtures(wd: Workdir, fixtures: Sequence[Fixture]) -> None:
    """``mcp-fixtures.json``: ``{"mcpServers": {server: {command, args}}}``, the ``--mcp-config`` of the session's
    claude. Nothing for a trial without stand-ins. Raises OSError."""
    if not fixtures:
        return
    import json

    doc = {"mcpServers": {f.server: {"command": f.command[0], "args": list(f.command[1:])} for f in fixtures}}
    write_text_atomic(wd.mcp_fixtures, json.dumps(doc, indent=2) + "\n")


def session_flags(wd: Workdir) -> list[str]:
    """The flags the session's claude gets for its plugins' record: ``--debug-file`` (its folder made, private) and,
    when the trial has stand-ins, ``--mcp-config``. Raises OSError."""
    make_private_dirs(wd.debug_log.parent)
    flags = ["--debug-file", str(wd.debug_log)]
    return flags + (["--mcp-config", str(wd.mcp_fixtures)] if wd.mcp_fixtures.is_file() else [])


@dataclass
class ServerWatch:
    """The MCP servers a poll watches (those the skill's ``allowed-tools`` name) and the debug log it reads."""

    servers: tuple[str, ...]
    tail: DebugTail
    settled: set[str] = field(default_factory=set)
    #: the stand-ins among them: server name in the session -> trial-state.json's entry of it (:meth:`Fixture.to_doc`:
    #: name, command, replaces; README "Stand-in MCP servers")
    stand_ins: dict[str, dict[str, Any]] = field(default_factory=dict)

    def failed(self) -> tuple[str, str, str | None] | None:
        """``(server, why, suppressed by)`` of the first watched server the log says failed to start, or that the CLI
        never started because a stand-in has its command (``suppressed by`` that stand-in's server); None while none
        did."""
        log = self.tail.read()
        for name in self.servers:
            seen = log.servers.get(name)
            if seen is None or not seen.settled:
                continue
            self.settled.add(name)
            if seen.at_start == "failed":
                return name, start_failure(seen.error, seen.stderr), None
            if seen.at_start == "suppressed" and seen.suppressed_by in self.stand_ins:
                return name, seen.suppressed_why or "", seen.suppressed_by
        return None


def watch_for(wd: Workdir, frontmatter: Any, plugins: Iterable[tuple[str, Path]],
              fixtures: Iterable[dict[str, Any]] = ()) -> ServerWatch | None:
    """A :class:`ServerWatch` of the servers (the plugins' and the stand-ins') the skill's ``allowed-tools`` name; None
    when it names none."""
    fixtures = list(fixtures)
    watched = named_servers((frontmatter or {}).get("allowed-tools"), dict.fromkeys(server_names(plugins, fixtures)))
    stand_ins = {str(f.get("server")): f for f in fixtures}
    return ServerWatch(tuple(watched), DebugTail(wd.debug_log), stand_ins=stand_ins) if watched else None


def check_servers(watch: ServerWatch | None, *, stand_ins_only: bool = False) -> None:
    """Raise :class:`PluginFailed` (``mcp_failed``) once a watched server failed to start, :class:`Blocked`
    (``mcp_fixture_failed``, README "Whose failure it is") once a stand-in among them failed or took, with the same
    command, the place of a watched server the CLI then never started; stop watching once every watched server said
    how its start went (each byte of the log is read once). ``stand_ins_only``: raise only for the stand-ins (the
    check before the task is pasted, which needs no model; a plugin's own failure is told once the skill ran)."""
    if watch is None or len(watch.settled) == len(watch.servers):
        return
    failed = watch.failed()
    if failed is None:
        return
    name, why, by = failed
    if by is not None:                  # a stand-in with the command of a server the skill needs took its place
        fixture = watch.stand_ins[by]
        place = f"in place of {fixture['replaces']}" if fixture.get("replaces") else f"added as {by}"
        raise Blocked(f"{StopReason.MCP_FIXTURE_FAILED.value}: the stand-in MCP server {fixture.get('name') or by} "
                      f"({shlex.join(fixture.get('command') or ())}) {place}, given to the trial (--mcp-fixture, "
                      f"mcp_fixtures), has the command of {name}, which the skill's allowed-tools name: the CLI never "
                      f"started {name} ({why}); give the stand-in a command of its own",
                      code=StopReason.MCP_FIXTURE_FAILED)
    if name in watch.stand_ins:         # the person's stand-in, not the plugin under trial: BLOCKED
        fixture = watch.stand_ins[name]
        raise Blocked(mcp_failed_note(name, why, NAMED_BY_ALLOWED_TOOLS, stand_in=fixture,
                                      command=fixture.get("command") or ()),
                      code=StopReason.MCP_FIXTURE_FAILED)     # the note names where it was given: no `where`
    if stand_ins_only:
        watch.settled.discard(name)     # told by the poll's first look, once the skill ran
        return
    raise PluginFailed(mcp_failed_note(name, why, NAMED_BY_ALLOWED_TOOLS), code=StopReason.MCP_FAILED)


def await_servers(wd: Workdir, *, timeout_s: float, sleep: Callable[[float], None],
                  expected: Iterable[str] = (), clock: Callable[[], float] = time.monotonic,
                  step_s: float = 0.05) -> tuple[list[str], list[str]]:
    """Wait until every MCP server the debug log says the CLI started connecting, and every server of ``expected``
    (:func:`server_names`), has said how its start went, at most ``timeout_s`` seconds (the policy's boot timeout): a
    task pasted at once meets servers still connecting, which a person typing would not (2.1.197 then answers a call
    "No such tool available"; references/transcript-jsonl.md). Returns ``(settled, still pending)`` server names.
    ``sleep`` may raise (the harness asked to stop). The wait is :func:`live_trial.session.mcp_start.await_servers` on
    the trial's debug log (the doctor's probe waits the same)."""
    return mcp_start.await_servers(wd.debug_log, timeout_s=timeout_s, sleep=sleep, expected=expected, clock=clock,
                                   step_s=step_s)


def server_names(plugins: Iterable[tuple[str, Path]], fixtures: Iterable[dict[str, Any]] = ()) -> list[str]:
    """The names the CLI gives the MCP servers of a session loading ``plugins`` (``(name, folder)``) with the
    stand-ins ``fixtures`` (trial-state.json's entries): ``plugin:<plugin>:<server>`` of each declared server, a
    stand-in under its server name (the one it replaces, or its own), each once."""
    return list(dict.fromkeys([s.name for s in _declared(plugins)] + [str(f.get("server")) for f in fixtures]))


def await_prepared(workdir: Path, state: dict[str, Any], *, timeout_s: float) -> tuple[list[str], list[str]]:
    """:func:`await_servers` for a trial prepared for the steps by hand (``backend boot``; README "The steps, one by
    one"): the servers of the plugins and stand-ins its trial-state.json document ``state`` records."""
    return await_servers(Workdir.of(workdir), timeout_s=timeout_s, sleep=time.sleep,
                         expected=server_names(plugins_of(state), state.get("mcp_fixtures") or []))


def plugins_of(state: Any) -> list[tuple[str, Path]]:
    """``(name, folder)`` of each plugin trial-state.json's closure records (what boot gave the CLI); ``state`` a
    :class:`~live_trial.trial.state.TrialState` or the document itself."""
    closure = (state.get("closure") if isinstance(state, dict) else getattr(state, "closure", None)) or {}
    return [(str(n), Path(str(d))) for n, d in zip(closure.get("plugins") or [], closure.get("plugin_dirs") or [])]


def private_log(workdir: Path) -> Path:
    """Make the debug log of the trial in ``workdir`` readable by its owner only (the CLI writes it 0644; the
    harness's records are 0600); return its path."""
    path = Workdir.of(workdir).debug_log
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
    return path
