"""Evidence items and their sources (seed 000 rule 1): what an item ``{claim, source, observed}`` may
cite, and the keys it may not carry.

- ``source`` is read one way (:func:`source_path`: ``:line`` suffix dropped, normalised, absolute paths inside the
  workdir made relative). The completion marker and every other file the harness writes itself
  (:data:`HARNESS_FILES`) are never evidence of the skill's goal: a PASS needs an item citing something else.
- Score, rating, grade or confidence keys are refused (:func:`score_fields`): a judgement is PASS or FAIL with what
  happened, never a number of merit.

Pure, like :mod:`live_trial.judge.evidence`: strings in, data out or :class:`RefusedInput`.
"""
from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from typing import Any, Callable

from live_trial import workdir_files as wf
from live_trial.errors import RefusedInput
from live_trial.judge.evidence import EXAMPLES_EN, check_evidence

#: Words that make a key a score field ("score", "overall_score", "qualityRating", "Grade", "confidence", "points"):
#: a judgement is PASS or FAIL with evidence, never a number of merit (README: "A score, rating or grade field is
#: refused"; seed 001, goal verification).
SCORE_WORDS = frozenset({"score", "scores", "scoring", "rating", "ratings", "rate", "grade", "grades", "grading",
                         "confidence", "confidences", "point", "points", "star", "stars", "mark", "marks", "percent",
                         "percentage", "pct"})
#: Score words still found when run together with other words without a separator ("qualityscore", "SELFCONFIDENCE").
_GLUED_SCORE_WORDS = ("score", "confidence")


def is_score_key(key: str) -> bool:
    """True for a key naming a score, rating, grade or confidence, case-insensitive: a word of :data:`SCORE_WORDS`
    once split on ``_``, ``-``, spaces, dots and camelCase (``quality_score``, ``qualityScore``, ``Overall-Rating``),
    or ``score`` / ``confidence`` inside one word (``qualityscore``). ``checkpoints`` and ``remarks`` are no score."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(key))
    words = re.split(r"[\s_.\-]+", spaced.lower())
    return any(w in SCORE_WORDS or any(g in w for g in _GLUED_SCORE_WORDS) for w in words if w)


def score_fields(node: Any, path: str = "") -> list[str]:
    """The paths (``/evidence/0/quality_score``) of every key in ``node`` (dicts and lists, at any depth) that
    :func:`is_score_key` calls a score; empty when there is none."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}/{key}"
            if is_score_key(str(key)):
                found.append(where)
            found += score_fields(value, where)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += score_fields(value, f"{path}/{i}")
    return found


