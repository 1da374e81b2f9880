"""What a transcript record is: its time, its text, whether it is a human prompt, the models that answered.

Pure functions over parsed records (dicts); no I/O. :func:`normalise_text` is the one text comparison of the
project (a delivered task equals the file that was pasted). Facts: ``references/transcript-jsonl.md``.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping

#: Record types the CLI 2.1.197 writes (claude-cli-observed.md) plus older/other known ones. Others are
#: skipped and counted as unknown.
KNOWN_TYPES = frozenset({
    "user", "assistant", "system", "attachment", "file-history-snapshot", "mode", "permission-mode",
    "queue-operation", "last-prompt", "summary", "custom-title", "ai-title", "agent-name", "tag", "pr-link",
})


INTERRUPT_TEXTS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")


SYNTHETIC_MODEL = "<synthetic>"


#: User text that the CLI writes for local slash commands: neither a prompt nor a conversation event.
LOCAL_COMMAND_PREFIXES = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")


def record_time(rec: Mapping[str, Any]) -> float | None:
    """The record's ``timestamp`` as epoch seconds, or None when missing or unparseable."""
    ts = rec.get("timestamp")
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def message_content(rec: Mapping[str, Any]) -> Any:
    """``message.content`` of a record (a string, a list of blocks, or None)."""
    msg = rec.get("message")
    return msg.get("content") if isinstance(msg, dict) else None


def prompt_text(rec: Mapping[str, Any]) -> str:
    """The text of a user record: string content, or the ``text`` blocks of list content joined by newlines."""
    content = message_content(rec)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content
                         if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    return ""


def is_human_prompt(rec: Mapping[str, Any]) -> bool:
    """True for a prompt a person (or the harness) submitted: a main-chain, non-meta user record whose
    content is text (no tool_result), that is not an interrupt marker or local-command output, and whose
    ``origin.kind`` (when present) is ``human``."""
    if rec.get("type") != "user" or rec.get("isSidechain") is True or rec.get("isMeta") is True:
        return False
    if rec.get("toolUseResult") is not None:
        return False
    origin = rec.get("origin")
    if isinstance(origin, dict) and origin.get("kind") not in (None, "human"):
        return False
    content = message_content(rec)
    if isinstance(content, list):
        if not content or any(not isinstance(b, dict) or b.get("type") not in ("text", "image") for b in content):
            return False
    elif not isinstance(content, str):
        return False
    text = prompt_text(rec).strip()
    if text in INTERRUPT_TEXTS or text.startswith(LOCAL_COMMAND_PREFIXES):
        return False
    return True


def human_prompts(records: Iterable[Mapping[str, Any]]) -> list[dict]:
    """The human prompts (see :func:`is_human_prompt`) in time order (timestamp, then file order)."""
    found = [(i, r) for i, r in enumerate(records) if is_human_prompt(r)]
    return [r for _, r in sorted(found, key=lambda p: (record_time(p[1]) or float("-inf"), p[0]))]


def normalise_text(text: str) -> str:
    """The one text comparison of the project: CRLF/CR become LF, trailing whitespace is stripped from each
    line and from the end. Newlines inside the text are kept ("AAA\\nBBB" never equals "AAABBB")."""
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).rstrip()


def main_chain_assistant_models(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Unique ``message.model`` values of main-chain assistant records, first-seen order, without
    ``<synthetic>`` (records the CLI wrote itself: interrupts, API errors). The proof gate's input."""
    seen: list[str] = []
    for rec in records:
        if rec.get("type") != "assistant" or rec.get("isSidechain") is True:
            continue
        msg = rec.get("message")
        model = msg.get("model") if isinstance(msg, dict) else None
        if isinstance(model, str) and model and model != SYNTHETIC_MODEL and model not in seen:
            seen.append(model)
    return seen
