"""The fresh evaluator's question and the rules its answer must meet (seed 001 "goal verification").

Pure: builds the prompt and the answer schema from data, and validates an answer against the workdir's
files and the transcript's record uuids. :mod:`live_trial.judge.evaluator` runs the process.

Answer shape (``ANSWER_SCHEMA``, sent to ``claude -p --json-schema``)::

    {"verdict": "PASS"|"FAIL", "blockers": [str],
     "evidence": [{"claim": str, "source": "<file under the workdir> | <transcript record uuid>",
                   "observed": "what was seen, counted"}],
     "checks": [{"id": "<criterion id>", "result": "pass"|"fail", "evidence": str}]}

Refused (one retry with the reason, then goal FAIL): a score, rating, grade, confidence or points field anywhere
(:func:`live_trial.judge.sources.is_score_key`); PASS without an evidence item; a source that is no file under the workdir
and no uuid of transcript.jsonl; PASS whose every item cites a file the harness writes
(:data:`live_trial.judge.sources.HARNESS_FILES`: the completion marker out/status.json, task.md, trial-state.json, ...,
under any spelling, or the transcript record of the Write/Edit call that wrote one: never evidence of the goal);
PASS with no item outside those whose observation counts something real (seed 000: launched, finished, tests passed,
"deployed 2 services" ... are proxies); FAIL without a blocker. Not refused but counted as a failed criterion: a
check with empty evidence, a missing check.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from live_trial.errors import RefusedInput
from live_trial.judge.evidence import check_evidence
from live_trial.judge.sources import (
    MARKER_SOURCE,
    harness_refusal,
    is_harness_path,
    is_score_key,
    score_fields,
    source_path,
    strip_location,
)

NO_VALID_JUDGEMENT = "the evaluator gave no valid judgement"
#: Tools whose call writes the file named in its input (``file_path``, ``notebook_path``): the record of such a call
#: that writes only harness files stands for those files (:func:`harness_files_of`).
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
EVALUATOR_VERIFY_BY = {"evaluator", "live-trial", None, ""}
MAX_FILE_PREVIEW_BYTES = 4000
MAX_PREVIEW_TOTAL_BYTES = 16000
MAX_INDEX_RECORDS = 400

ANSWER_SCHEMA: dict = {
    "type": "object",
    "required": ["verdict", "blockers", "evidence", "checks"],
    "properties": {
        "verdict": {"type": "string", "enum": ["PASS", "FAIL"],
                    "description": "PASS only when the promised result is really there"},
        "blockers": {"type": "array", "items": {"type": "string"},
                     "description": "what stands between the artifacts and the promise; at least one for FAIL"},
        "evidence": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["claim", "source", "observed"],
                "properties": {
                    "claim": {"type": "string", "description": "what this item shows"},
                    "source": {"type": "string",
                               "description": "a file path under the working directory, or a transcript record uuid"},
                    "observed": {"type": "string", "description": "what you saw there, counted"},
                },
            },
        },
        "checks": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "result", "evidence"],
                "properties": {
                    "id": {"type": "string"},
                    "result": {"type": "string", "enum": ["pass", "fail"]},
                    "evidence": {"type": "string"},
                },
            },
        },
    },
}


@dataclass
class Context:
    """What the evaluator is shown: the promise, the artifacts and the transcript index."""

    workdir: Path
    target: str
    description: str
    criteria: list[dict] = field(default_factory=list)
    criteria_skipped: list[dict] = field(default_factory=list)
    artifacts: list[dict] = field(default_factory=list)   # {path, bytes, preview|None}
    transcript_path: str | None = None
    transcript_index: list[dict] = field(default_factory=list)  # {uuid, type, tools, head, writes}
    transcript_uuids: set[str] = field(default_factory=set)


def split_criteria(frontmatter: dict) -> tuple[list[dict], list[dict]]:
    """Return (criteria for the evaluator, criteria left to tests/scripts) from ``feedback_contract.criteria``.

    Criteria whose ``verify_by`` is ``evaluator``, ``live-trial`` or absent are judged here; ``test`` and
    ``script`` criteria are verified elsewhere and only listed as skipped.
    """
    contract = frontmatter.get("feedback_contract") if isinstance(frontmatter, dict) else None
    items = contract.get("criteria") if isinstance(contract, dict) else None
    judged, skipped = [], []
    for item in items or []:
        if not isinstance(item, dict) or not item.get("id"):
            continue
        entry = {"id": str(item["id"]), "text": str(item.get("text", "")), "verify_by": item.get("verify_by")}
        (judged if entry["verify_by"] in EVALUATOR_VERIFY_BY else skipped).append(entry)
    return judged, skipped


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


ORDER_KEYS = ("parentUuid", "timestamp", "isSidechain")


def index_rows(records: Iterable[dict], base: Path | None = None) -> list[dict]:
    """One compact row per record, in the order given, read in one pass (``records`` may be a stream): the index
    fields of :func:`index_records` plus the keys :func:`live_trial.transcript.order.causal_order` sorts by
    (``uuid``, ``parentUuid``, ``timestamp``, ``isSidechain``). Rows without a uuid only carry an order. The records
    themselves are not kept, so a stream of any length costs one small row per record."""
    writes_of_call: dict[str, list[str]] = {}
    rows: list[dict] = []
    answered: list[tuple[dict, list]] = []      # rows whose writes also come from calls answered in them
    for rec in records:
        row = {k: rec[k] for k in ORDER_KEYS if k in rec}
        rows.append(row)
        content = (rec.get("message") or {}).get("content") if isinstance(rec.get("message"), dict) else None
        tools, head, parts = [], "", []
        if isinstance(content, str):
            head = content
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    tools.append(str(block.get("name")))
                    head = head or _input_head(block.get("input"), base)
                    written = _written_paths(block, base)
                    parts.append(written)
                    if isinstance(block.get("id"), str):
                        writes_of_call[block["id"]] = written
                elif block.get("type") == "tool_result":
                    tools.append("tool_result")
                    parts.append(str(block.get("tool_use_id")))
                    body = block.get("content")
                    head = head or (body if isinstance(body, str) else json.dumps(body, ensure_ascii=False))
                elif block.get("type") == "text":
                    head = head or str(block.get("text", ""))
        uuid = rec.get("uuid")
        if not isinstance(uuid, str):
            continue
        kind = str(rec.get("type", "?")) + (f"/{rec['subtype']}" if rec.get("subtype") else "")
        row.update(uuid=uuid, type=kind, tools=tools, head=" ".join(head.split(None, 100)[:100])[:100],
                   writes=[])
        answered.append((row, parts))
    for row, parts in answered:     # a call's writes stand for its result record too, wherever the call is
        writes: list[str] = []
        for part in parts:
            writes += writes_of_call.get(part, []) if isinstance(part, str) else part
        row["writes"] = list(dict.fromkeys(writes))
    return rows


def index_records(records: Iterable[dict], base: Path | None = None) -> list[dict]:
    """One short line per transcript record with a uuid: ``{uuid, type, tools, head, writes}``, in the order given.

    ``head`` is the start of the text, of the tool input (a file path relative to ``base`` when it is one)
    or of the tool result, whitespace collapsed, at most 100 characters. ``writes`` lists the files the record's
    Write/Edit/MultiEdit/NotebookEdit calls write (relative to ``base`` when under it), also on the record of their
    tool results; ``[]`` for any other record. ``records`` is read once (a stream is fine).
    """
    return [index_row(row) for row in index_rows(records, base) if "uuid" in row]


def index_row(row: dict) -> dict:
    """The index fields of a row of :func:`index_rows` (``{uuid, type, tools, head, writes}``)."""
    return {k: row[k] for k in ("uuid", "type", "tools", "head", "writes")}


def build_prompt(ctx: Context, retry_reason: str | None = None) -> str:
    """The evaluator's request: the promise, the artifacts, the transcript index and the answer rules."""
    lines = [
        "You are a fresh, independent evaluator of one run of a Claude Code skill. Judge only whether the result the "
        "skill promises is really there. Do not judge that it started, ran, finished or wrote a marker: those are not "
        "the goal. Do not change anything; use only Read, Glob and Grep.",
        "",
        f"Skill: {ctx.target}",
        f"What the skill promises (its description): {ctx.description or '(none given)'}",
    ]
    if ctx.criteria:
        lines += ["", "Criteria (give one check per id; a check without evidence counts as fail):"]
        lines += [f"- {c['id']}: {c['text']}" for c in ctx.criteria]
    lines += ["", f"Working directory (all file sources are relative to it): {ctx.workdir}",
              "Artifacts in out/:"]
    if not ctx.artifacts:
        lines.append("- (out/ is empty or missing)")
    for art in ctx.artifacts:
        lines.append(f"- {art['path']} ({art['bytes']} bytes)")
        if art.get("preview") is not None:
            lines += ["  content:", *("    " + ln for ln in art["preview"].splitlines()[:60])]
    if ctx.transcript_path:
        lines += ["", f"Transcript of the run: {ctx.transcript_path} (JSON lines; each record has a uuid).",
                  "Index of its records (uuid | type | tools | beginning):"]
        lines += [f"- {r['uuid']} | {r['type']} | {','.join(r['tools']) or '-'} | {r['head']}"
                  for r in ctx.transcript_index[:MAX_INDEX_RECORDS]]
        if len(ctx.transcript_index) > MAX_INDEX_RECORDS:
            lines.append(f"- ... {len(ctx.transcript_index) - MAX_INDEX_RECORDS} more records: read the file")
    else:
        lines += ["", "Transcript of the run: none was collected."]
    lines += [
        "",
        "Answer with the StructuredOutput tool: verdict PASS or FAIL; blockers (at least one for FAIL); evidence items "
        "{claim, source, observed} where source is a file path under the working directory or a transcript record "
        "uuid from the index, and observed says what you saw there, counted (for example '1 file written with 3 "
        "keys', '2 messages sent'); checks {id, result pass|fail, evidence} for each criterion.",
        "A PASS needs at least one evidence item that counts what the skill's promised action produced.",
        f"The completion marker {MARKER_SOURCE} is the harness's own file (every trial must write it): it is never "
        "evidence of the goal, and neither is the transcript record of the call that wrote it, nor any other file the "
        "harness writes (task.md, nudge-*.md, trial-state.json, trial-log.jsonl, poll-state.json, cwd-snapshot.json, "
        "evaluation.json, verdict.json, claude-config/). Cite an artifact the skill produced, or the transcript "
        "record that shows the outcome.",
        "Give no score, rating, grade or points of any kind: only PASS or FAIL and the blockers.",
    ]
    if retry_reason:
        lines += ["", f"Your previous answer was refused: {retry_reason}. Answer again, following the rules above."]
    return "\n".join(lines)


