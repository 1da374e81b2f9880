"""The transcript as the evaluator sees it: one line per record, and what each record can show (README "Evidence,
watches and messages to a person"; seed 000 rule 1: the session's own words are claims, never evidence).

Each record with a uuid is one of:

- ``call``: an assistant record holding tool_use blocks; it shows something when one of its calls has a tool_result
  that is not an error (``ok``);
- ``result``: a user record holding tool_result blocks; ``ok`` when one of them is not an error;
- ``words``: an assistant record with only text or thinking (the session's own words: "DONE: ok", "report.md
  written"); never evidence;
- ``prompt``: a human prompt (the task, a nudge) or the skill's instructions the CLI adds (``isMeta``); never evidence;
- ``other``: system records, attachments, summaries.

A call and its result are one pair: the text a quote may come from (:attr:`RecordFacts.text`) is the pair's tool
inputs and tool results, never an assistant text block; :attr:`RecordFacts.body` is what counts of lines, rows and
keys are checked against: the content a Write call wrote, else the text of the call's result.

Pure: records in, data out.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from live_trial.judge.sources import source_path
from live_trial.transcript.records import message_content

#: Tools whose call writes the file named in its input (``file_path``, ``notebook_path``): the record of such a call
#: that writes only harness files stands for those files (:func:`live_trial.judge.citable.harness_files_of`).
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
HEAD_CHARS = 100


@dataclass(frozen=True)
class Wrote:
    """What one Write/Edit-like call wrote: ``path`` as the call gave it (absolute, as the CLI requires), ``tool``, and
    what the file must still hold at the end for the call to stand for it (README "Evidence"): ``whole`` the content a
    Write wrote (None for other tools), ``pieces`` the ``new_string`` of each Edit / MultiEdit edit."""

    path: str
    tool: str
    whole: str | None = None
    pieces: tuple[str, ...] = ()


def _wrote(block: dict) -> list[Wrote]:
    name, inp = block.get("name"), block.get("input")
    if not isinstance(name, str) or name not in WRITE_TOOLS or not isinstance(inp, dict):
        return []
    listed = inp.get("edits")
    edits: list[Any] = listed if name == "MultiEdit" and isinstance(listed, list) else [inp]
    pieces = tuple(str(e["new_string"]) for e in edits
                   if isinstance(e, dict) and isinstance(e.get("new_string"), str) and e["new_string"])
    whole = inp["content"] if name == "Write" and isinstance(inp.get("content"), str) else None
    return [Wrote(str(inp[k]), name, whole, () if name == "Write" else pieces)
            for k in ("file_path", "notebook_path") if isinstance(inp.get(k), str)]


@dataclass
class RecordFacts:
    """What one transcript record can show. ``kind``: call | result | words | prompt | other (module docstring);
    ``ok``: a call or result with a successful result; ``text``: where a quote may be found (tool inputs and results
    of the pair, whitespace kept); ``body``: what line, row and key counts are checked against (None when the record
    has none); ``writes``: workdir-relative files its Write/Edit calls write; ``wrote``: what each of those calls
    wrote (:class:`Wrote`)."""

    uuid: str
    kind: str
    ok: bool = False
    text: str = ""
    body: str | None = None
    writes: list[str] = field(default_factory=list)
    wrote: tuple[Wrote, ...] = ()


def _content(rec: dict) -> Any:
    return message_content(rec)


def _blocks(rec: dict, kind: str) -> list[dict]:
    content = _content(rec)
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if isinstance(content, list) else []


def result_text(block: dict) -> str:
    """The text of a tool_result block: its string content, or the text of its text blocks joined by newlines."""
    body = block.get("content")
    if isinstance(body, str):
        return body
    if isinstance(body, list):
        return "\n".join(str(b.get("text", "")) for b in body if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _leaves(node: Any) -> list[str]:
    """Every string inside ``node`` (dict values and list items, at any depth)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _leaves(v)]
    if isinstance(node, list):
        return [s for v in node for s in _leaves(v)]
    return []


def _input_text(block: dict) -> str:
    inp = block.get("input")
    return "\n".join([json.dumps(inp, ensure_ascii=False), *_leaves(inp)])


def _input_head(inp: Any, base: Path | None) -> str:
    """A tool input in short: a file path (relative to ``base`` when under it) or the JSON text."""
    if isinstance(inp, dict) and isinstance(inp.get("file_path"), str):
        path = inp["file_path"]
        if base is not None:
            try:
                path = str(Path(path).resolve().relative_to(base))
            except (ValueError, OSError):
                pass
        return path
    return json.dumps(inp, ensure_ascii=False)


def _workdir_path(path: str, base: Path | None) -> str:
    """``path`` relative to ``base`` (lexically, else after resolving symlinks) when it is under it; else as given."""
    if base is not None:
        rel = source_path(path, base)
        if rel is None:
            try:
                rel = Path(path).resolve().relative_to(Path(base).resolve()).as_posix()
            except (ValueError, OSError):
                rel = None
        if rel is not None:
            return rel
    return path


def _written_paths(block: dict, base: Path | None) -> list[str]:
    """The files a ``tool_use`` block of a :data:`WRITE_TOOLS` tool writes, relative to ``base`` when under it."""
    name = block.get("name")
    inp = block.get("input") if isinstance(name, str) and name in WRITE_TOOLS else None
    if not isinstance(inp, dict):
        return []
    return [_workdir_path(inp[k], base) for k in ("file_path", "notebook_path") if isinstance(inp.get(k), str)]


