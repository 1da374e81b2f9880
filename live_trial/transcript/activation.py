"""Which skill a session chose on its own, read from its transcript (README "Does it start by itself?";
references/transcript-jsonl.md "A skill the model picks on its own").

An activation prompt is pasted alone: nothing in it names a skill (unless its author wrote one). What the model did
with it is read mechanically from the records the CLI wrote, never from the session's words:

- a **Skill call**: an assistant ``tool_use`` named ``Skill`` whose ``input.skill`` is ``plugin:skill`` (or the bare
  ``skill``, or either with a leading ``/``), answered by a ``tool_result`` that is not an error. A bare name is the
  skill the CLI resolved it to: the ``isMeta`` user record that carries the skill's text starts
  ``Base directory for this skill: <dir>`` and names the call it follows (``sourceToolUseID``; both releases), and
  the next assistant record carries ``attributionSkill`` (the rule of :mod:`live_trial.transcript.skill_calls`);
- a **slash command** a person typed (``/plugin:skill args``): a user record whose content is
  ``<command-message>…</command-message>`` ``<command-name>/plugin:skill</command-name>`` ``<command-args>…``
  (one a line), followed by
  the same ``Base directory`` record (without ``sourceToolUseID``) when the CLI ran the skill;
- **when**: the assistant step of the call (0 = the first assistant message after the prompt, counted by message id as
  the scenario language counts ``step``) and the tools the turn used before it;
- the **skill listing** the model was shown: the first main-chain ``skill_listing`` attachment, ``names`` and
  ``content`` (one ``- name: description`` entry per skill; 2.1.332 adds per-skill ``digests``).

Reading only (:func:`read_choice` is pure over parsed records; :func:`choice_of` and :class:`TriggerWatch` read a
file through :mod:`live_trial.transcript.reader`).
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from live_trial.transcript.order import causal_order
from live_trial.transcript.reader import iter_records, read_from
from live_trial.transcript.records import message_content

#: How the CLI starts the text of a skill it runs (the ``isMeta`` record after a Skill call or a slash command).
BASE_DIR = "Base directory for this skill: "
SKILL_CALL, SLASH_COMMAND = "skill_call", "slash_command"
_COMMAND = re.compile(r"<command-name>/?([^<\s]+)</command-name>")


@dataclass(frozen=True)
class Invocation:
    """One skill the session invoked."""

    name: str                       #: the skill it resolved to (``plugin:skill``), else the name as called
    called_as: str                  #: the name as written in the call or the command (``greet``, ``hello:greet``)
    via: str                        #: ``skill_call`` | ``slash_command``
    succeeded: bool                 #: its tool_result is no error (a slash command: the CLI loaded the skill's text)
    step: int | None                #: the assistant step of the call (0-based); None for a slash command
    after_tools: tuple[str, ...]    #: the tools the turn used before it, in order


@dataclass(frozen=True)
class SkillListing:
    """The skill listing the model was shown (the ``skill_listing`` attachment), as the transcript records it."""

    names: tuple[str, ...]          #: every skill the model could call, as listed
    content: str                    #: the listing's text: ``- name: description`` per skill

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the listing's text and names."""
        raw = "\n".join(self.names) + "\n\n" + self.content
        return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def entries(self) -> dict[str, str]:
        """Each listed name's description as the listing shows it (its lines after ``- name: `` up to the next
        entry; the CLI escapes ``<`` and ``>`` as ``&lt;`` / ``&gt;``)."""
        found: dict[str, list[str]] = {}
        current: str | None = None
        heads = {f"- {n}: ": n for n in self.names} | {f"- {n}": n for n in self.names}
        for line in self.content.split("\n"):
            head = next((h for h in heads if line.startswith(h) and (line == h or h.endswith(": "))), None)
            if head is not None:
                current = heads[head]
                found[current] = [line[len(head):]]
            elif current is not None:
                found[current].append(line)
        return {n: "\n".join(lines).strip() for n, lines in found.items()}