_is_score_key = is_score_key   # the evaluator's score-field rule is the one of --evidence (live_trial.judge.evidence)
_score_fields = score_fields


def _record_uuid(source: str) -> str | None:
    """The transcript record uuid ``source`` cites (``<uuid>`` or ``transcript.jsonl#<uuid>``), lower case; None
    when it cites a file."""
    src = (source or "").strip()
    match = UUID_RE.search(src)
    if match and (src == match.group(0) or "transcript" in src.lower()):
        return match.group(0).lower()
    return None


def source_exists(source: str, ctx: Context) -> bool:
    """True when ``source`` names a file under the workdir or a record uuid of the transcript."""
    src = (source or "").strip()
    if not src:
        return False
    uuid = _record_uuid(src)
    if uuid is not None:
        return uuid in ctx.transcript_uuids
    path_text = strip_location(src)
    root = ctx.workdir.resolve()
    candidate = Path(path_text)
    candidate = candidate if candidate.is_absolute() else root / candidate
    try:
        resolved = candidate.resolve()
    except OSError:
        return False
    return resolved.is_file() and (resolved == root or root in resolved.parents)


def _same_file_harness(candidate: Path, root: Path) -> list[str]:
    """The harness files ``candidate`` is the same file as (a hard link, another letter case on a case-insensitive
    disk), or lies under (a harness folder); [] when it is none or does not exist."""
    try:
        if not candidate.is_file():
            return []
        present = [p for p in root.iterdir() if is_harness_path(p.name)] + [root / MARKER_SOURCE]
        for path in present:
            if path.exists() and (path.samefile(candidate) or
                                  (path.is_dir() and any(path.samefile(a) for a in candidate.parents))):
                return [path.relative_to(root).as_posix()]
    except OSError:
        pass
    return []


