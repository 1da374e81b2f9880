"""What a transcript record is: its time, its text, whether it is a human prompt, the models that answered.

Pure functions over parsed records (dicts); no I/O. :func:`normalise_text` is the one text comparison of the
project (a delivered task equals the file that was pasted). Facts: ``references/transcript-jsonl.md``.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any

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

#: User text of a slash-command record (``/compact``, ``/clear``: ``<command-name>/compact</command-name>
#: <command-message>…``), seen on 2.1.197: the command a person typed, never a prompt to the model.
COMMAND_PREFIXES = ("<command-name>", "<command-message>")

#: The text a task notification (a background shell or agent ended) starts with.
TASK_NOTIFICATION_PREFIX = "<task-notification>"


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
    content is text (no tool_result), and whose ``origin.kind`` (when present) is ``human``.

    Never a prompt (references/transcript-jsonl.md, "Records that are not prompts"): an interrupt marker,
    local-command output or caveat, a slash-command record (``<command-name>/compact…``), the compaction summary
    (``isCompactSummary`` / ``isVisibleInTranscriptOnly``), a task notification (``origin.kind``
    ``task-notification``, ``promptSource`` ``system``, or text starting ``<task-notification>``)."""
    if rec.get("type") != "user" or rec.get("isSidechain") is True or rec.get("isMeta") is True:
        return False
    if rec.get("toolUseResult") is not None or rec.get("isCompactSummary") is True \
            or rec.get("isVisibleInTranscriptOnly") is True or rec.get("promptSource") == "system":
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
    if text in INTERRUPT_TEXTS or is_command_text(text) or text.startswith(TASK_NOTIFICATION_PREFIX):
        return False
    return True


def is_command_text(text: str) -> bool:
    """True for the text of a slash-command record or of local-command output / caveat (not a prompt, not a
    conversation event): starts with ``<command-name>``, ``<command-message>``, ``<local-command-stdout>``,
    ``<local-command-stderr>`` or ``<local-command-caveat>``."""
    return text.lstrip().startswith(LOCAL_COMMAND_PREFIXES + COMMAND_PREFIXES)


def is_task_notification(rec: Mapping[str, Any]) -> bool:
    """True for the main-chain user record with which the CLI wakes the model after a background shell or agent
    ended: ``origin.kind`` ``task-notification`` (2.1.197), or string content starting ``<task-notification>``."""
    if rec.get("type") != "user" or rec.get("isSidechain") is True:
        return False
    origin = rec.get("origin")
    if isinstance(origin, dict) and origin.get("kind") == "task-notification":
        return True
    return prompt_text(rec).lstrip().startswith(TASK_NOTIFICATION_PREFIX)


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
