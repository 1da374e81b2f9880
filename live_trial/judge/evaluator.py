"""The fresh evaluator: a separate ``claude -p`` process that answers PASS or FAIL with blockers and evidence.

Seed 001 "goal verification (fresh evaluator)" and OUT1. The process has its own ``--session-id`` (never
--continue/--resume), runs in the trial's workdir with read-only tools (``--tools Read,Glob,Grep``), and answers
through ``--json-schema`` / ``--output-format json`` (the CLI offers a StructuredOutput tool; the parsed answer is
``structured_output`` in its stdout JSON, as observed on claude 2.1.197). A missing ``structured_output`` is a failure
even when the exit code is 0.

The request is :func:`live_trial.judge.prompt.build_prompt` (what the trial's session produced, never the harness's
workings); the answer is checked by :mod:`live_trial.judge.answer`; one retry carries the reason; then the goal is
FAIL with the blocker "insufficient evidence: <why>" when only the evidence failed to hold, else "the evaluator gave
no valid judgement". Request, answers and session ids are kept in ``<workdir>/evaluation.json`` (schema
``evaluation.schema.json``).

:func:`check_starter` builds the check-only evaluator that ``watch check`` starts for a due watch.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid as uuidlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from live_trial.clock import utc_now
from live_trial.errors import RefusedInput
from live_trial.jsonfile import write_json
from live_trial.judge import answer as ea
from live_trial.judge.child import die_with_parent
from live_trial.judge.context import Context, Produced
from live_trial.judge.evidence import check_evidence
from live_trial.judge.index import index_fields, read_index
from live_trial.judge.prompt import build_prompt, describe_files
from live_trial.session.containment import Container
from live_trial.session.containment import end as end_container
from live_trial.transcript.usage import cli_usage
from live_trial.workdir_files import TRANSCRIPT, Workdir

DEFAULT_TIMEOUT_S = 600.0
CHECK_TIMEOUT_S = 600.0
READ_ONLY_TOOLS = "Read,Glob,Grep"
MAX_RAW_CHARS = 4000
CHECK_SCHEMA: dict = {
    "type": "object",
    "required": ["result", "note"],
    "properties": {
        "result": {"type": "string", "enum": ["ok", "ng"]},
        "note": {"type": "string", "description": "what you saw, counted (e.g. '2 replies found in the log')"},
    },
}


@dataclass
class ProcessResult:
    """One finished (or killed) ``claude -p`` process. ``exit_code`` is None when it was killed at the timeout or
    because the harness was asked to stop (``stopped``: Ctrl-C or SIGTERM; ``timed_out`` is then True too, as the
    attempt's record keeps it)."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    stopped: bool = False

#: Why an evaluator killed because the harness was asked to stop gave no answer (never "did not answer in time").
STOPPED_WITH_THE_HARNESS = "the evaluator was stopped because the harness was asked to stop, so it gave no answer"


class Runner(Protocol):
    """What runs one ``claude -p`` to its end: ``argv``, the prompt on stdin, the folder it runs in, its whole
    environment and a deadline in seconds. :func:`run_process` is the real one; a test passes a fake."""

    def __call__(self, argv: list[str], stdin_text: str, cwd: Path, env: Mapping[str, str],
                 timeout_s: float) -> ProcessResult:
        """The finished (or, at the deadline, killed) process."""
        ...


def _kill_group(proc: subprocess.Popen, container: Container | None = None) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if container is not None:
        end_container(container)    # what the holder started, wherever it runs (a PID namespace, a cgroup)


def process_failure(result: ProcessResult) -> str | None:
    """Why the evaluator PROCESS failed, in plain words, or None when it ran and answered (well or badly).

    Failed: it did not answer within its time, was killed by a signal, or exited non-zero without writing a JSON result
    (a crash). README "Whose failure it is": that is the harness's failure (BLOCKED), never a judgement of the skill;
    an answer without usable evidence is a judgement (FAIL)."""
    if result.stopped:
        return STOPPED_WITH_THE_HARNESS
    if result.timed_out:
        return "the evaluator did not answer in time"
    if result.exit_code is not None and result.exit_code < 0:
        return f"the evaluator was killed by signal {-result.exit_code}"
    if result.exit_code not in (None, 0) and not (result.stdout or "").strip():
        tail = (result.stderr or "").strip().splitlines()[-1:] or ["no output"]
        return f"the evaluator exited with status {result.exit_code} without an answer: {tail[0][:200]}"
    return None


def unjudged_problem(doc: Mapping[str, Any]) -> str | None:
    """Why the evaluation ``doc`` (evaluation.json) judged nothing, or None when the evaluator judged (``judged_by``
    evaluator or insufficient_evidence: an answer whose evidence does not hold is a judgement, a FAIL). When every
    attempt's process failed (:func:`process_failure`, kept as the attempt's ``process_failure``), how each failed;
    else the last attempt's problems (the CLI's own line, e.g. ``error_max_structured_output_retries``). The one rule
    of ``run`` (BLOCKED ``evaluator_failed``, its note) and of ``verdict`` by hand (README "Whose failure it is")."""
    if doc.get("judged_by") != "fallback":
        return None
    attempts = [a for a in doc.get("attempts") or [] if isinstance(a, Mapping)]
    failures = [a.get("process_failure") for a in attempts]
    if attempts and all(failures):
        return "; ".join(dict.fromkeys(str(f) for f in failures))
    problems = (attempts[-1].get("problems") or []) if attempts else []
    return "its last attempt: " + ("; ".join(str(p) for p in problems)[:500] or "no answer")


def run_process(argv: list[str], stdin_text: str, cwd: Path, env: Mapping[str, str], timeout_s: float, *,
                should_stop: Callable[[], bool] | None = None, on_start: Callable[[int], None] | None = None,
                container: Container | None = None) -> ProcessResult:
    """Run ``argv`` in ``cwd`` with ``stdin_text`` on stdin in its own process group; return its
    :class:`ProcessResult`. With a ``container`` the process is its holder (:mod:`live_trial.session.holder`), which
    enters it before ``argv`` starts: everything the evaluator starts is held there (the caller ends it afterwards).

    The whole group (and the container) is killed at ``timeout_s`` seconds (``timed_out`` True), within a second of
    ``should_stop()`` turning true (the harness was asked to stop: ``timed_out`` True, ``stderr`` says so), within a
    second of the holder's own end (what it started must not keep its pipes open), and on any exception in this
    process (a second Ctrl-C), which is then re-raised; the process itself gets SIGKILL when the harness dies, even
    by SIGKILL (:func:`live_trial.judge.child.die_with_parent`): an evaluator is never left running on its own.
    ``on_start(pid)`` is called once it runs (the trial records it, so a resume or ``reap`` can find it). ``env``
    loses the nested- session variables (:data:`live_trial.session.environment.NESTED_VARS`), as the trial's claude
    does: run from inside a Claude Code session, ``claude -p`` would otherwise take itself for a nested session.
    Raises OSError when the process cannot be started.
    """
    from live_trial.session.environment import NESTED_VARS

    start = time.monotonic()
    clean_env = {k: v for k, v in env.items() if k not in NESTED_VARS}
    argv = container.wrap(argv) if container is not None else argv
    proc = subprocess.Popen(argv, cwd=str(cwd), env=clean_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                            start_new_session=True, preexec_fn=die_with_parent())
    if on_start is not None:
        try:
            on_start(proc.pid)
        except BaseException:
            _kill_group(proc)
            raise
    deadline = start + timeout_s
    talked: dict = {}

    def talk() -> None:           # the whole prompt in, all output out; ends when the process group is gone
        try:
            talked["out"] = proc.communicate(stdin_text)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            talked["error"] = exc

    talker = threading.Thread(target=talk, name="evaluator-io", daemon=True)
    talker.start()
    try:
        stopped = timed_out = False
        while talker.is_alive():
            talker.join(max(0.0, min(1.0, deadline - time.monotonic())))
            if not talker.is_alive():
                break
            stopped, timed_out = should_stop is not None and should_stop(), time.monotonic() >= deadline
            if stopped or timed_out or proc.poll() is not None:    # or its holder died, what it started holds the pipes
                _kill_group(proc, container)
                talker.join()
                break
    except BaseException:
        _kill_group(proc)
        talker.join(5)
        raise
    if "error" in talked:
        raise talked["error"]
    out, err = talked.get("out") or ("", "")
    if stopped or timed_out:
        note = "stopped: the harness was asked to stop\n" if stopped else ""
        return ProcessResult(None, out or "", note + (err or ""), True, time.monotonic() - start, stopped=stopped)
    return ProcessResult(proc.returncode, out, err, False, time.monotonic() - start)


def run_held(argv: list[str], stdin_text: str, cwd: Path, env: Mapping[str, str], timeout_s: float) -> ProcessResult:
    """:func:`run_process` in a container of its own (``watch-check-<hex>``, tagged with that name), ended and emptied
    when the process returns: a watch check's evaluator is held as a trial's is (README "Nothing left running")."""
    from live_trial.session import containment
    from live_trial.session.proctree import TAG_ENV

    name = f"watch-check-{uuidlib.uuid4().hex[:12]}"
    box = containment.create(name, env)
    try:
        return run_process(argv, stdin_text, cwd, {**env, TAG_ENV: name}, timeout_s, container=box)
    finally:
        containment.end(box)


def build_argv(claude_path: str, schema: dict, session_id: str, model: str | None = None) -> list[str]:
    """The evaluator's argv: print mode, JSON output, the answer schema, a fresh session id, read-only tools.

    No --continue/--resume; --setting-sources local, --strict-mcp-config and --disable-slash-commands keep the
    user's hooks, MCP servers and skills out of the judgement. The prompt goes on stdin (--tools is variadic).
    """
    argv = [claude_path, "-p", "--output-format", "json", "--json-schema", json.dumps(schema),
            "--session-id", session_id, "--tools", READ_ONLY_TOOLS, "--setting-sources", "local",
            "--strict-mcp-config", "--disable-slash-commands"]
    if model:
        argv += ["--model", model]
    return argv


def result_doc(result: ProcessResult) -> dict[str, Any] | None:
    """The JSON object the CLI printed (the whole stdout, else its last line that is one), None when there is none."""
    text = (result.stdout or "").strip()
    for candidate in [text] + text.splitlines()[::-1]:
        try:
            doc = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        return doc if isinstance(doc, dict) else None
    return None


def reported_usage(result: ProcessResult, model: str | None) -> dict[str, Any] | None:
    """What the CLI reported an attempt used: ``{by_model, cli_total_cost_usd}`` (evaluation.json, attempt ``usage``;
    :func:`live_trial.transcript.usage.cli_usage`), None when it printed no JSON result."""
    doc = result_doc(result)
    if doc is None:
        return None
    used, cost = cli_usage(doc, model)
    return {"by_model": used.to_doc()["by_model"], "cli_total_cost_usd": cost}


def parse_output(result: ProcessResult) -> tuple[Any, str | None, str | None]:
    """Return ``(structured_output or None, raw result text or None, error or None)`` from the CLI's stdout."""
    if result.stopped:
        return None, None, STOPPED_WITH_THE_HARNESS
    if result.timed_out:
        return None, None, "the evaluator did not answer in time"
    doc = result_doc(result)
    if not isinstance(doc, dict):
        tail = (result.stderr or result.stdout or "").strip().splitlines()[-1:] or ["no output"]
        return None, None, f"the CLI gave no JSON result (exit {result.exit_code}): {tail[0][:300]}"
    raw = doc.get("result") if isinstance(doc.get("result"), str) else None
    if doc.get("is_error"):
        errors = "; ".join(str(e) for e in doc.get("errors") or []) or (raw or doc.get("subtype") or "error")
        kind = doc.get("subtype") if doc.get("subtype") not in (None, "success") else None   # "success": no news
        return None, raw, f"the CLI reported an error{f' ({kind})' if kind else ''}: {errors[:300]}"
    if "structured_output" not in doc:
        return None, raw, "the evaluator answered without the structured output"
    return doc["structured_output"], raw, None


def build_context(workdir: Path, target: Any, produced: Produced | None = None) -> Context:
    """Collect what the evaluator is shown for a workdir: the promise (description, criteria), what the trial's
    session produced (``produced``, :func:`live_trial.trial.changes.session_output`; None = nothing), whether the
    completion marker is there, and the transcript index.

    The index lists the records in the order they happened (:func:`live_trial.transcript.order.causal_order`,
    subagent records included), not in line order, which the CLI does not keep for a session's first turn. The
    transcripts are each read once as a stream (a line over 1 MiB arrives as its summary, never parsed whole); the
    records are kept until each call is paired with its result, whose text a quote is checked against.
    """
    from live_trial.judge.citable import marker_status
    from live_trial.transcript.order import causal_order
    from live_trial.transcript.reader import iter_records

    workdir = Path(workdir).resolve()
    wd = Workdir.of(workdir)
    frontmatter = dict(getattr(target, "frontmatter", None) or {})
    skill_md = getattr(target, "skill_md", None)
    if not frontmatter and skill_md and Path(skill_md).is_file():
        from live_trial.closure.manifest import read_frontmatter
        frontmatter = read_frontmatter(Path(skill_md))
    judged, skipped = ea.split_criteria(frontmatter)
    name = getattr(target, "qualified", None) or str(target)
    produced = produced or Produced()
    description = " ".join(str(frontmatter.get("description", "")).split())
    ctx = Context(workdir=workdir, target=name, description=description, criteria=judged,
                     criteria_skipped=skipped, produced=produced, files=describe_files(workdir, produced),
                     marker_present=wd.marker.is_file(), marker_status=marker_status(workdir))
    tpath = wd.transcript
    if tpath.is_file():
        paths = wd.session_transcripts    # more than one when the session moved (/clear)
        records = [index_fields(r) for path in paths for r in iter_records(path)]
        ctx.transcript_path = TRANSCRIPT
        ctx.transcript_index, ctx.transcript_facts = read_index(causal_order(records, sidechains=True), workdir)
        ctx.transcript_uuids = {r["uuid"].lower() for r in ctx.transcript_index}
    from live_trial.session.activity_read import read_activity
    from live_trial.session.plugin_activity import activity_lines

    ctx.activity = dict(activity_lines(read_activity(workdir, frontmatter)))
    return ctx


def _claude_path(claude: Any, env: Mapping[str, str]) -> str:
    if claude is None:
        from live_trial.session.claude_bin import find_claude
        return find_claude(env=env).path
    return str(getattr(claude, "path", claude))


def _attempt(n: int, prompt: str, ctx: Context, claude_path: str, env: Mapping[str, str], model: str | None,
             timeout_s: float, runner: Runner, clock: Callable[[], str]) -> dict:
    session_id = str(uuidlib.uuid4())
    started = clock()
    result = runner(build_argv(claude_path, ea.ANSWER_SCHEMA, session_id, model), prompt, ctx.workdir, env, timeout_s)
    answer, raw, error = parse_output(result)
    checked = ea.Review(form=[error]) if error else ea.review(answer, ctx)
    return {"n": n, "session_id": session_id, "started_at": started, "duration_s": round(result.duration_s, 3),
            "exit_code": result.exit_code, "timed_out": result.timed_out, "request": prompt,
            "answer": answer if isinstance(answer, dict) else None,
            "raw_result": (raw or "")[:MAX_RAW_CHARS] or None,
            "stderr_tail": (result.stderr or "").strip()[-MAX_RAW_CHARS:] or None,
            "problems": checked.problems, "evidence_problems": checked.evidence, "dropped": checked.dropped,
            "valid": not checked.problems, "usage": reported_usage(result, model),
            "process_failure": process_failure(result), "_review": checked, "_stopped": result.stopped}


def evaluate(workdir: Path, target: Any, claude: Any, env: Mapping[str, str], *, produced: Produced | None,
             model: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, runner: Runner | None = None,
             clock: Callable[[], str] = utc_now) -> dict:
    """Judge the goal of the trial in ``workdir`` with a fresh evaluator; write and return evaluation.json.

    ``target``: closure.index.Target (qualified, frontmatter, skill_md) or a name. ``claude``: ClaudeBinary, a path,
    or None (find_claude). ``env``: the environment of the evaluator process (the rehearsal env in rehearsal).
    ``produced``: what the trial's session produced (:func:`live_trial.trial.changes.session_output`), the only files
    the evaluator may cite; None when nothing was recorded. ``timeout_s``: per attempt. Returns the evaluation dict:
    ``goal_result`` PASS|FAIL, ``blockers``, ``evidence`` [{claim, source, quote, observed}] (the items that hold),
    ``checks``, ``unverified`` (what the trial cannot show yet, for a PASS), ``attempts`` (request, answer, session
    id, problems each), ``judged_by`` evaluator | insufficient_evidence (the last answer's evidence did not hold:
    goal FAIL "insufficient evidence: <why>") | fallback (no valid answer: goal FAIL "the evaluator gave no valid
    judgement" in this document; the trial and ``evaluate`` read it as BLOCKED ``evaluator_failed``, nobody judged
    the goal), ``session_id`` (of the judging attempt). Never raises for a bad answer (that is a FAIL); raises
    Blocked when no claude is found and SchemaInvalid on a harness bug (nothing written then).
    """
    workdir = Path(workdir).resolve()
    if not workdir.is_dir():
        raise RefusedInput("the workdir does not exist", where=str(workdir), code="not_found")
    runner = runner or run_process
    claude_path = _claude_path(claude, env)
    ctx = build_context(workdir, target, produced)
    attempts: list[dict] = []
    reason = None
    for n in (1, 2):
        att = _attempt(n, build_prompt(ctx, reason), ctx, claude_path, env, model, timeout_s, runner, clock)
        attempts.append(att)
        if att["valid"] or att["_stopped"]:        # the harness was asked to stop: no second attempt
            break
        reason = "; ".join(att["problems"])
    last = attempts[-1]
    checked = last.pop("_review")
    for att in attempts:
        att.pop("_review", None)
        att.pop("_stopped", None)
    if last["valid"]:
        settled = ea.settle(last["answer"], ctx, checked)
        judged_by = "evaluator"
    else:
        # Only the evidence was wrong: the evaluator judged, but what it showed does not hold (README "Evidence").
        judged_by = "fallback" if checked.form else "insufficient_evidence"
        blocker = ea.NO_VALID_JUDGEMENT if checked.form else ea.insufficient(checked.evidence)
        settled = {"goal_result": "FAIL", "blockers": [blocker], "evidence": [], "unverified": [],
                   "checks": [{"id": c["id"], "result": "fail", "evidence": "not checked"} for c in ctx.criteria]}
    doc = {"version": 2, "workdir": str(workdir), "target": ctx.target, "description": ctx.description,
           "criteria": [{"id": c["id"], "text": c["text"]} for c in ctx.criteria],
           "criteria_skipped": [{"id": c["id"], "verify_by": str(c["verify_by"])} for c in ctx.criteria_skipped],
           "model": model, "judged_by": judged_by, "session_id": last["session_id"], **settled,
           "attempts": attempts, "finished_at": clock()}
    write_json(Workdir.of(workdir).evaluation, doc, "evaluation.schema.json")
    return doc


# ------------------------------------------------------------------------------ check-only (watches)

def check_prompt(watch: dict) -> str:
    """The check-only request for a due watch (seed 000 rule 3): read, count, look at logs; change and send nothing."""
    return "\n".join([
        "You are checking, with real data, whether something that was not confirmed yet has now happened.",
        "Rules: do not implement, fix, change or send anything. Only read files, count, and look at logs "
        "(Read, Glob, Grep). Listing or planning is not checking.",
        f"Objective: {watch['objective']}",
        f"Not confirmed yet: {watch['unverified']}",
        f"What was known when the watch started: {watch.get('evidence') or '(nothing)'}",
        "End with exactly one StructuredOutput call: result ok (it has happened: you saw it, counted) or ng "
        "(it has not, or you cannot see it), and a note saying what you saw, counted "
        "(for example '2 replies found in the log since Monday').",
    ])


def check_starter(env: Mapping[str, str] | None = None, claude: Any = None, *, model: str | None = None,
                  timeout_s: float = CHECK_TIMEOUT_S,
                  runner: Runner | None = None) -> Callable[[dict, Path], dict | None]:
    """Build the starter ``watch check`` uses: ``starter(watch, eval_root) -> {"result", "note"} | None``.

    Each call starts one ``claude -p`` (fresh session id, read-only tools, cwd = the watch's workdir when it
    exists, else the eval root) with :func:`check_prompt`. An "ok" whose note is only a proxy is not a
    confirmation: it is returned as None (no result). Errors of the process give None too.
    """
    env = dict(os.environ if env is None else env)
    run = runner or run_held

    def starter(watch: dict, eval_root: Path) -> dict | None:
        cwd = Path(watch.get("workdir") or "")
        cwd = cwd if watch.get("workdir") and cwd.is_dir() else Path(eval_root)
        argv = build_argv(_claude_path(claude, env), CHECK_SCHEMA, str(uuidlib.uuid4()), model)
        answer, _, error = parse_output(run(argv, check_prompt(watch), cwd.resolve(), env, timeout_s))
        if error or not isinstance(answer, dict) or answer.get("result") not in ("ok", "ng"):
            return {"error": error or "no ok/ng result"}
        note = str(answer.get("note") or "").strip()
        if not note:
            return {"error": "the check gave no note"}
        if answer["result"] == "ok":
            try:
                check_evidence("PASS", note, None)
            except RefusedInput as exc:
                return {"error": f"an ok without counted evidence is not a confirmation: {exc.problem}"}
        return {"result": answer["result"], "note": note}

    return starter