def harness_files_of(source: str, ctx: Context) -> list[str]:
    """The files the harness writes (:data:`live_trial.judge.sources.HARNESS_FILES`, workdir-relative) that ``source``
    stands for; ``[]`` when it is evidence the harness did not make.

    A file source stands for a harness file under any spelling (``./out//status.json``, ``out/../out/status.json``,
    ``out/status.json:1``, ``<workdir>/out/status.json``), through a symlink or hard link, and in another letter case
    on a case-insensitive disk. A transcript record uuid stands for the files its Write/Edit calls (or their tool
    results) write when every file they write is a harness file (``writes`` of :func:`index_records`): the record
    writing the completion marker is the marker by another name; one that also writes an artifact is not."""
    uuid = _record_uuid(source)
    if uuid is not None:
        for row in ctx.transcript_index:
            if str(row.get("uuid", "")).lower() == uuid:
                writes = [source_path(w, ctx.workdir) or w for w in row.get("writes") or []]
                return writes if writes and all(is_harness_path(w) for w in writes) else []
        return []
    rel = source_path(source, ctx.workdir)
    if rel is not None and is_harness_path(rel):
        return [rel]
    text = strip_location(source)
    if not text:
        return []
    root = ctx.workdir.resolve()
    candidate = Path(text) if Path(text).is_absolute() else root / text
    try:
        resolved = candidate.resolve()
        rel = resolved.relative_to(root).as_posix()
    except (ValueError, OSError):
        return []
    return [rel] if is_harness_path(rel) else _same_file_harness(resolved, root)


