"""What the CLI wraps around the input of a turn in the requests it sends, and what it lists but does not offer.

2.1.332 sends inside a ``<system-reminder>`` text block what 2.1.197 sent bare (a task notification, Stop-hook
feedback), and lists a tool with ``defer_loading: true`` (``DeferredToolPlaceholder``) that the model is told never to
call. Pure functions over request text and tool entries; the scenario language (``scenario.py``) reads requests
through them so one rule matches on both versions. Facts: references/scenario-format.md "Reminders",
references/transcript-jsonl.md "Records on 2.1.332".
"""
from __future__ import annotations

import re

REMINDER_OPEN = "<system-reminder>"
#: One whole reminder block: its body holds no closing tag of its own (two blocks in one text are not one block).
_REMINDER = re.compile(r"\s*<system-reminder>((?:(?!</system-reminder>).)*)</system-reminder>\s*", re.S)
#: Inside a reminder (2.1.332): the task notification element as the block's last lines.
_REMINDED_NOTIFICATION = re.compile(r"(?:\A|\n)(<task-notification>.*</task-notification>)\s*\Z", re.S)
#: Inside a reminder (2.1.332): the Stop-hook feedback, from its own line ``Stop hook feedback:`` to the end.
_REMINDED_HOOK_FEEDBACK = re.compile(r"(?:\A|\n)(Stop hook feedback:\n.*?)\s*\Z", re.S)


def unwrap_reminder(text: str) -> str | None:
    """The input a ``<system-reminder>`` text block carries for the model, or None for a context reminder.

    ``text`` must be one whole reminder block (``<system-reminder>…</system-reminder>``, whitespace around it
    allowed). 2.1.332 sends inside such a block what 2.1.197 sent as the block itself
    (references/scenario-format.md "Reminders"): a task notification (a lead text, then the
    ``<task-notification>…</task-notification>`` element as the block's last lines: the element is returned) and
    Stop-hook feedback (a lead text, then a line ``Stop hook feedback:``: that line and the rest are returned). Any
    other reminder (the date, the skill listing, git attribution…) is context, never a prompt: None."""
    m = _REMINDER.fullmatch(text)
    if m is None:
        return None
    body = m.group(1)
    found = _REMINDED_NOTIFICATION.search(body) or _REMINDED_HOOK_FEEDBACK.search(body)
    return found.group(1) if found else None


def is_deferred(tool: dict) -> bool:
    """A tool listed with ``defer_loading: true`` is not offered to the model (2.1.332 lists
    ``DeferredToolPlaceholder`` so, "never call this tool"): it is not among a request's tools."""
    return tool.get("defer_loading") is True
