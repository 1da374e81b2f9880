"""The newest turn without its whole text: what the classifier needs of a long turn, and reading it from the end.

A trial is one long turn (tool calls with results of 5-120 KB each), so everything back to the newest prompt can be
most of a large file. The classifier's answer depends on the newest assistant message and what follows it (the
model is asked again only after every tool_use of its previous message has a result) and, further back, only on a
few kinds of record: prompts and other non-tool user records, queue operations, system records (``turn_duration``),
background work started or ended, API errors, gate tools and their answers, tool_uses still unanswered, and the
newest assistant text. :class:`TurnWindow` keeps those and the newest message, so poll classifies each tick over a
handful of records however long the turn (``tests/unit/transcript/test_turn_window.py`` checks that the
classification is the same as over every record). :func:`read_turn` reads back from the end record by record and
stops as soon as the state is decided (references/transcript-jsonl.md "Reading rules").
"""
from __future__ import annotations

import os
from collections.abc import Iterable

from live_trial.transcript.background import notified_task_ids
from live_trial.transcript.reader import (
    TAIL_MARGIN_RECORDS,
    TAIL_MAX_BYTES,
    TAIL_SCAN_MAX_BYTES,
    ReadResult,
    _tail_is_enough,
    records_backwards,
)
from live_trial.transcript.records import is_human_prompt, message_content, prompt_text

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any

#: Tools whose calls stay in the window of a long turn: their question and answers make warnings and gates.
KEEP_TOOLS = ("AskUserQuestion", "ExitPlanMode")
#: ``toolUseResult`` keys of results that start, stop or report background work, or answer a question.
KEEP_RESULT_KEYS = ("backgroundTaskId", "agentId", "task_id", "task", "answers")


def _blocks(rec: dict[str, Any]) -> list[dict[str, Any]]:
    content = message_content(rec)
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _tool_use_ids(rec: dict[str, Any]) -> list[str]:
    return [b["id"] for b in _blocks(rec) if b.get("type") == "tool_use" and isinstance(b.get("id"), str)]


def _result_ids(rec: dict[str, Any]) -> list[str]:
    return [str(b.get("tool_use_id")) for b in _blocks(rec) if b.get("type") == "tool_result"]


def _message_id(rec: dict[str, Any]) -> str | None:
    msg = rec.get("message")
    mid = msg.get("id") if isinstance(msg, dict) else None
    return mid if isinstance(mid, str) else rec.get("uuid") if isinstance(rec.get("uuid"), str) else None


def _kept_result(rec: dict[str, Any]) -> bool:
    result = rec.get("toolUseResult")
    return isinstance(result, dict) and (any(k in result for k in KEEP_RESULT_KEYS)
                                         or result.get("status") == "async_launched")


def _kept(rec: dict[str, Any], answered: set[str], kept_uses: set[str]) -> bool:
    """Whether an older record (before the newest assistant message) can still change the classification.
    ``answered``: tool_use ids with a result so far; ``kept_uses``: tool_use ids whose call or result is kept."""
    if rec.get("isSidechain") is True:
        return False
    rtype = rec.get("type")
    if rtype in ("queue-operation", "system"):
        return True
    if rtype == "attachment":
        return bool(notified_task_ids(rec))
    if rtype == "user":
        results = _result_ids(rec)
        return not results or _kept_result(rec) or any(r in kept_uses for r in results)
    if rtype == "assistant":
        if rec.get("isApiErrorMessage") is True:
            return True
        uses = _tool_use_ids(rec)
        return (any(u not in answered or u in kept_uses for u in uses)
                or any(b.get("name") in KEEP_TOOLS for b in _blocks(rec) if b.get("type") == "tool_use"))
    return False