def answer_problems(answer: Any, ctx: Context) -> list[str]:
    """Every reason the answer is refused (empty list = valid). See the module docstring for the rules."""
    if not isinstance(answer, dict):
        return ["the answer is not a JSON object"]
    problems = [f"a score-like field is not allowed ({p})" for p in score_fields(answer)]
    verdict = answer.get("verdict")
    if verdict not in ("PASS", "FAIL"):
        problems.append(f"verdict must be PASS or FAIL, not {verdict!r}")
    blockers = answer.get("blockers")
    evidence = answer.get("evidence")
    if not isinstance(blockers, list) or not all(isinstance(b, str) for b in blockers):
        problems.append("blockers must be a list of strings")
        blockers = []
    if not isinstance(evidence, list) or not all(isinstance(e, dict) for e in evidence):
        problems.append("evidence must be a list of {claim, source, observed} objects")
        evidence = []
    for i, item in enumerate(evidence):
        for key in ("claim", "source", "observed"):
            if not str(item.get(key) or "").strip():
                problems.append(f"evidence item {i} has an empty {key}")
        if str(item.get("source") or "").strip() and not source_exists(str(item["source"]), ctx):
            problems.append(f"evidence item {i} cites a source that does not exist: {item['source']!r} "
                            "(no such file under the working directory, no such uuid in the transcript)")
    if verdict == "PASS":
        if not evidence:
            problems.append("a PASS needs at least one evidence item")
        else:
            owned = [harness_files_of(str(e.get("source") or ""), ctx) for e in evidence]
            real = [e for e, files in zip(evidence, owned) if not files]
            if not real:
                refusal = harness_refusal([f for files in owned for f in files])
                problems.append(f"{refusal.problem}: {refusal.fix}")
            elif not any(_counted(str(e.get("observed") or "")) for e in real):
                problems.append("the evidence only names proxies (ran, finished, passed, launched, deployed, "
                                "running, written...) or counts the completion marker: name what happened, counted, "
                                "e.g. '1 file written with 3 keys'")
    if verdict == "FAIL" and not [b for b in blockers if b.strip()]:
        problems.append("a FAIL needs at least one blocker")
    checks = answer.get("checks", [])
    if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
        problems.append("checks must be a list of {id, result, evidence} objects")
    return problems


def _counted(observed: str) -> bool:
    try:
        return check_evidence("PASS", observed, None) == "done"
    except RefusedInput:
        return False


def settle(answer: dict, ctx: Context) -> dict:
    """Turn a valid answer into the goal result: criterion checks with empty evidence (or missing) count as fail.

    Returns ``{"goal_result", "blockers", "evidence", "checks"}``; a failed criterion makes a PASS a FAIL
    with one blocker per failed criterion.
    """
    given = {str(c.get("id")): c for c in answer.get("checks") or [] if isinstance(c, dict)}
    checks = []
    for crit in ctx.criteria:
        c = given.get(crit["id"])
        ev = str((c or {}).get("evidence") or "").strip()
        result = (c or {}).get("result") if ev else "fail"
        checks.append({"id": crit["id"], "result": "pass" if result == "pass" else "fail",
                       "evidence": ev or ("not checked" if c is None else "no evidence given")})
    blockers = [b.strip() for b in answer.get("blockers") or [] if b.strip()]
    for c in checks:
        if c["result"] == "fail":
            blockers.append(f"criterion {c['id']} failed: {c['evidence']}")
    goal = "PASS" if answer["verdict"] == "PASS" and all(c["result"] == "pass" for c in checks) else "FAIL"
    if goal == "FAIL" and not blockers:
        blockers = [NO_VALID_JUDGEMENT]
    evidence = [{k: str(e[k]) for k in ("claim", "source", "observed")} for e in answer.get("evidence") or []]
    return {"goal_result": goal, "blockers": blockers if goal == "FAIL" else [], "evidence": evidence,
            "checks": checks}
