"""The fresh evaluator's request (seed 001 "goal verification"; README "Evidence, watches and messages to a person").

It shows what the trial's session produced and nothing of the harness's own workings: every file the session created
or changed in its own folder (workdir-relative copy, size, sha256, the first lines of a text file, bounded), the git
diff of the folder when there is one, the completion marker (for what it is: never evidence), the transcript index
(each record marked with what it can show), what the CLI recorded of the plugins' hooks and MCP servers (one citable
line each) and the rules of the answer. Never the scenario, the task text, the
harness's other files or any reasoning of the harness.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from live_trial.judge.context import Context, Produced
from live_trial.judge.quotes import MAX_QUOTE_CHARS
from live_trial.workdir_files import MARKER_PATH, SIDE_EFFECTS_COPIES_PATH

MAX_FILES_LISTED = 200
MAX_PREVIEW_LINES = 20
MAX_FILE_PREVIEW_BYTES = 2000
MAX_PREVIEW_TOTAL_BYTES = 16000
MAX_INDEX_RECORDS = 400
NOT_EVIDENCE = {"words": "the session's own words: never evidence",
                "prompt": "a prompt (the task, a nudge or the skill's instructions): never evidence",
                "other": "not a tool call: never evidence"}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def _preview(path: Path, budget: int) -> tuple[str | None, bool]:
    """``(first lines or None, binary)``: at most :data:`MAX_PREVIEW_LINES` lines and ``budget`` bytes of a text
    file; None with binary True for a file holding a NUL byte or no UTF-8."""
    with open(path, "rb") as fh:
        data = fh.read(min(MAX_FILE_PREVIEW_BYTES, max(budget, 0)) + 1)
    if b"\0" in data:
        return None, True
    cut = data[:min(MAX_FILE_PREVIEW_BYTES, max(budget, 0))]
    try:
        text = cut.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(cut) - 3:
            return None, True
        text = cut[:exc.start].decode("utf-8")
    return "\n".join(text.splitlines()[:MAX_PREVIEW_LINES]), False


def describe_files(workdir: Path, produced: Produced) -> list[dict]:
    """``[{path, bytes, sha256, preview, binary}]`` for the session's files (and the git diff) in ``produced``, the
    previews within :data:`MAX_PREVIEW_TOTAL_BYTES` in all. Files that vanished are left out."""
    out, budget = [], MAX_PREVIEW_TOTAL_BYTES
    for rel in [*produced.files[:MAX_FILES_LISTED], *([produced.diff] if produced.diff else [])]:
        path = Path(workdir) / rel
        try:
            size = path.stat().st_size
            preview, binary = _preview(path, budget)
            entry = {"path": rel, "bytes": size, "sha256": _sha256(path), "preview": preview, "binary": binary}
        except OSError:
            continue
        budget -= len((preview or "").encode("utf-8"))
        out.append(entry)
    return out


def _file_lines(ctx: Context) -> list[str]:
    produced = ctx.produced
    lines = ["", "Files the trial's session created or changed in its own working folder (copies taken at the end of "
                 "the trial; each may be cited by the path shown):"]
    listed = [f for f in ctx.files if f["path"] != produced.diff]
    if not listed:
        lines.append("- none: the session created or changed no file in its working folder")
    for f in listed:
        lines.append(f"- {f['path']} | {f['bytes']} bytes | {f['sha256']}")
        if f["binary"]:
            lines.append("    (binary: not shown)")
        elif f["preview"] is not None:
            lines += ["    first lines:", *("    | " + ln for ln in f["preview"].splitlines())]
    more = len(produced.files) - len(listed)
    if more > 0:
        lines.append(f"- ... {more} more files under {SIDE_EFFECTS_COPIES_PATH}/ (use Glob)")
    if produced.changed > len(produced.files):
        lines.append(f"- {produced.changed - len(produced.files)} more files were created or changed but were too "
                     "large to copy (over 1 MB): they cannot be cited")
    diff = next((f for f in ctx.files if f["path"] == produced.diff), None)
    if diff is not None:
        lines += ["", f"Git diff of the working folder against its state when the trial started (never against HEAD): "
                      f"{diff['path']} | {diff['bytes']} bytes | {diff['sha256']}"]
        if diff["preview"]:
            lines += ["    first lines:", *("    | " + ln for ln in diff["preview"].splitlines())]
    if produced.folder:
        lines.append(f"Its working folder is {produced.folder}/: a file there counts only when it is listed above "
                     f"(cite it as listed, or as {produced.folder}/<path>); everything else there was there before.")
    return lines


def _marker_lines(ctx: Context) -> list[str]:
    """The completion marker for what it is: the harness's contract file, and in it the session's own report of
    itself (its status shown as it said it), which is never evidence either way."""
    state = "present" if ctx.marker_present else "missing"
    if ctx.marker_status is not None:
        state += f'; in it the session reported its own status as "{ctx.marker_status}"'
    lines = ["", f"Completion marker: {MARKER_PATH} ({state}). It is the harness's own contract file, written by every "
                 "trial: never evidence, nor are its status and its summary. The task allows nothing else in out/."]
    if ctx.marker_status is not None:
        lines.append("The status is the session's own word about itself: a session that says ok may have missed the "
                     "goal, and one that says it failed may have reached it. Judge by the evidence alone.")
    return lines


def _index_lines(ctx: Context) -> list[str]:
    if not ctx.transcript_path:
        return ["", "Transcript of the run: none was collected."]
    lines = ["", f"Transcript of the run: {ctx.transcript_path} (JSON lines; each record has a uuid).",
             "Index of its records (uuid | type | tools | beginning):"]
    for r in ctx.transcript_index[:MAX_INDEX_RECORDS]:
        note = NOT_EVIDENCE.get(r.get("cite", ""))
        if r.get("cite") in ("call", "result") and not r.get("ok"):
            note = "no successful result: never evidence"
        head = "" if r.get("cite") == "prompt" else r["head"]      # the harness's task and nudges are not shown
        lines.append(f"- {r['uuid']} | {r['type']} | {','.join(r['tools']) or '-'} | {head}"
                     + (f" | ({note})" if note else ""))
    if len(ctx.transcript_index) > MAX_INDEX_RECORDS:
        lines.append(f"- ... {len(ctx.transcript_index) - MAX_INDEX_RECORDS} more records: read the file")
    return lines


def _activity_lines(ctx: Context) -> list[str]:
    if not ctx.activity:
        return []
    return ["", "What the CLI recorded of the plugins' hooks and MCP servers in this session (its debug log and "
                "transcript, never the session's words); each line may be cited as plugin-activity#<id>:",
            *(f"- plugin-activity#{key} | {line}" for key, line in ctx.activity.items())]


def build_prompt(ctx: Context, retry_reason: str | None = None) -> str:
    """The evaluator's request: the promise, what the session produced, the transcript index and the answer rules."""
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
    lines += ["", f"Working directory (every path is relative to it): {ctx.workdir}"]
    lines += _file_lines(ctx)
    lines += _marker_lines(ctx)
    lines += _index_lines(ctx)
    lines += _activity_lines(ctx)
    lines += [
        "",
        "Answer with the StructuredOutput tool: verdict PASS or FAIL; blockers (at least one for FAIL); evidence items "
        "{claim, source, quote, observed}; checks {id, result pass|fail, evidence} for each criterion; unverified: "
        "what this trial cannot show yet (for example 'the email arrives at the customer'), or [] when nothing.",
        "What counts as evidence, and nothing else: a file the session created or changed (a path listed above, or "
        "the git diff), the transcript record of a tool call with its successful result (its uuid from the index, "
        "the call or its result; a Write or Edit call only while the file it wrote is listed above and still holds "
        "what it wrote), or a line of the plugins' hooks and MCP servers listed above (plugin-activity#<id>). Never "
        "evidence: the session's own words (assistant text, the DONE line, the "
        "marker's summary), transcript.jsonl, subagents/ or pane.txt as files, out/, the harness's files (task.md, "
        "nudge-*.md, trial-state.json, trial-log.jsonl, poll-state.json, cwd-snapshot.json, evaluation.json, "
        "verdict.json, claude-config/, claude-debug/, side-effects/files.json) and any file of the working folder not "
        "listed above.",
        f"quote: a short verbatim piece (at most {MAX_QUOTE_CHARS} characters) copied from the cited file, from the "
        "changed lines of the git diff, from the cited call's input or result, or from the cited plugin activity "
        "line. It is checked: it must be there.",
        "observed: what you saw there, counted (for example '1 file with 3 lines', '2 messages sent'). Counts of "
        "lines, rows, keys and files are checked against the source: state a part as 'N of M' ('9 of 10 rows "
        "dated'); 'N files' counts the files the session created or changed.",
        "A PASS needs at least one evidence item that counts what the skill's promised action produced. A PASS with "
        "unverified items means mostly done: what could be shown is shown, the rest is watched later.",
        "Give no score, rating, grade, confidence or points of any kind, in no field, neither in words nor in "
        "symbols ('quality 8 out of 10', '8/10', 'B+ grade', '85% complete', '完成度85%'): only PASS or FAIL and the "
        "blockers.",
    ]
    if retry_reason:
        lines += ["", f"Your previous answer was refused: {retry_reason}. Answer again, following the rules above."]
    return "\n".join(lines)
