"""What the doctor's probe plays: the rehearsal scenario, the tiny plugin and the two prompts. Pure data and file
writing; the probe in :mod:`live_trial.doctor.probe` runs it.

The plugin: one skill; a Stop hook that blocks once; a PostToolUse (Bash) hook that fails once (exit 1 with a line on
stderr) and a PostToolUse hook of the MCP echo tool that outlives its ``timeout`` (the records the plugins' activity
ledger reads: references/transcript-jsonl.md "What a plugin's hooks and MCP servers leave behind"); two stdio MCP
servers in ``.mcp.json``, of one small server written by hand (newline-delimited JSON-RPC 2.0): ``echo``, whose
place a stand-in given with ``--mcp-config`` takes (the declared command, if the CLI started it, leaves a marker
file), and ``broken``, which writes one line to stderr and exits 3 at start.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

PLUGIN = "doctorkit"
SKILL = "probe"
#: The first prompt: a multi-line paste (three lines), so the transcript's record of a pasted text is checked.
PASTE_TASK = ("Doctor probe, first prompt (a multi-line paste).\nCall the skill doctorkit:probe and run one tool;\n"
              "a Stop hook asks for one more reply.\n")
#: The second prompt: a question gate, then a background shell the model waits for (the footer is read here: after a
#: multi-line paste 2.1.197 shows "paste again to expand" in its place until a key is pressed).
GATE_TASK = "Doctor probe, second prompt: pick a colour, then start one background shell and wait for it.\n"
TOOL_OUTPUT = "doctor-tool-ok"
BACKGROUND_OUTPUT = "doctor-background-done"
STOP_HOOK_REASON = "DOCTOR-STOP-HOOK: the Stop hook asks for one more reply"
QUESTION = "Which colour?"
OPTIONS = ("Red", "Green")
ANSWER = "Red"
STRUCTURED = {"probe": "ok"}
STRUCTURED_SCHEMA = {"type": "object", "properties": {"probe": {"type": "string"}}, "required": ["probe"],
                     "additionalProperties": False}
#: The PostToolUse (Bash) hook's first run fails with this line on stderr (exit 1); its later runs succeed.
HOOK_ERROR = "DOCTOR-HOOK-ERROR: the PostToolUse hook fails once"
HOOK_ERROR_STATUS = 1
#: The PostToolUse hook of the echo tool sleeps past its timeout (seconds): the CLI cancels it. It runs while the
#: background shell sleeps, so it costs the probe no time.
SLOW_HOOK_TIMEOUT_S = 1
ECHO, BROKEN = "echo", "broken"
#: The servers' names in the session (``plugin:<plugin>:<server>``, references/transcript-jsonl.md) and the echo tool.
ECHO_SERVER, BROKEN_SERVER = f"plugin:{PLUGIN}:{ECHO}", f"plugin:{PLUGIN}:{BROKEN}"
ECHO_TOOL = f"mcp__plugin_{PLUGIN}_{ECHO}__echo"
BROKEN_STDERR = "doctor-mcp: the service it stands for cannot be reached"
STAND_IN_ANSWER = "stand-in echo: "
ECHO_TEXT = "doctor"
#: Seconds the rehearsal waits before the tool call's reply, so the spinner is on screen long enough to be seen.
SPINNER_DELAY_S = 1.2
#: The background shell ends once the Stop hook ran at the end of its turn (it makes :func:`release_flag`), so its
#: end always comes after that turn, however loaded the machine (a shell that ended while the turn still ran would be
#: recorded as a queued prompt, not as the wake-up the probe checks); it gives up waiting after this many seconds.
BACKGROUND_MAX_S = 15


def release_flag(stop_marker: Path) -> Path:
    """The file the Stop hook makes at every stop after its first (beside ``stop_marker``): the background shell's
    cue to end."""
    return Path(stop_marker).parent / "turn-ended"


def scenario(stop_marker: Path) -> dict:
    """The probe's scenario (``schemas/scenario.schema.json``) for a plugin written with ``stop_marker``
    (:func:`write_plugin`). Rule ids name what each step shows."""
    flag = release_flag(stop_marker)
    background = (f"rm -f '{flag}'; i=0; while [ ! -e '{flag}' ] && [ $i -lt {BACKGROUND_MAX_S * 10} ]; do sleep 0.1; "
                  f"i=$((i+1)); done; echo {BACKGROUND_OUTPUT}")

    def text(t: str) -> dict:
        return {"content": [{"text": t}]}

    def tool(name: str, tool_input: dict, **reply) -> dict:
        return {"content": [{"tool_use": {"name": name, "input": tool_input}}], **reply}

    return {"name": "doctor-probe", "side_query_text": "Doctor probe", "rules": [
        {"id": "print-mode", "when": {"tools_include": ["StructuredOutput"]}, "reply": tool("StructuredOutput",
                                                                                          STRUCTURED)},
        {"id": "task-notification", "times": 1, "when": {"task_notification": "completed"},
         "reply": text("The background shell ended.")},
        {"id": "stop-hook-feedback", "times": 1, "when": {"last_prompt": "DOCTOR-STOP-HOOK"},
         "reply": text("Read the Stop hook's feedback.")},
        {"id": "ask", "when": {"last_prompt": "pick a colour", "step": 0}, "reply": tool("AskUserQuestion", {
            "questions": [{"question": QUESTION, "header": "Colour", "multiSelect": False,
                           "options": [{"label": o, "description": f"the colour {o.lower()}"} for o in OPTIONS]}]})},
        {"id": "background", "when": {"last_prompt": "pick a colour", "step": 1},
         "reply": tool("Bash", {"command": background,
                                "description": "Doctor probe background shell", "run_in_background": True})},
        {"id": "mcp-call", "when": {"last_prompt": "pick a colour", "step": 2},
         "reply": tool(ECHO_TOOL, {"text": ECHO_TEXT})},
        {"id": "wait", "when": {"last_prompt": "pick a colour", "step": 3},
         "reply": text("Waiting for the background shell.")},
        {"id": "skill", "when": {"step": 0, "human_turn": 1, "tools_include": ["Skill"]},
         "reply": tool("Skill", {"skill": f"{PLUGIN}:{SKILL}"})},
        {"id": "tool", "when": {"step": 1, "human_turn": 1, "last_tool_result": {"content": "Launching skill"}},
         "reply": tool("Bash", {"command": f"echo {TOOL_OUTPUT}", "description": "Doctor probe tool call"},
                       delay_s=SPINNER_DELAY_S)},
        {"id": "tool-done", "when": {"step": 2, "human_turn": 1}, "reply": text("The tool ran.")},
    ]}


def write_plugin(root: Path, marker: Path) -> Path:
    """Write the probe's plugin under ``root`` and return its folder (module docstring): a manifest the validator has
    nothing to say about (name, version, description, author), skill ``probe``, a Stop hook that blocks the first stop
    only (it creates ``marker``) with :data:`STOP_HOOK_REASON` and makes :func:`release_flag` at every later one, a
    PostToolUse (Bash) hook whose first run fails with
    :data:`HOOK_ERROR`, a PostToolUse hook of :data:`ECHO_TOOL` that outlives :data:`SLOW_HOOK_TIMEOUT_S`, and the
    MCP servers ``echo`` and ``broken`` of :func:`write_mcp_server`, run by this Python. The markers of the hook that
    fails once and of the declared echo server (:func:`declared_echo_marker`) are beside ``marker``."""
    plugin = Path(root) / PLUGIN
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(
        {"name": PLUGIN, "version": "0.0.1", "description": "The live-trial doctor's probe plugin.",
         "author": {"name": "live-trial doctor"}}))
    (plugin / "skills" / SKILL).mkdir(parents=True)
    (plugin / "skills" / SKILL / "SKILL.md").write_text(
        f"---\nname: {SKILL}\ndescription: Use when the live-trial doctor probes the CLI.\n---\n\nRun one tool.\n")
    (plugin / "hooks").mkdir()
    reason = json.dumps({"decision": "block", "reason": STOP_HOOK_REASON})
    failed = marker.parent / "post-tool-use-failed"
    scripts = {"stop.sh": f"[ -e '{marker}' ] && {{ : > '{release_flag(marker)}'; exit 0; }}\n: > '{marker}'\n"
                          f"echo '{reason}'\n",
               "fail-once.sh": f"[ -e '{failed}' ] && exit 0\n: > '{failed}'\necho '{HOOK_ERROR}' >&2\n"
                               f"exit {HOOK_ERROR_STATUS}\n",
               "slow.sh": f"exec sleep {SLOW_HOOK_TIMEOUT_S * 5}\n"}
    for name, body in scripts.items():
        (plugin / "hooks" / name).write_text(f"#!/bin/sh\ncat >/dev/null\n{body}")
        (plugin / "hooks" / name).chmod(0o755)

    def command(script: str, **extra: object) -> dict:
        return {"type": "command", "command": f"\"${{CLAUDE_PLUGIN_ROOT}}/hooks/{script}\"", **extra}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {
        "Stop": [{"hooks": [command("stop.sh")]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [command("fail-once.sh")]},
                        {"matcher": ECHO_TOOL, "hooks": [command("slow.sh", timeout=SLOW_HOOK_TIMEOUT_S)]}]}}))
    write_mcp_server(plugin / "mcp" / "server.py")
    server = ["-I", "${CLAUDE_PLUGIN_ROOT}/mcp/server.py"]
    (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {
        ECHO: {"command": sys.executable, "args": [*server, "declared", str(declared_echo_marker(marker))]},
        BROKEN: {"command": sys.executable, "args": [*server, "--exit-at-start"]}}}))
    return plugin


def declared_echo_marker(marker: Path) -> Path:
    """The file the plugin's declared ``echo`` server makes when it starts (the stand-in never does)."""
    return marker.parent / "declared-echo-started"