def parse_evidence_items(evidence: str | None) -> list[dict] | None:
    """The evidence items of an ``--evidence`` given as a JSON list ``[{claim, source, observed}]``; None when
    ``evidence`` is plain text (does not start with ``[``). Raises :class:`RefusedInput` (``bad_evidence``) for
    malformed JSON, a non-object item or an item with an empty claim, source or observed, and (``score_field``) for
    an item with a score, rating, grade or confidence key at any depth (:func:`is_score_key`: ``score``,
    ``quality_score``, ``{"meta": {"Rating": 4}}``) instead of dropping it."""
    text = (evidence or "").strip()
    if not text.startswith("["):
        return None
    from live_trial.jsonfile import parse_json

    try:
        items: Any = parse_json(text)
    except ValueError as exc:
        raise RefusedInput(f"--evidence starts with '[' but is not a JSON list ({str(exc)[:200]})",
                           where="--evidence", code="bad_evidence",
                           fix='pass [{"claim": ..., "source": "<file under the workdir>|<transcript uuid>", '
                               '"observed": "<what was seen, counted>"}] or plain text') from None
    if not isinstance(items, list) or not items:
        raise RefusedInput("--evidence as JSON must be a non-empty list of {claim, source, observed}",
                           where="--evidence", code="bad_evidence", fix="give at least one evidence item")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise RefusedInput(f"evidence item {i} is not an object", where="--evidence", code="bad_evidence",
                               fix="each item is {claim, source, observed}")
        scores = score_fields(item, f"/{i}")
        if scores:
            raise RefusedInput(f"evidence item {i} has a score-like field ({', '.join(scores)}): a score, rating, "
                               "grade or confidence is no evidence", where="--evidence", code="score_field",
                               details={"fields": scores},
                               fix="drop the field and say in observed what happened, counted: " + EXAMPLES_EN)
        for key in ("claim", "source", "observed"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise RefusedInput(f"evidence item {i} has no {key}", where="--evidence", code="bad_evidence",
                                   fix="each item is {claim, source, observed}, none of them empty")
        out.append({k: item[k].strip() for k in ("claim", "source", "observed")})
    return out


#: Every file the harness itself writes in a trial's workdir, as workdir-relative POSIX patterns (``*`` stays within one
#: name; a final ``/**`` is everything under a folder; the names are :mod:`live_trial.workdir_files`'s). None of them is
#: evidence of the skill's goal: an evidence item citing one (under any spelling, see :func:`source_path`) counts for
#: nothing, and a PASS needs at least one item that cites something else. Where each is written: ``out/status.json``
#: the completion marker (the task makes every trial write it), ``task.md`` and ``nudge-<n>.md`` the text pasted into
#: the session (:mod:`live_trial.trial.start`, :mod:`live_trial.trial.loop`), ``trial-state.json`` /
#: ``trial-log.jsonl`` (:mod:`live_trial.trial.journal`), ``poll-state.json`` (:mod:`live_trial.trial.poll_state`),
#: ``cwd-snapshot.json`` (:mod:`live_trial.trial.folder_steps`), ``.trial.lock`` (:mod:`live_trial.trial.runner`),
#: ``records-seal.json`` (:mod:`live_trial.trial.seal`),
#: ``evaluation.json`` (:mod:`live_trial.judge.evaluator`), ``verdict.json`` (:mod:`live_trial.acceptance.verdict`),
#: ``claude-config/`` a rehearsal's isolated claude configuration (:mod:`live_trial.rehearsal.config`),
#: ``rehearsal-watches/`` the watch ledger of a rehearsal (:mod:`live_trial.notices.verdict_watch`: a scripted run
#: never writes eval-root's ledger), ``report.html`` (:mod:`live_trial.report.page`), ``claude-debug/`` the CLI's
#: debug log and ``mcp-fixtures.json`` the stand-in MCP servers (:mod:`live_trial.trial.activity`: what the CLI
#: recorded of the plugins is cited by its lines, ``plugin-activity#<id>``, never as a file), ``delivery.json``,
#: ``verdict-first.json``, ``improvement.json`` and ``ticket-<n>.md`` (:mod:`live_trial.delivery`). What the fresh
#: evaluator may cite is narrower still (:mod:`live_trial.judge.citable`): only the files the session created or
#: changed and the transcript records of its tool calls with their results.
HARNESS_FILES: tuple[str, ...] = (
    wf.MARKER_PATH, wf.TASK, wf.NUDGE_GLOB, wf.TRIAL_STATE, wf.TRIAL_LOG, wf.POLL_STATE, wf.CWD_SNAPSHOT,
    wf.TRIAL_LOCK, wf.RECORDS_SEAL, wf.EVALUATION, wf.VERDICT, f"{wf.CLAUDE_CONFIG}/**", f"{wf.REHEARSAL_WATCHES}/**",
    wf.REPORT, f"{wf.DEBUG_LOG_DIR}/**", wf.MCP_FIXTURES, wf.DELIVERY, wf.FIRST_VERDICT, wf.IMPROVEMENT,
    wf.TICKET.format("*"),
)
MARKER_ONLY = ("a PASS needs at least one evidence item whose source is not the completion marker (out/status.json is "
               "the harness's own contract file, written by every trial, so it shows nothing of the goal)")
HARNESS_ONLY = ("a PASS needs at least one evidence item whose source is not the completion marker or another file "
                "the harness itself writes (task.md, nudge-*.md, trial-state.json, trial-log.jsonl, poll-state.json, "
                "cwd-snapshot.json, evaluation.json, verdict.json, claude-config/: they show nothing of the goal)")
MARKER_FIX = "cite an artifact the skill produced, or the transcript record that shows the outcome"


def strip_location(source: str) -> str:
    """``source`` without a trailing line reference (``out/a.txt:3``, ``out/a.txt#L3-L5`` -> ``out/a.txt``)."""
    return re.sub(r"(?::\d+(?:-\d+)?|#L?\d+(?:-L?\d+)?)$", "", (source or "").strip())


def source_path(source: str, workdir: str | os.PathLike | None = None) -> str | None:
    r"""The workdir-relative POSIX path a file ``source`` names, spelled one way: the line reference stripped
    (:func:`strip_location`), ``\`` read as ``/``, ``os.path.normpath`` applied (``./out//status.json`` and
    ``out/../out/status.json`` -> ``out/status.json``), an absolute path inside ``workdir`` made relative to it.
    Returns None for an empty source and a path outside the workdir (``../x``, an absolute path elsewhere, any absolute
    path when ``workdir`` is None). Lexical only: symlinks are not followed (see
    :func:`live_trial.judge.citable.harness_files_of` for that)."""
    text = strip_location(source).replace("\\", "/")
    if not text:
        return None
    if posixpath.isabs(text):
        if workdir is None:
            return None
        text = posixpath.relpath(posixpath.normpath(text), posixpath.normpath(os.fspath(workdir).replace("\\", "/")))
    rel = posixpath.normpath(text)
    if rel in (".", "..") or rel.startswith("../") or posixpath.isabs(rel):
        return None
    return rel


def is_harness_path(rel: str | None) -> bool:
    """True when the workdir-relative path ``rel`` (as :func:`source_path` returns it) is one of
    :data:`HARNESS_FILES`."""
    if not rel:
        return False
    parts = rel.split("/")
    for pattern in HARNESS_FILES:
        pat = pattern.split("/")
        if pat[-1] == "**":
            if len(parts) >= len(pat) - 1 and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pat[:-1])):
                return True
        elif len(parts) == len(pat) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pat)):
            return True
    return False


