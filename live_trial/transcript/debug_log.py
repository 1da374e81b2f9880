"""The CLI's debug log (``claude --debug-file <path>``): what it says of the session's hooks and MCP servers
(references/transcript-jsonl.md "What a plugin's hooks and MCP servers leave behind", observed on 2.1.197 and 2.1.332
with the rehearsal server).

Every trial's claude writes one (boot passes ``--debug-file``; both versions have the option and draw one more line
on screen, ``Debug mode enabled · logging to <path>``). Lines start ``<UTC time> [LEVEL] ``; a message may go on over
the next lines. The lines read here:

- ``Hooks: <hookName> [<command, ${CLAUDE_PLUGIN_ROOT} expanded>] (plugin <name>@<source>) finished with status <n>
  (<ms>ms)`` and ``… timed out after <limit>ms (<ms>ms)``: one per run of a command hook, successful or not (2.1.332;
  2.1.197 writes no such line, only a failure's stderr, which its transcript holds too);
- ``MCP server "<name>": Starting connection …``, ``…: Successfully connected …``, ``…: Connection failed after
  <ms>ms[, …] (<CODE>): <error>`` (2.1.332) or ``…: Connection failed after <ms>ms: <error>`` (2.1.197),
  ``MCP server "<name>" Server stderr: <line>``, ``…: <kind> connection closed after <s>s …`` (a server that ended
  while the session ran; the CLI starts it again at its next call): both versions;
- ``Suppressing plugin MCP server "<name>": duplicates manually-configured "<other>"``: a plugin's server the CLI
  does not start because a server of the session's own config (``--mcp-config``: a stand-in) has the same command:
  both versions.

:func:`read_debug_log` reads a whole log, bounded; :class:`DebugTail` reads only what was added since its last call
(the poll's early look at the MCP servers, each byte read once). Never raises for content; a missing file is an
empty log.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

#: A debug log is read up to this many bytes (a long trial's log grows by tens of KB a minute).
MAX_BYTES = 64 * 1024 * 1024
_LINE = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z \[[A-Z]+\] (?P<msg>.*)$")
_HOOK = re.compile(r"^Hooks: (?P<name>\S+) \[(?P<command>.*)\](?: \(plugin (?P<plugin>[^)]*)\))? "
                   r"(?:finished with status (?P<status>-?\d+)|timed out after (?P<limit>\d+)ms) \(\d+ms\)$")
_MCP = re.compile(r'^MCP server "(?P<name>[^"]+)"(?P<sep>:? )(?P<rest>.*)$')
_FAILED = re.compile(r"^Connection failed after \d+ms(?:, [^(:]*?)?(?: \((?P<code>[A-Z_]+)\))?: (?P<error>.*)$")
_CLOSED = re.compile(r"connection closed after ")
_SUPPRESSED = re.compile(r'^Suppressing plugin MCP server "(?P<name>[^"]+)": duplicates manually-configured '
                         r'"(?P<by>[^"]+)"')


@dataclass(frozen=True)
class HookRun:
    """One run of a command hook the debug log names: ``event`` and ``query`` (``PostToolUse``, ``Write``),
    ``command`` with ``${CLAUDE_PLUGIN_ROOT}`` expanded, ``plugin`` (``obskit@inline``; None for a hook of no plugin),
    ``status`` (the exit code; None when it timed out), ``timed_out``."""

    event: str
    query: str
    command: str
    plugin: str | None
    status: int | None
    timed_out: bool = False


@dataclass
class ServerLog:
    """What the debug log says of one MCP server: ``starts`` (connections begun), ``connected`` and ``failed``
    (their outcomes, in order: ``"connected"`` / ``"failed"``), ``error`` (the first failure, ``CODE: error``),
    ``stderr`` (its first line of stderr the CLI logged), ``closed`` (times its connection ended while the session
    ran), ``suppressed_by`` (the server of the session's own config the CLI kept instead of this plugin's server,
    which it never started)."""

    starts: int = 0
    outcomes: list[str] = field(default_factory=list)
    error: str | None = None
    stderr: str | None = None
    closed: int = 0
    suppressed_by: str | None = None

    @property
    def at_start(self) -> str:
        """``connected`` / ``failed`` (the first connection's outcome), ``suppressed`` (never started: a duplicate),
        or ``pending`` when it never said."""
        if self.outcomes:
            return self.outcomes[0]
        return "suppressed" if self.suppressed_by is not None and not self.starts else "pending"

    @property
    def suppressed_why(self) -> str | None:
        """Why the CLI never started it, when it suppressed it: ``the CLI kept <by>, a server of the session's own
        config with the same command, in its place``."""
        if self.suppressed_by is None:
            return None
        return (f"the CLI kept {self.suppressed_by}, a server of the session's own config with the same command, in "
                f"its place")

    @property
    def settled(self) -> bool:
        """It said how its start went, or the CLI will not start it (suppressed)."""
        return bool(self.outcomes) or self.at_start == "suppressed"


@dataclass
class DebugLog:
    """What a debug log says (:func:`read_debug_log`): ``hook_runs`` in order, ``servers`` by name, ``names_runs``
    (it has a line per hook run: the CLI writes them), ``bytes_read``, ``truncated`` (longer than
    :data:`MAX_BYTES`: the rest was not read)."""

    hook_runs: list[HookRun] = field(default_factory=list)
    servers: dict[str, ServerLog] = field(default_factory=dict)
    names_runs: bool = False
    bytes_read: int = 0
    truncated: bool = False

    def take_line(self, line: str) -> None:
        """Read one line of the log (module docstring); other lines change nothing."""
        match = _LINE.match(line)
        if match is None:
            return
        msg = match["msg"]
        if msg.startswith("Hooks: "):
            self._hook(msg)
        elif msg.startswith("MCP server "):
            self._mcp(msg)
        elif (hit := _SUPPRESSED.match(msg)) is not None:
            self.servers.setdefault(hit["name"], ServerLog()).suppressed_by = hit["by"]

    def _hook(self, msg: str) -> None:
        hit = _HOOK.match(msg)
        if hit is None:
            return
        name = hit["name"]
        event, query = (name.split(":", 1) + [""])[:2]
        status = int(hit["status"]) if hit["status"] is not None else None
        self.hook_runs.append(HookRun(event, query, hit["command"], hit["plugin"], status, hit["limit"] is not None))
        self.names_runs = True

    def _mcp(self, msg: str) -> None:
        hit = _MCP.match(msg)
        if hit is None:
            return
        server = self.servers.setdefault(hit["name"], ServerLog())
        rest = hit["rest"]
        if hit["sep"] == " ":
            if rest.startswith("Server stderr: ") and server.stderr is None:
                server.stderr = rest[len("Server stderr: "):].strip()[:200] or None
            return
        if rest.startswith("Starting connection"):
            server.starts += 1
        elif rest.startswith("Successfully connected"):
            server.outcomes.append("connected")
        elif (failed := _FAILED.match(rest)) is not None:
            server.outcomes.append("failed")
            if server.error is None:
                error, code = failed["error"].strip(), failed["code"]
                # 2.1.332 names the code and the error often starts with it ("(ENOENT): ENOENT: no such file ...")
                named = code and not error.startswith(f"{code}:")
                server.error = (f"{code}: " if named else "") + error[:200]
        elif _CLOSED.search(rest):
            server.closed += 1


def read_debug_log(path: str | os.PathLike[str] | None) -> DebugLog | None:
    """The debug log at ``path`` read once (at most :data:`MAX_BYTES`); None when there is none."""
    if path is None or not Path(path).is_file():
        return None
    tail = DebugTail(Path(path))
    while True:
        before = tail.offset
        tail.read()
        if tail.offset == before or tail.log.truncated:
            break
    tail.finish()
    return tail.log


@dataclass
class DebugTail:
    """A debug log read a little at a time: :meth:`read` takes the lines added since its last call (a line not yet
    ended waits), so each byte is read once over a trial."""

    path: Path
    offset: int = 0
    log: DebugLog = field(default_factory=DebugLog)
    _rest: bytes = b""

    def read(self, max_bytes: int = 1024 * 1024) -> DebugLog:
        """Read up to ``max_bytes`` more of the file; return the log as read so far."""
        left = MAX_BYTES - self.log.bytes_read
        if left <= 0:
            self.log.truncated = self.log.truncated or self._bigger()
            return self.log
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read(min(max_bytes, left))
        except OSError:
            return self.log
        self.offset += len(data)
        self.log.bytes_read += len(data)
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        for raw in lines:
            self.log.take_line(raw.decode("utf-8", "replace"))
        return self.log

    def finish(self) -> None:
        """Read the last line when the file ends without a newline (the log of a session that is over)."""
        if self._rest:
            self.log.take_line(self._rest.decode("utf-8", "replace"))
            self._rest = b""

    def _bigger(self) -> bool:
        try:
            return self.path.stat().st_size > self.offset
        except OSError:
            return False