@dataclass(frozen=True)
class Choice:
    """What a session's transcript says the model did with its prompt."""

    invocations: tuple[Invocation, ...] = ()    #: every skill invoked, in the order it happened
    steps: int = 0                              #: assistant messages after the prompt
    tools: tuple[str, ...] = ()                 #: every tool the turn used, in order
    listing: SkillListing | None = None         #: the skill listing the model was shown (None: none written)

    def invoked(self, target: str) -> Invocation | None:
        """The first successful invocation of ``target`` (``plugin:skill``), or None."""
        return next((i for i in self.invocations if i.succeeded and i.name == target), None)

    def others(self, target: str) -> tuple[str, ...]:
        """The other skills invoked successfully, each once, in order (a sibling chosen instead is named)."""
        out: list[str] = []
        for i in self.invocations:
            if i.succeeded and i.name != target and i.name not in out:
                out.append(i.name)
        return tuple(out)


@dataclass
class _Reading:
    """The state of one pass over a session's records (:func:`read_choice`)."""

    skill_dirs: Mapping[str, str]
    calls: list[tuple[str, str, int, tuple[str, ...]]] = field(default_factory=list)  # id, name, step, tools before
    results: dict[str, bool] = field(default_factory=dict)
    dirs: dict[str, str] = field(default_factory=dict)           # call id -> Base directory
    attributed: dict[str, str] = field(default_factory=dict)     # call id -> attributionSkill
    waiting: list[str] = field(default_factory=list)
    commands: list[list[Any]] = field(default_factory=list)       # [called as, skill dir, attributed] (None: unseen)
    messages: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    listing: SkillListing | None = None

    def feed(self, rec: Mapping[str, Any]) -> None:
        """Take one main-chain record, in the order they happened."""
        kind = rec.get("type")
        if kind == "attachment":
            self._attachment(rec.get("attachment"))
        elif kind == "assistant":
            self._assistant(rec)
        elif kind == "user":
            self._user(rec)

    def _attachment(self, att: Any) -> None:
        if self.listing is None and isinstance(att, dict) and att.get("type") == "skill_listing" \
                and isinstance(att.get("names"), list):
            self.listing = SkillListing(tuple(str(n) for n in att["names"]), str(att.get("content") or ""))

    def _assistant(self, rec: Mapping[str, Any]) -> None:
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        mid = str((msg or {}).get("id") or rec.get("uuid") or len(self.messages))
        if mid not in self.messages:
            self.messages.append(mid)
        attributed = rec.get("attributionSkill")
        if isinstance(attributed, str) and attributed:
            for use_id in self.waiting:
                self.attributed[use_id] = attributed.lstrip("/")
            if self.commands and self.commands[-1][2] is None:
                self.commands[-1][2] = attributed.lstrip("/")
        self.waiting = []
        content = message_content(rec)
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                name = str(block.get("name") or "?")
                if name == "Skill":
                    inp = block.get("input") if isinstance(block.get("input"), dict) else {}
                    skill = str((inp or {}).get("skill") or "").lstrip("/")
                    self.calls.append((str(block.get("id")), skill, len(self.messages) - 1, tuple(self.tools)))
                self.tools.append(name)

    def _user(self, rec: Mapping[str, Any]) -> None:
        content = message_content(rec)
        if isinstance(content, str) and (m := _COMMAND.search(content)) and "<command-message>" in content:
            self.commands.append([m.group(1).lstrip("/"), None, None])
            return
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                use_id = str(block.get("tool_use_id"))
                self.results[use_id] = block.get("is_error") is not True
                if self.results[use_id]:
                    self.waiting.append(use_id)
            elif block.get("type") == "text" and rec.get("isMeta") is True:
                text = str(block.get("text") or "")
                if text.startswith(BASE_DIR):
                    folder = text[len(BASE_DIR):].split("\n", 1)[0].strip()
                    source = rec.get("sourceToolUseID")
                    if isinstance(source, str) and source:
                        self.dirs[source] = folder
                    elif self.commands and self.commands[-1][1] is None:
                        self.commands[-1][1] = folder

    def resolved(self, called_as: str, folder: str | None, attributed: str | None) -> str:
        """The skill a call or command reached: its qualified name, else the skill of its Base directory, else the
        attributed one, else the name as called."""
        if ":" in called_as:
            return called_as
        if folder is not None:
            known = self.skill_dirs.get(_real(folder))
            if known:
                return known
        return attributed or called_as

    def choice(self) -> Choice:
        """The :class:`Choice` of what was fed."""
        out = []
        for called_as, folder, attributed in self.commands:
            out.append(Invocation(self.resolved(called_as, folder, attributed), called_as, SLASH_COMMAND,
                                  folder is not None or attributed is not None, None, ()))
        for use_id, called_as, step, before in self.calls:
            out.append(Invocation(self.resolved(called_as, self.dirs.get(use_id), self.attributed.get(use_id)),
                                  called_as, SKILL_CALL, self.results.get(use_id, False), step, before))
        return Choice(tuple(out), len(self.messages), tuple(self.tools), self.listing)