def harness_files_named(source: str, workdir: str | os.PathLike | None = None) -> list[str]:
    """``[<workdir-relative path>]`` when the file ``source`` names is one the harness writes
    (:data:`HARNESS_FILES`, any spelling :func:`source_path` reads), else ``[]``. Lexical: an absolute path needs
    ``workdir``; transcript uuids and symlinks need the workdir's files (see
    :func:`live_trial.judge.citable.harness_files_of`)."""
    rel = source_path(source, workdir)
    return [rel] if rel and is_harness_path(rel) else []


def harness_refusal(files: list[str], where: str = "--evidence") -> RefusedInput:
    """The refusal of a PASS whose every evidence item cites a harness file; ``files`` are the workdir-relative
    harness files cited. ``code="marker_evidence"`` when they are all the completion marker, else
    ``code="harness_evidence"``."""
    cited = sorted(set(files))
    marker_only = cited == [wf.MARKER_PATH]
    return RefusedInput(f"{MARKER_ONLY if marker_only else HARNESS_ONLY} (every item cites: {', '.join(cited)})",
                        where=where, code="marker_evidence" if marker_only else "harness_evidence",
                        details={"harness_files": cited}, fix=MARKER_FIX)


def check_evidence_items(goal_result: str, items: list[dict], unverified: str | None,
                         source_exists: Callable[[str], bool],
                         harness_files: Callable[[str], list[str]] = harness_files_named) -> str:
    """:func:`check_evidence` for evidence items ``[{claim, source, observed}]`` (README: an item cites a file in
    the workdir or a transcript record uuid). Every item's source must exist (``source_exists``, supplied by the
    caller; checked whatever the goal result) and, for a PASS without ``unverified``, every ``observed`` must pass
    the proxy rule and at least one item must cite a source the harness did not write (``harness_files(source)``
    lists the :data:`HARNESS_FILES` a source stands for, ``[]`` for real evidence; ``code="marker_evidence"`` when
    only the completion marker is cited, ``"harness_evidence"`` when other harness files are). Items citing a harness
    file count for nothing: the counted observation must come from the others. Returns the ledger kind; raises
    :class:`RefusedInput` naming the item (and the missing source). Pure apart from ``source_exists`` and
    ``harness_files``."""
    for i, item in enumerate(items):
        if not source_exists(item["source"]):
            raise RefusedInput(f"evidence item {i} cites a source that does not exist: {item['source']!r}",
                               where="--evidence", code="evidence_source_missing", details={"source": item["source"]},
                               fix="cite a file under the workdir the skill produced or the uuid of a record "
                                   "in <workdir>/transcript.jsonl")
    is_pass = (goal_result or "").upper() == "PASS"
    owned = [harness_files(item["source"]) for item in items]
    real = [item for item, files in zip(items, owned) if not files]
    if is_pass and not (unverified or "").strip() and not real:
        raise harness_refusal([f for files in owned for f in files])
    for i, item in enumerate(items):
        try:
            check_evidence(goal_result, item["observed"], unverified)
        except RefusedInput as exc:
            raise RefusedInput(f"evidence item {i} ({item['source']}): {exc.problem}", where="--evidence",
                               code=exc.code, details=exc.details, fix=exc.fix) from None
    if not is_pass:
        return "not_done"
    return check_evidence(goal_result, "; ".join(item["observed"] for item in real or items), unverified)
