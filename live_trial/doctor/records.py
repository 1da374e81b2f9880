"""The doctor's judgement of what the probe session left: its transcript (through ``transcript/``'s reader and
record rules), the screens the probe noted, and the rehearsal server's request log. Pure but for reading the
transcript with :mod:`live_trial.transcript.reader`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from live_trial.doctor import kit
from live_trial.doctor.checks import Checks
from live_trial.session import screen
from live_trial.transcript.reader import ReadResult, iter_records
from live_trial.transcript.records import KNOWN_TYPES, is_human_prompt, is_task_notification, prompt_text


def shown(capture: str, n: int = 6) -> str:
    """The last ``n`` non-empty lines of a screen, joined by " / " (what a changed line reports)."""
    return " / ".join([ln.strip() for ln in screen.tail(capture or "", 40) if ln.strip()][-n:])


def read_with_types(path: Path) -> tuple[ReadResult, list[str]]:
    """The transcript's records and the record types the reader skipped as unknown (sorted, distinct)."""
    unknown: set[str] = set()

    def note(line: bytes) -> bool:
        try:
            kind = json.loads(line).get("type")
        except (ValueError, AttributeError):
            return True
        if kind not in KNOWN_TYPES:
            unknown.add(str(kind))
        return True
    result = ReadResult()
    result.records = list(iter_records(path, select=note, result=result))
    return result, sorted(unknown)


def _tool_calls(records: list[dict]) -> list[tuple[dict, dict | None]]:
    """Each main-chain tool_use block (once per id) with its tool_result block (None when none came)."""
    results, calls, seen = {}, [], set()
    for rec in records:
        content = (rec.get("message") or {}).get("content")
        if rec.get("type") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[block.get("tool_use_id")] = block
    for rec in records:
        if rec.get("type") != "assistant" or rec.get("isSidechain") is True:
            continue
        for block in (rec.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") not in seen:
                seen.add(block.get("id"))
                calls.append(block)
    return [(c, results.get(c.get("id"))) for c in calls]


def _result_text(block: dict | None) -> str:
    content = (block or {}).get("content")
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def tool_answer(records: list[dict], tool: str) -> str | None:
    """The text of the tool_result of the first main-chain call of ``tool`` (None: no such call, or no result)."""
    calls = [(c, r) for c, r in _tool_calls(records) if c.get("name") == tool]
    return _result_text(calls[0][1]) if calls and calls[0][1] is not None else None


def judge_records(checks: Checks, transcript: Path, seen: dict) -> None:
    """The ``transcript.*`` checks but ``prompt``/``gate`` (judged while the probe ran) and the ``screen.*`` checks the
    probe's notes decide (spinner, background shells, turn-done line, the gate's answer)."""
    read, unknown = read_with_types(transcript)
    records = read.records
    checks.judge("transcript.record_types", read.skipped_unknown == 0 and read.skipped_malformed == 0,
                 f"{read.skipped_unknown} records of unknown types ({', '.join(unknown)}), "
                 f"{read.skipped_malformed} malformed")
    calls = _tool_calls(records)
    skills = [(c, r) for c, r in calls if c.get("name") == "Skill"]
    checks.judge("transcript.skill_call", len(skills) == 1 and skills[0][0].get("input", {}).get("skill") ==
                 f"{kit.PLUGIN}:{kit.SKILL}" and skills[0][1] is not None and not skills[0][1].get("is_error"),
                 f"{len(skills)} Skill calls: " + "; ".join(f"{c.get('input')} -> {_result_text(r)[:60]!r}"
                                                            for c, r in skills))
    bash = [(c, r) for c, r in calls if c.get("name") == "Bash" and kit.TOOL_OUTPUT in str(c.get("input"))]
    checks.judge("transcript.tool_use", bool(bash) and kit.TOOL_OUTPUT in _result_text(bash[0][1]).replace(
        f"echo {kit.TOOL_OUTPUT}", ""), f"Bash calls {[c.get('input') for c, _ in bash]}, results "
                                        f"{[_result_text(r)[:80] for _, r in bash]}")
    notes = [r for r in records if is_task_notification(r)]
    raw = [r for r in records if "<task-notification>" in json.dumps(r.get("message") or r.get("content") or "")]
    if notes:
        checks.holds("transcript.task_notification")
    elif raw:
        checks.changed("transcript.task_notification", f"a {raw[0].get('type')} record holds it, not a "
                       f"task-notification record: {prompt_text(raw[0])[:120]!r}")
    stops = [i for i, r in enumerate(records) if kit.STOP_HOOK_REASON in prompt_text(r)]
    durations = [i for i, r in enumerate(records) if r.get("type") == "system" and r.get("subtype") == "turn_duration"]
    if stops:
        first = records[stops[0]]
        checks.judge("transcript.stop_hook", not is_human_prompt(first) and any(d > stops[0] for d in durations),
                     "the feedback record counts as a human prompt" if is_human_prompt(first) else
                     "no turn_duration after the feedback")
    gate = [(c, r) for c, r in calls if c.get("name") == "AskUserQuestion"]
    if gate and gate[0][1] is not None:
        answered: dict[str, Any] | None = next(
            (rec.get("toolUseResult") for rec in records if isinstance(rec.get("toolUseResult"), dict)
             and "answers" in rec["toolUseResult"]), None)
        checks.judge("screen.gate_answer", answered is not None and answered.get("answers", {}).get(kit.QUESTION) ==
                     kit.ANSWER, f"answers {answered.get('answers') if answered else None}: "
                                 f"{_result_text(gate[0][1])[:100]!r}")
    if len(durations) >= 2 or checks.result("transcript.skill_call") != "not seen":
        checks.judge("transcript.turn_duration", len(durations) >= 2, f"{len(durations)} turn_duration records "
                                                                     "for 2 ended turns")
    _judge_screens(checks, seen)


def _judge_screens(checks: Checks, seen: dict) -> None:
    if "spinner" in seen:
        checks.holds("screen.busy_spinner")
    elif "busy_without_spinner" in seen:
        checks.changed("screen.busy_spinner",
                       f"a busy turn with no spinner line: {shown(seen['busy_without_spinner'])}")
    if "shells" in seen:
        checks.holds("screen.background_shells")
    elif checks.result("transcript.task_notification") == "holds":
        checks.changed("screen.background_shells", "no \"· 1 shell\" in the footer while the shell ran: "
                       + shown(seen.get("spinner") or seen.get("idle_capture") or ""))
    if "turn_done" in seen:
        checks.holds("screen.turn_done")
    elif "idle_capture" in seen:
        checks.changed("screen.turn_done", f"an ended turn without the turn-done line: {shown(seen['idle_capture'])}")


def judge_rehearsal(checks: Checks, requests: list[dict]) -> None:
    """``rehearsal.*``: the rules answering the wake-up and the Stop hook's feedback fired; else what came instead."""
    main = [r for r in requests if not r.get("side_query")]
    for name, rule, turn in (("rehearsal.task_notification", "task-notification", -1),
                             ("rehearsal.stop_hook_feedback", "stop-hook-feedback", 0)):
        if any(r.get("rule") == rule for r in main):
            checks.holds(name)
            continue
        missed = [r for r in main if r.get("rule_missed")]
        if missed:        # the Stop hook's request came in the first turn, the wake-up in the last
            r = missed[turn]
            checks.changed(name, f"a request at step {r.get('step')} of human turn {r.get('human_turn')} (last "
                                 f"prompt {r.get('prompt_head', '')[:60]!r}) matched no rule")