def _real(folder: str) -> str:
    try:
        return os.path.realpath(folder)
    except (OSError, ValueError):
        return folder


def read_choice(records: Iterable[Mapping[str, Any]], skill_dirs: Mapping[str, str] | None = None) -> Choice:
    """What the model did with its prompt (module docstring): every skill invoked with its step and the tools before
    it, and the skill listing it was shown. ``records``: a session's parsed records in file order (read in the order
    they happened, main chain only); ``skill_dirs``: resolved skill folder -> ``plugin:skill`` of the loaded plugins
    (a bare name is resolved through it). Pure; raises nothing."""
    reading = _Reading({_real(k): v for k, v in (skill_dirs or {}).items()})
    for rec in causal_order(records):
        reading.feed(rec)
    return reading.choice()


def _select(line: bytes) -> bool:
    """The lines :func:`read_choice` reads: messages, attachments of the listing, tool records."""
    return b'"assistant"' in line or b'"user"' in line or b"skill_listing" in line


def choice_of(paths: Iterable[str | os.PathLike[str]], skill_dirs: Mapping[str, str] | None = None) -> Choice:
    """:func:`read_choice` of the session's transcripts ``paths`` (in order), streamed."""
    records: list[dict[str, Any]] = []
    for path in paths:
        if Path(path).is_file():
            records += iter_records(path, select=_select)
    return read_choice(records, skill_dirs)


class TriggerWatch:
    """Whether ``target`` was invoked yet, looked at while the session runs (``stop_after_trigger``): each
    :meth:`look` reads only the bytes written since the last one (ARCHITECTURE invariant 9) and keeps only the
    records that can decide it (Skill calls, their results, the Base directory records, commands, attributions)."""

    def __init__(self, path: Callable[[], Path], target: str, skill_dirs: Mapping[str, str] | None = None) -> None:
        self.path, self.target = path, target
        self.skill_dirs = dict(skill_dirs or {})
        self.offset = 0
        self.file: Path | None = None
        self.kept: list[dict[str, Any]] = []

    def look(self) -> Invocation | None:
        """The first successful invocation of the target so far, or None."""
        path = self.path()
        if path != self.file:
            self.file, self.offset = path, 0
        records, self.offset = read_from(path, self.offset)
        self.kept += [r for r in records if _decides(r)]
        return read_choice(self.kept, self.skill_dirs).invoked(self.target)


def _decides(rec: Mapping[str, Any]) -> bool:
    """A record that can say the target was invoked (:class:`TriggerWatch`)."""
    if rec.get("type") == "assistant":
        content = message_content(rec)
        return bool(rec.get("attributionSkill")) or any(
            isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Skill"
            for b in (content if isinstance(content, list) else []))
    if rec.get("type") != "user":
        return False
    content = message_content(rec)
    if isinstance(content, str):
        return "<command-name>" in content
    return any(isinstance(b, dict) and (b.get("type") == "tool_result" or (
        rec.get("isMeta") is True and str(b.get("text") or "").startswith(BASE_DIR)))
        for b in (content if isinstance(content, list) else []))