class TurnWindow:
    """Records of a transcript fed in file order (:meth:`add`), kept as the newest assistant message and what
    follows it, plus the older records that can still matter (see the module docstring). :meth:`records` gives them
    in file order for :func:`live_trial.transcript.status.classify`. Pure; raises nothing."""

    def __init__(self, records: Iterable[dict[str, Any]] = ()) -> None:
        self._kept: list[tuple[int, dict[str, Any]]] = []
        self._window: list[tuple[int, dict[str, Any]]] = []
        self._answered: set[str] = set()
        self._text: tuple[int, dict[str, Any]] | None = None     # the newest assistant record with text, once folded
        self._newest_message: str | None = None
        self._kept_uses: set[str] = set()               # tool_use ids whose call is kept (their results must be too)
        self._seq = 0
        self.add(records)

    def add(self, records: Iterable[dict[str, Any]]) -> None:
        """Feed more records (file order)."""
        for rec in records:
            if not isinstance(rec, dict):
                continue
            self._seq += 1
            if rec.get("isSidechain") is not True:
                self._answered.update(_result_ids(rec))
                if rec.get("type") == "assistant":
                    mid = _message_id(rec)
                    if mid != self._newest_message:
                        self._fold()
                        self._newest_message = mid
            self._window.append((self._seq, rec))

    def _fold(self) -> None:
        self._kept_uses.update(str(b.get("tool_use_id")) for _, r in self._window if _kept_result(r)
                               for b in _blocks(r) if b.get("type") == "tool_result")
        for item in self._window:
            rec = item[1]
            if _kept(rec, self._answered, self._kept_uses):
                self._kept.append(item)
                if rec.get("type") == "assistant":
                    self._kept_uses.update(_tool_use_ids(rec))
            elif rec.get("type") == "assistant" and rec.get("isSidechain") is not True and prompt_text(rec):
                self._text = item
        self._window = []

    def records(self) -> list[dict[str, Any]]:
        """The kept records and the window, in file order."""
        items = self._kept + ([self._text] if self._text is not None else []) + self._window
        items.sort(key=lambda item: item[0])
        return [rec for _, rec in items]

    def __len__(self) -> int:
        return len(self._kept) + len(self._window) + (self._text is not None)


def read_turn(path: str | os.PathLike[str], *, session_status: dict[str, Any] | None = None,
              max_bytes: int = TAIL_MAX_BYTES, margin: int = TAIL_MARGIN_RECORDS,
              scan_max_bytes: int = TAIL_SCAN_MAX_BYTES) -> ReadResult:
    """Read the newest turn back from the end of ``path``, record by record, only as far as its state needs.

    Stops at the newest human prompt (with ``margin`` records before it, for a first turn written out of order),
    at ``max_bytes``, or, unless the live CLI status (``session_status``, only of a live pid) says ``idle``, as soon
    as the newest assistant message and what follows it classify as busy or as a gate: older records can only add
    background work or queued prompts, which make a turn busy, never one that is busy finished. A stop of that kind
    leaves ``reached_start`` False and may leave out the prompt, older background tasks and older assistant text.
    The bytes read are bounded as :func:`live_trial.transcript.reader.read_tail`'s are (an over-long record is
    summarised from its first and last bytes). Records are returned in file order. Never raises for the file's
    content.
    """
    from live_trial.transcript.status import IDLE_TURN_COMPLETE, classify

    result = ReadResult(reached_start=False)
    cli_idle = isinstance(session_status, dict) and session_status.get("status") == "idle"
    newest: list[dict[str, Any]] = []            # newest first
    newest_message: str | None = None
    prompt_at: int | None = None
    checked = False
    walk = records_backwards(path, result, max_bytes=max_bytes, scan_max_bytes=scan_max_bytes)
    for rec in walk:
        if rec is None:                # a block boundary
            continue
        newest.append(rec)
        decided = False
        if prompt_at is None and is_human_prompt(rec):
            prompt_at = len(newest)
        if prompt_at is not None and len(newest) - prompt_at >= margin:
            decided = _tail_is_enough(newest[::-1], margin)
        elif rec.get("type") == "assistant" and rec.get("isSidechain") is not True and not (cli_idle or checked):
            mid = _message_id(rec)
            if newest_message is None:
                newest_message = mid
            elif mid != newest_message and prompt_at is None:
                # the newest assistant message is complete: decided unless it looks finished
                checked = True
                decided = classify(newest[::-1], session_status).state != IDLE_TURN_COMPLETE
        if decided:
            break
    walk.close()
    result.records = newest[::-1]
    result.reached_start = result.start_offset == 0
    return result