def _body(uses: list[dict], results: list[dict]) -> str | None:
    for use in uses:
        inp = use.get("input")
        if use.get("name") == "Write" and isinstance(inp, dict) and isinstance(inp.get("content"), str):
            return inp["content"]
    ok = [b for b in results if b.get("is_error") is not True]
    return result_text(ok[0]) if ok else None


#: The keys of a record the index and :func:`live_trial.transcript.order.causal_order` read.
INDEX_KEYS = ("type", "subtype", "uuid", "parentUuid", "timestamp", "isSidechain")


def index_fields(rec: Any) -> Any:
    """``rec`` cut to what :func:`read_index` and the causal order read (:data:`INDEX_KEYS` and
    ``message.content``): a transcript's records can be held for pairing without their copies of a tool's output
    (``toolUseResult`` repeats a Write's whole content), usage or metadata. Anything that is not a dict is returned
    as it is."""
    if not isinstance(rec, dict):
        return rec
    slim = {k: rec[k] for k in INDEX_KEYS if k in rec}
    msg = rec.get("message")
    if isinstance(msg, dict) and "content" in msg:
        slim["message"] = {"content": msg["content"]}
    return slim


def read_index(records: Iterable[dict], base: Path | None = None) -> tuple[list[dict], dict[str, RecordFacts]]:
    """``(rows, facts)`` for the records of a transcript (in the order they happened).

    ``rows``: one short line per record with a uuid, ``{uuid, type, tools, head, writes, cite}``; ``head`` is the
    start of the text, of the tool input (a file path relative to ``base`` when it is one) or of the tool result (paths
    under ``base`` written relative to it),
    whitespace collapsed, at most 100 characters; ``writes`` the files its Write/Edit/MultiEdit/NotebookEdit calls
    write (relative to ``base`` when under it), also on the record of their results; ``cite`` the record's kind
    (module docstring), ``ok`` whether it shows a successful call. ``facts``: :class:`RecordFacts` by lower-case
    uuid."""
    records = [r for r in records if isinstance(r, dict)]
    uses: dict[str, dict] = {}
    results: dict[str, dict] = {}
    for rec in records:
        for block in _blocks(rec, "tool_use"):
            if isinstance(block.get("id"), str):
                uses[block["id"]] = block
        for block in _blocks(rec, "tool_result"):
            results[str(block.get("tool_use_id"))] = block
    rows, facts = [], {}
    for rec in records:
        uuid = rec.get("uuid")
        if not isinstance(uuid, str):
            continue
        content = _content(rec)
        calls, answers = _blocks(rec, "tool_use"), _blocks(rec, "tool_result")
        pair_uses = calls + [uses[str(b.get("tool_use_id"))] for b in answers if str(b.get("tool_use_id")) in uses]
        pair_results = answers + [results[str(b.get("id"))] for b in calls if str(b.get("id")) in results]
        if calls:
            kind, ok = "call", any(results.get(str(b.get("id")), {"is_error": True}).get("is_error") is not True
                                   for b in calls)
        elif answers:
            kind, ok = "result", any(b.get("is_error") is not True for b in answers)
        elif rec.get("type") == "assistant":
            kind, ok = "words", False
        elif rec.get("type") == "user" and content is not None:
            kind, ok = "prompt", False
        else:
            kind, ok = "other", False
        writes = list(dict.fromkeys(p for b in pair_uses for p in _written_paths(b, base)))
        text = "\n".join([*(_input_text(b) for b in pair_uses), *(result_text(b) for b in pair_results)])
        facts[uuid.lower()] = RecordFacts(uuid, kind, ok, text if kind in ("call", "result") else "",
                                          _body(pair_uses, pair_results) if kind in ("call", "result") else None,
                                          writes, tuple(w for b in pair_uses for w in _wrote(b)))
        rows.append({"uuid": uuid,
                     "type": str(rec.get("type", "?")) + (f"/{rec['subtype']}" if rec.get("subtype") else ""),
                     "tools": [str(b.get("name")) for b in calls] + ["tool_result"] * len(answers),
                     "head": " ".join(_head(content, calls, answers, base).split())[:HEAD_CHARS],
                     "writes": writes, "cite": kind, "ok": ok})
    return rows, facts


def _head(content: Any, calls: list[dict], answers: list[dict], base: Path | None) -> str:
    if isinstance(content, str):
        return content
    if calls:
        return _input_head(calls[0].get("input"), base)
    if answers:
        body = answers[0].get("content")
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        # Paths under the workdir as the prompt names them (relative to it): a head cut at HEAD_CHARS then ends at
        # the same place in every run of the trial, whatever the workdir's own path (a tape's replay matches it).
        return text.replace(f"{base}/", "") if base is not None else text
    texts = [b for b in content if isinstance(b, dict) and b.get("type") == "text"] if isinstance(content, list) else []
    return str(texts[0].get("text", "")) if texts else ""


def index_records(records: Iterable[dict], base: Path | None = None) -> list[dict]:
    """The rows of :func:`read_index` (one short line per transcript record with a uuid)."""
    return read_index(records, base)[0]
