"""What a transcript record is: its time, its text, whether it is a human prompt, the models that answered.

Pure functions over parsed records (dicts); no I/O. :func:`normalise_text` is the one text comparison of the
project (a delivered task equals the file that was pasted). Facts: ``references/transcript-jsonl.md``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from live_trial.clock import epoch_or_none

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any, TypeVar

    _Record = TypeVar("_Record", bound=Mapping[str, Any])

#: Record types the CLI writes that the harness reads (2.1.197, claude-cli-observed.md; 2.1.332) plus older/other
#: known ones. Others are skipped and counted as unknown.
READ_TYPES = frozenset({
    "user", "assistant", "system", "attachment", "file-history-snapshot", "mode", "permission-mode",
    "queue-operation", "last-prompt", "summary", "custom-title", "ai-title", "agent-name", "tag", "pr-link",
})

#: Record types the CLI 2.1.332 writes that hold nothing of the conversation the harness reads
#: (references/transcript-jsonl.md "Records on 2.1.332"): copies of what was sent to the API (``api-request``,
#: ``api-request-shape``, and ``api-request-blob``, whose ``message`` repeats the user and assistant messages sent,
#: tool_use and tool_result blocks included) and the CLI's own bookkeeping (``atis-latch``, ``tools-used``,
#: ``file-history-delta``, ``cost-state``). Known, so never counted as unknown, and never handed to a reader's
#: caller: a tool_use is counted once, from its ``assistant`` record.
IGNORED_TYPES = frozenset({
    "api-request", "api-request-blob", "api-request-shape", "atis-latch", "tools-used", "file-history-delta",
    "cost-state",
})

KNOWN_TYPES = READ_TYPES | IGNORED_TYPES


def is_ignored(rec: Mapping[str, Any]) -> bool:
    """True for a record whose ``type`` is one of :data:`IGNORED_TYPES` (known, not read)."""
    kind = rec.get("type")
    return isinstance(kind, str) and kind in IGNORED_TYPES


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
    return epoch_or_none(rec.get("timestamp"))


def message_content(rec: Mapping[str, Any]) -> Any:
    """``message.content`` of a record (a string, a list of blocks, or None). None for a record of
    :data:`IGNORED_TYPES`: an ``api-request-blob`` repeats the messages sent, and its blocks are never the
    conversation's (a tool_use is counted once, from its ``assistant`` record)."""
    if is_ignored(rec):
        return None
    msg = rec.get("message")
    return msg.get("content") if isinstance(msg, dict) else None


def _text_of(rec: Mapping[str, Any]) -> str:
    content = message_content(rec)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content
                         if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    return ""


def prompt_text(rec: Mapping[str, Any]) -> str:
    """The text of a record: string content, or the ``text`` blocks of list content joined by newlines. For a
    ``user`` record, a paste the CLI stored wrapped (:func:`unwrap_paste`) is the pasted text."""
    text = _text_of(rec)
    return unwrap_paste(text) if rec.get("type") == "user" else text


#: How 2.1.332 stores a multi-line paste as the whole prompt: two newlines, the opening tag with a short id, a
#: newline, the pasted text as it was, the closing tag naming the same id, a newline (references/transcript-jsonl.md
#: "Records on 2.1.332"). 2.1.197 stores the text itself; a short one-line paste is never wrapped.
_PASTE_WRAPPER = re.compile(r'\n\n<pasted_content id="([0-9A-Za-z_-]{1,32})">\n(.*)</pasted_content id="\1">\n', re.S)


def unwrap_paste(text: str) -> str:
    """``text`` without the CLI's paste wrapper when ``text`` is exactly one wrapped paste (see
    :data:`_PASTE_WRAPPER`: both tags, the same id, nothing before or after); any other text is returned as it is, so
    a wrapper around only part of a prompt, a wrapper whose ids differ or words typed around it are kept and a
    delivery check compares them (cross-talk stays cross-talk)."""
    if not text.startswith("\n\n<pasted_content"):
        return text
    m = _PASTE_WRAPPER.fullmatch(text)
    return m.group(2) if m else text


def is_wrapped_paste(rec: Mapping[str, Any]) -> bool:
    """True for a user record whose text is one paste the CLI wrapped (:func:`unwrap_paste` took the wrapper off)."""
    if rec.get("type") != "user":
        return False
    text = _text_of(rec)
    return unwrap_paste(text) != text


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


def human_prompts(records: Iterable[_Record]) -> list[_Record]:
    """The human prompts (see :func:`is_human_prompt`) in time order (timestamp, then file order)."""
    found = [(i, r) for i, r in enumerate(records) if is_human_prompt(r)]
    return [r for _, r in sorted(found, key=lambda p: (record_time(p[1]) or float("-inf"), p[0]))]


def normalise_text(text: str) -> str:
    r"""The one text comparison of the project: CRLF/CR become LF, trailing whitespace is stripped from each
    line and from the end. Newlines inside the text are kept ("AAA\nBBB" never equals "AAABBB")."""
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


def model_answered(records: Iterable[Mapping[str, Any]]) -> bool:
    """True when the records hold an answer of the model: an assistant record that is not an API error nor the
    CLI's synthetic one. False when its only assistant records are errors, or there are none (the model never
    answered the task: README "Whose failure it is", ``model_never_answered``)."""
    return any(r.get("type") == "assistant" and r.get("isApiErrorMessage") is not True
               and isinstance(r.get("message"), dict) and r["message"].get("model") != SYNTHETIC_MODEL
               for r in records)
