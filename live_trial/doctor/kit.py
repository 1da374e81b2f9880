"""What the doctor's probe plays: the rehearsal scenario, the tiny plugin (one skill and a Stop hook that blocks once)
and the two prompts. Pure data and file writing; the probe in :mod:`live_trial.doctor.probe` runs it."""
from __future__ import annotations

import json
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
#: Seconds the rehearsal waits before the tool call's reply, so the spinner is on screen long enough to be seen.
SPINNER_DELAY_S = 1.2
BACKGROUND_SLEEP_S = 3


def scenario() -> dict:
    """The probe's scenario (``schemas/scenario.schema.json``). Rule ids name what each step shows."""
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
         "reply": tool("Bash", {"command": f"sleep {BACKGROUND_SLEEP_S}; echo {BACKGROUND_OUTPUT}",
                                "description": "Doctor probe background shell", "run_in_background": True})},
        {"id": "wait", "when": {"last_prompt": "pick a colour", "step": 2},
         "reply": text("Waiting for the background shell.")},
        {"id": "skill", "when": {"step": 0, "human_turn": 1, "tools_include": ["Skill"]},
         "reply": tool("Skill", {"skill": f"{PLUGIN}:{SKILL}"})},
        {"id": "tool", "when": {"step": 1, "human_turn": 1, "last_tool_result": {"content": "Launching skill"}},
         "reply": tool("Bash", {"command": f"echo {TOOL_OUTPUT}", "description": "Doctor probe tool call"},
                       delay_s=SPINNER_DELAY_S)},
        {"id": "tool-done", "when": {"step": 2, "human_turn": 1}, "reply": text("The tool ran.")},
    ]}


def write_plugin(root: Path, marker: Path) -> Path:
    """Write the probe's plugin under ``root`` and return its folder: a manifest the validator has nothing to say about
    (name, version, description, author), skill ``probe``, and a Stop hook that blocks the first stop only (it
    creates ``marker``) with :data:`STOP_HOOK_REASON`."""
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
    (plugin / "hooks" / "stop.sh").write_text(
        f"#!/bin/sh\ncat >/dev/null\n[ -e '{marker}' ] && exit 0\n: > '{marker}'\necho '{reason}'\n")
    (plugin / "hooks" / "stop.sh").chmod(0o755)
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh\""}]}]}}))
    return plugin