def stand_in_command(plugin: Path) -> tuple[str, ...]:
    """The stand-in's command: the same server, answering :data:`STAND_IN_ANSWER` + the text."""
    return (sys.executable, "-I", str(plugin / "mcp" / "server.py"), "stand-in")


#: The MCP server (module docstring): ``--exit-at-start`` writes :data:`BROKEN_STDERR` and exits 3; ``declared FILE``
#: makes FILE, then answers as ``stand-in`` does, with "declared echo: " in front of the text.
MCP_SERVER = """import json, sys
if "--exit-at-start" in sys.argv:
    sys.stderr.write(%(stderr)r + "\\n")
    sys.exit(3)
if sys.argv[1] == "declared":
    open(sys.argv[2], "w").close()
prefix = %(answer)r if sys.argv[1] == "stand-in" else "declared echo: "
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    rid, method, params = request.get("id"), request.get("method"), request.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": params.get("protocolVersion", "2024-11-05"),
              "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "0.1.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": "echo", "description": "Answer the text back",
              "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}]}})
    elif method == "tools/call":
        text = prefix + str((params.get("arguments") or {}).get("text", ""))
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no method " + str(method)}})
""" % {"stderr": BROKEN_STDERR, "answer": STAND_IN_ANSWER}


def write_mcp_server(path: Path) -> Path:
    """Write :data:`MCP_SERVER` to ``path`` (its folder made); return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MCP_SERVER)
    return path


def mcp_config(plugin: Path) -> dict:
    """The ``--mcp-config`` document of the probe's session: the stand-in, named as the plugin's ``echo`` server is in
    the session (:data:`ECHO_SERVER`), as a trial's ``mcp-fixtures.json`` names a replaced server."""
    command = stand_in_command(plugin)
    return {"mcpServers": {ECHO_SERVER: {"command": command[0], "args": list(command[1:])}}}
