"""The Skill calls a session's transcript shows: the launch axis of the verdict (seed 001 verdict table, axis 起動)
and the compactions of its conversation, read from the records the launch check needs (references/transcript-jsonl.md
"Plugins").

:func:`skill_call_records` streams a session's transcripts and keeps only the cut records the checks read;
:func:`skill_calls` lists the calls in the order they happened; :func:`launch_check` says whether the target itself was
called successfully; :func:`compaction_triggers` what compacted the conversation. Reading only: what a trial does with
the answer is ``live_trial.trial.finish``'s.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.transcript.order import causal_order
from live_trial.transcript.reader import iter_records
from live_trial.transcript.records import message_content


@dataclass(frozen=True)
class LaunchCheck:
    """Whether the transcript shows the skill under trial launched."""

    launched: bool
    """A successful Skill call to the target itself is in the transcript."""
    seen: str
    """The Skill calls seen, in order (``name`` or ``name (failed)``, ``?`` for a call without a name; ``none``)."""


def launch_check(records: Iterable[Mapping[str, Any]], target: str) -> LaunchCheck:
    """Seed 001 verdict table, axis 起動: READY and a delivered task are not enough; the transcript must show a
    successful Skill call to ``target`` (``plugin:skill``; task.md asks for exactly that) in any of the session's
    transcripts. ``records``: :func:`skill_call_records` of them."""
    calls = skill_calls(records)
    seen = ", ".join(f"{n or '?'}{'' if ok else ' (failed)'}" for n, ok in calls) or "none"
    return LaunchCheck(any(name == target and ok for name, ok in calls), seen)


def compaction_triggers(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """What compacted the conversation, once per ``compact_boundary`` record (``manual``, ``auto``; ``unknown``):
    the model then worked from a summary of the task."""
    return [str((r.get("compactMetadata") or {}).get("trigger") or "unknown") for r in records
            if r.get("type") == "system" and r.get("subtype") == "compact_boundary"]


def skill_calls(records: Iterable[Mapping[str, Any]]) -> list[tuple[str, bool]]:
    """``[(skill name, succeeded)]`` for every Skill tool_use of the main chain, in the order they happened.

    ``succeeded``: its tool_result exists and is not an error. ``records``: parsed transcript records. The name is the
    skill the CLI resolved the call to when the transcript says so: a call by a bare name (``hello``) that the CLI
    resolved to a plugin's skill is followed by an assistant record with ``attributionSkill: "plugin:hello"``
    (seen on 2.1.197; references/transcript-jsonl.md "Plugins"); otherwise the name as called."""
    calls: list[tuple[str, str]] = []
    results: dict[str, bool] = {}
    resolved: dict[str, str] = {}
    waiting: list[str] = []            # successful bare-name calls whose next assistant record is not seen yet
    for rec in causal_order(records):
        if rec.get("type") == "assistant" and waiting:
            attributed = rec.get("attributionSkill")
            for use_id in waiting:
                if isinstance(attributed, str) and attributed:
                    resolved[use_id] = attributed.lstrip("/")
            waiting = []
        content = message_content(rec)
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == "Skill":
                skill = (block.get("input") or {}).get("skill") if isinstance(block.get("input"), dict) else None
                calls.append((str(skill or "").lstrip("/"), str(block.get("id"))))
            elif block.get("type") == "tool_result":
                use_id = str(block.get("tool_use_id"))
                results[use_id] = block.get("is_error") is not True
                if results[use_id] and any(c[1] == use_id and ":" not in c[0] for c in calls):
                    waiting.append(use_id)
    return [(resolved.get(use_id, name), results.get(use_id, False)) for name, use_id in calls]


def _tool_ids(rec: dict[str, Any], block_type: str, key: str, name: str | None = None) -> list[str]:
    content = message_content(rec)
    return [b[key] for b in content if isinstance(b, dict) and b.get("type") == block_type
            and isinstance(b.get(key), str) and (name is None or b.get("name") == name)] \
        if isinstance(content, list) else []


_SLIM_KEYS = ("type", "subtype", "uuid", "parentUuid", "timestamp", "isSidechain", "attributionSkill",
              "compactMetadata")


def _slim(rec: dict[str, Any]) -> dict[str, Any] | None:
    """What :func:`skill_calls` and the compaction note read of a record: its order keys, ``attributionSkill``,
    ``compactMetadata``, its Skill tool_use blocks (id and skill) and its tool_result blocks (id and is_error); None
    for a record that holds none of them (nothing else of it is kept)."""
    content = message_content(rec)
    blocks = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Skill":
            inp = b.get("input")
            blocks.append({"type": "tool_use", "name": "Skill", "id": b.get("id"),
                           "input": {"skill": inp.get("skill")} if isinstance(inp, dict) else None})
        elif isinstance(b, dict) and b.get("type") == "tool_result":
            blocks.append({"type": "tool_result", "tool_use_id": b.get("tool_use_id"), "is_error": b.get("is_error")})
    if not blocks and not rec.get("attributionSkill") and rec.get("subtype") != "compact_boundary":
        return None
    slim = {k: rec[k] for k in _SLIM_KEYS if k in rec}
    if blocks:
        slim["message"] = {"content": blocks}
    return slim


def skill_call_records(*paths: Path) -> list[dict[str, Any]]:
    """The records of a session's transcripts (in the order given) that the launch check and the compaction note
    need, cut to what those read (:func:`_slim`): Skill tool_use records, the tool_result records answering them,
    the assistant records naming the skill the CLI resolved a bare-name call to (``attributionSkill``) and
    ``compact_boundary`` records, streamed: lines that mention neither ``"Skill"``, ``attributionSkill``,
    ``compact_boundary`` nor a Skill call's id are not parsed, and only the cut records are held (ARCHITECTURE
    invariant 9). A result written before its call (the CLI's out-of-order first turn) is found by a second pass that
    looks only for the ids still unanswered."""
    ids: set[bytes] = set()

    def select(line: bytes) -> bool:
        return (b'"Skill"' in line or b"\\u" in line or b"compact_boundary" in line or b"attributionSkill" in line
                or any(i in line for i in ids))

    kept = []
    for path in paths:
        for rec in iter_records(path, select=select):
            for i in _tool_ids(rec, "tool_use", "id", "Skill"):
                ids.update({i.encode(), json.dumps(i)[1:-1].encode()})      # as written raw or escaped
            slim = _slim(rec)
            if slim is not None:
                kept.append(slim)
    answered = {i for rec in kept for i in _tool_ids(rec, "tool_result", "tool_use_id")}
    missing = {i for rec in kept for i in _tool_ids(rec, "tool_use", "id", "Skill")} - answered
    if missing:
        needles = {n for i in missing for n in (i.encode(), json.dumps(i)[1:-1].encode())}
        kept += [slim for path in paths
                 for rec in iter_records(path, select=lambda line: any(n in line for n in needles))
                 if set(_tool_ids(rec, "tool_result", "tool_use_id")) & missing and (slim := _slim(rec)) is not None]
    return kept
