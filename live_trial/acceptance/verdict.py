"""``verdict.json``: one trial's verdict document, built from its facts, checked and written against
``schemas/live-trial-verdict.schema.json`` (seed 001 "verdict + 掃除"; README "What a trial leaves behind").

The overall word comes from :mod:`live_trial.acceptance.overall`; the tier and the grounding of a contractual gate
from :mod:`live_trial.acceptance.tier`; the line per criterion from :mod:`live_trial.acceptance.criteria`. Also here:
the line per answered question, the actual model (the proof gate's input), the task contract's ``scenario_id``, the
environment versions and the behaviour closure recorded for reuse.

Version ``live-trial-verdict/2`` (written now) adds ``criteria`` and ``gate_answers`` and is judged under the evidence
rules of README "Evidence, watches and messages to a person" (the session's own words never count, each item's quote
and counts checked). ``live-trial-verdict/1`` documents are still read; plan never reuses such a PASS.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from live_trial.acceptance.causes import blocked_reason
from live_trial.acceptance.origin import check_state_target, is_rehearsal_reply, workdir_origin
from live_trial.acceptance.overall import (
    GATE_KINDS,
    POLL_EXITS,
    RESULTS,
    Judgement,
    VerdictInputs,
    judge,
    normalise_gate_kind,
    summary_gate_kind,
)
from live_trial.acceptance.tier import contract_evidence
from live_trial.errors import RefusedInput
from live_trial.jsonfile import parse_json, utc_now, write_json
from live_trial.transcript.reader import hashed_fold

SCHEMA = "live-trial-verdict.schema.json"


SCHEMA_VERSION = "live-trial-verdict/2"


#: Verdicts judged under the older evidence rules: still read, never reused by plan.
OLDER_SCHEMA_VERSIONS = ("live-trial-verdict/1",)


VERDICT_FILE = "verdict.json"


TRANSCRIPT_FILE = "transcript.jsonl"


EVALUATION_FILE = "evaluation.json"


ORIGINS = ("live", "rehearsal")


def actual_models(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Unique ``message.model`` of main-chain assistant records, without ``<synthetic>`` (delegates to transcript)."""
    from live_trial.transcript.records import main_chain_assistant_models

    return main_chain_assistant_models(records)


def may_hold_assistant(line: bytes) -> bool:
    """False only for a transcript line that cannot be an assistant record (no ``assistant`` and no ``\\u``
    escape that could spell it): such lines are not parsed when the actual model is read."""
    return b"assistant" in line or b"\\u" in line


def sha256_file(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    with open(path, "rb") as fh:
        return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()


def scenario_id(target: str, args: str = "", scenario_path: Path | None = None, template_text: str | None = None) -> str:
    """``sha256:<hex>`` of the task contract: the task template, the target, the args, and (rehearsal) the scenario file.

    A change to any of them makes old verdicts non-reusable (seed 001: change scenario_id with the contract).
    """
    if template_text is None:
        from live_trial.resources import read_reference

        template_text = read_reference("task-template.md")
    scenario = None
    if scenario_path is not None:
        scenario = sha256_file(Path(scenario_path))
    contract = {"template": hashlib.sha256(template_text.encode("utf-8")).hexdigest(), "target": target,
                "args": args or "", "scenario": scenario}
    return "sha256:" + hashlib.sha256(json.dumps(contract, sort_keys=True).encode("utf-8")).hexdigest()


def environment(claude_version: str | None = None, tmux_version: str | None = None) -> dict:
    """Versions only (claude, tmux, python, platform) — never environment variables or keys."""
    import platform as _platform

    if tmux_version is None:
        try:
            from live_trial.session.backend import Backend

            tmux_version = Backend().tmux_version()
        except Exception:  # noqa: BLE001 - a missing tmux is recorded as null, not an error here
            tmux_version = None
    return {"claude_version": claude_version, "tmux_version": tmux_version,
            "python": _platform.python_version(), "platform": _platform.platform(terse=True)}


def _check_choice(value: Any, choices: tuple, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if value not in choices:
        raise RefusedInput(f"{name} must be one of {', '.join(choices)} (got {value!r})", where=name, code="bad_value",
                           fix=f"pass {name} {'|'.join(choices)}")


def _check_count(value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RefusedInput(f"{name} must be a whole number >= 0 (got {value!r})", where=name, code="bad_value")


def _evidence_items(items: Iterable[Mapping[str, Any]] | None) -> list[dict]:
    out = []
    for item in items or ():
        keys = ("claim", "source", "quote", "observed") if item.get("quote") else ("claim", "source", "observed")
        out.append({k: str(item.get(k, "")) for k in keys})
    return out


def gate_answer_rows(answers: Iterable[Mapping[str, Any]] | None, count: int, kind: str) -> list[dict]:
    """One line per answered question ``[{n, question, options, answer, kind}]``: ``answers`` as the trial recorded
    them, or, when None (``verdict`` by hand knows only the count), ``count`` lines of ``kind`` whose question is
    unknown. Raises :class:`RefusedInput` when the lines and ``count`` disagree or a kind is not rescue/contractual."""
    if answers is None:
        answers = [{"question": None, "options": [], "answer": None, "kind": kind} for _ in range(count)]
    rows = []
    for n, a in enumerate(answers, 1):
        _check_choice(a.get("kind"), GATE_KINDS, f"gate answer {n} kind")
        rows.append({"n": n, "question": a.get("question"), "options": [str(o) for o in a.get("options") or []],
                     "answer": a.get("answer"), "kind": a["kind"]})
    if len(rows) != count:
        raise RefusedInput(f"{len(rows)} gate answer line(s) for a gate response count of {count}",
                           where="--gate-response-count", code="bad_value", fix="record one line per answer")
    return rows


def _evaluation_checks(workdir: Path) -> list[dict] | None:
    """The criterion checks the evaluator recorded in ``<workdir>/evaluation.json``; None when there is none."""
    path = workdir / EVALUATION_FILE
    try:
        checks = parse_json(path.read_text(encoding="utf-8")).get("checks") if path.is_file() else None
    except (OSError, ValueError, AttributeError):
        return None
    return checks if isinstance(checks, list) else None


def _closure_fields(target: Any, plugins_root: Path | None, at_boot: Mapping[str, Any] | None,
                    notes: list[str]) -> tuple[str, list[str], int]:
    """``(digest, plugin names, file count)`` for the verdict: the boot-time closure when known, else now's.
    Appends a note to ``notes`` when the files changed since boot or the closure cannot be built any more."""
    from live_trial.closure.manifest import ClosureError
    from live_trial.closure.pinning import pin

    try:
        now = pin(target, plugins_root)
    except ClosureError as exc:
        if not at_boot:
            raise
        notes.append(f"the behaviour closure can no longer be built ({exc.message}); the verdict records the "
                     "closure pinned when the trial started")
        return str(at_boot["digest"]), [str(n) for n in at_boot["plugins"]], int(at_boot["file_count"])
    if not at_boot:
        return now.digest, [p.name for p in now.plugins], len(now.files)
    if now.digest != at_boot["digest"]:
        notes.append(f"the skill's files changed during the trial: the verdict records the closure tested "
                     f"({at_boot['digest'][:19]}), not the files now ({now.digest[:19]}), which need a new trial")
    return str(at_boot["digest"]), [str(n) for n in at_boot["plugins"]], int(at_boot["file_count"])


def build_verdict(*, workdir: Path, target: Any, plugins_root: Path | None, session_id: str | None,
                  requested_model: str | None, launch: str, completion: str, goal_result: str | None,
                  nudge_count: int = 0, gate_response_count: int = 0, gate_kind: str = "rescue",
                  poll_exit: str | None = None, proof: bool = False, blocked: bool = False,
                  scenario_origin: str = "live", scenario_path: Path | None = None, args: str = "",
                  goal_blockers: Iterable[str] = (), evidence: Iterable[Mapping[str, Any]] | None = None,
                  evidence_text: str | None = None, unverified: str | None = None, goal_ledger: str | None = None,
                  claude_version: str | None = None, tmux_version: str | None = None,
                  stop_reason: str | None = None, stall_row: int | None = None, failure_reason: str | None = None,
                  notes: Iterable[str] = (), warnings: Iterable[str] = (), started_at: str | None = None,
                  watch_id: str | None = None, closure_at_boot: Mapping[str, Any] | None = None,
                  working_folder: Mapping[str, Any] | None = None,
                  gate_answers: Iterable[Mapping[str, Any]] | None = None,
                  criteria_checks: Iterable[Mapping[str, Any]] | None = None,
                  not_judged_why: str | None = None, summarise: Callable[[dict], str] | None = None) -> dict:
    """Build (not write) a verdict document, checking every rule first. Raises :class:`RefusedInput` (exit 2) for
    a denylisted target, a bad value, an ungrounded ``contractual``, a target other than the one the workdir's
    ``trial-state.json`` records, or an unreadable ``trial-state.json``; :class:`~live_trial.closure.manifest.ClosureError`
    when the behaviour closure cannot be built. ``target`` is a :class:`~live_trial.closure.index.Target` or a string.

    ``scenario_origin`` is checked against the workdir (:func:`live_trial.acceptance.origin.workdir_origin`): a rehearsal
    workdir is always recorded ``rehearsal`` — a caller's ``live`` is overridden with a note (not refused: the
    workdir decides, and the override can only make the verdict less reusable, never more) and the scenario path
    is taken from ``trial-state.json`` when the caller gave none.

    ``closure_at_boot`` (``{"digest", "plugins", "file_count", ...}``, trial-state.json ``closure``): the
    behaviour closure pinned when the trial started. The verdict records that one — what was really tested — so a
    skill edited during the trial is not recorded (and later reused) as tested; a note says when the files differ
    now or the closure can no longer be built (then no ClosureError is raised: the trial did run).

    ``working_folder`` (``{"form", "path", "source", "removed"}``, from trial-state.json ``folder``): the trial's own
    folder, recorded as ``working_folder`` when given.

    ``gate_answers`` (``[{question, options, answer, kind}]`` in the order answered, kind rescue|contractual): one
    line per answered question (:func:`gate_answer_rows`; None = ``gate_response_count`` answers of ``gate_kind``);
    the overall uses each answer's kind, and any contractual answer must be grounded in the frontmatter.
    ``criteria_checks``: the evaluator's ``[{id, result, evidence}]`` (None: those of the workdir's evaluation.json,
    if any), turned into one line per criterion (:func:`live_trial.acceptance.criteria.criteria_table`);
    ``not_judged_why`` says why the evaluator's criteria were not judged when there are no checks.

    ``overall.reasons`` of a verdict that is not a PASS ends with the real cause in the words of whoever saw it
    (:func:`cause_lines`): the evaluator's blockers, why the evaluator could not judge, ``failure_reason`` and the
    notes recorded with the stop. ``summarise(doc) -> str``: the one sentence in the message language saying what
    happened (``summary``; :func:`live_trial.notices.outcome.summary`), given by the caller that knows the language."""
    from live_trial.acceptance.criteria import criteria_table  # loads the judge's answer reader: not for plan
    from live_trial.acceptance.tier import derive_tier
    from live_trial.closure.index import Target
    from live_trial.closure.target import resolve_target
    from live_trial.session.rules import check_target_allowed

    qualified = target.qualified if isinstance(target, Target) else str(target)
    check_target_allowed(qualified)
    for value, choices, name in ((launch, RESULTS, "--launch"), (completion, RESULTS, "--completion"),
                                 (gate_kind, GATE_KINDS, "--gate-kind"), (scenario_origin, ORIGINS, "scenario_origin")):
        _check_choice(value, choices, name)
    _check_choice(goal_result, RESULTS, "--goal-result", optional=True)
    _check_choice(poll_exit, POLL_EXITS, "--poll-exit", optional=True)
    _check_count(nudge_count, "--nudge-count")
    _check_count(gate_response_count, "--gate-response-count")
    workdir = Path(workdir).resolve()
    if not workdir.is_dir():
        raise RefusedInput("workdir is not a folder", where=str(workdir), code="bad_workdir",
                           fix="pass the trial's workdir eval-log/<plugin>/<skill>/live-trial/<run-id>")
    if not isinstance(target, Target):
        target = resolve_target(qualified, plugins_root)  # type: ignore[arg-type]
    transcript = workdir / TRANSCRIPT_FILE
    transcript_sha, models, scripted = None, [], [False]

    def fold(rec: Mapping[str, Any]) -> None:
        models.extend(m for m in actual_models([rec]) if m not in models)
        scripted[0] = scripted[0] or is_rehearsal_reply(rec)
    if transcript.is_file():      # one pass each: the hash, the actual model and the rehearsal server's replies
        from live_trial.judge.sources import MOVED_FROM_DIR
        from live_trial.transcript.reader import iter_records

        for path in sorted((workdir / MOVED_FROM_DIR).glob("*.jsonl")):   # every transcript of the session
            for rec in iter_records(path, select=may_hold_assistant):
                fold(rec)
        transcript_sha = hashed_fold(transcript, fold, select=may_hold_assistant)
    found = workdir_origin(workdir, scripted=lambda _: scripted[0])
    check_state_target(found.state, target.plugin_name, target.skill, qualified)
    answers = gate_answer_rows(gate_answers, gate_response_count, normalise_gate_kind(gate_kind, gate_response_count))
    kinds = tuple(a["kind"] for a in answers)
    kind = summary_gate_kind(kinds)
    notes = list(notes)
    if found.origin == "rehearsal" and scenario_origin != "rehearsal":
        # The workdir is the authority: a rehearsal is never recorded as live (it would be reused as a live PASS).
        notes.append(f"scenario_origin {scenario_origin} was overridden to rehearsal: {found.why}")
        scenario_origin = "rehearsal"
        if scenario_path is None and found.scenario is not None and found.scenario.is_file():
            scenario_path = found.scenario
    if gate_kind == "contractual" and kind == "rescue":
        notes.append("gate kind contractual was normalised to rescue: there were no gate responses")
    grounding = contract_evidence(target.frontmatter) if "contractual" in kinds else []
    digest, plugin_names, file_count = _closure_fields(target, plugins_root, closure_at_boot, notes)
    if transcript_sha is None:
        notes.append(f"{TRANSCRIPT_FILE} is missing from the workdir: no transcript_sha256, no actual model")
    tier = derive_tier(target.frontmatter)
    downgrade = None
    if scenario_origin == "rehearsal":
        downgrade = "rehearsal: the model was scripted; this proves the harness path and plugin loading, not the skill"
    elif tier != "live":
        downgrade = f"the skill's tier is {tier}: fork or static acceptance would have been enough"
    inputs = VerdictInputs(launch, completion, goal_result, nudge_count, gate_response_count, kind, poll_exit,
                           bool(proof), bool(blocked), requested_model or None, tuple(models), kinds)
    checks = _evaluation_checks(workdir) if criteria_checks is None else list(criteria_checks)
    if goal_result is None and criteria_checks is None:
        checks = None
    why = not_judged_why or ("the goal was not judged" if goal_result is None
                             else "the evaluator recorded no check for it")
    judgement = judge(inputs)
    if blocked:
        # The table says BLOCKED; the reason says whose failure stopped it (acceptance/causes.py: tool missing, tmux
        # gone, time cap, harness stopped, evaluator failed, records not writable).
        judgement = Judgement(judgement.verdict, (blocked_reason(stop_reason),))
    if judgement.verdict != "PASS":
        causes = cause_lines(workdir, goal_result, goal_blockers, failure_reason, notes if stop_reason else ())
        judgement = Judgement(judgement.verdict, tuple(dict.fromkeys(judgement.reasons + causes)))
    doc = {
        "schema_version": SCHEMA_VERSION,
        "target": qualified,
        "plugin": target.plugin_name,
        "skill": target.skill,
        "run_id": workdir.name,
        "tier": tier,
        "downgrade_reason": downgrade,
        "proof": bool(proof),
        "blocked": bool(blocked),
        "launch": launch,
        "completion": completion,
        "goal_result": goal_result,
        "goal_blockers": [str(b) for b in goal_blockers],
        "evidence": _evidence_items(evidence),
        "evidence_text": evidence_text or None,
        "unverified": unverified or None,
        "goal_ledger": goal_ledger,
        "watch_id": watch_id,
        "evaluation_file": EVALUATION_FILE if (workdir / EVALUATION_FILE).is_file() else None,
        "nudge_count": nudge_count,
        "gate_response_count": gate_response_count,
        "gate_kind": kind,
        "gate_contract_evidence": grounding,
        "gate_answers": answers,
        "criteria": criteria_table(target.frontmatter, checks, why),
        "poll_exit": poll_exit,
        "stop_reason": stop_reason,
        "stall_row": stall_row,
        "failure_reason": failure_reason,
        "overall": {"verdict": judgement.verdict, "reasons": list(judgement.reasons)},
        "skill_dir_tree_sha": digest,
        "closure_plugins": plugin_names,
        "closure_file_count": file_count,
        "transcript_sha256": transcript_sha,
        "session_id": session_id or None,
        "scenario_id": scenario_id(qualified, args, scenario_path if scenario_origin == "rehearsal" else None),
        "scenario_origin": scenario_origin,
        "environment": environment(claude_version, tmux_version),
        "requested_model": requested_model or None,
        "actual_model": models,
        "notes": notes,
        "warnings": [str(w) for w in warnings],
        "started_at": started_at,
        "written_at": utc_now(),
    }
    if working_folder is not None:
        doc["working_folder"] = {k: working_folder.get(k) for k in ("form", "path", "source")}
        doc["working_folder"]["removed"] = bool(working_folder.get("removed"))
    if summarise is not None:
        doc["summary"] = summarise(doc)
    return doc


def cause_lines(workdir: Path, goal_result: str | None, goal_blockers: Iterable[str], failure_reason: str | None,
                stop_notes: Iterable[str]) -> tuple[str, ...]:
    """The real cause of a verdict that is not a PASS, as lines for ``overall.reasons`` (README "Evidence, watches and
    messages to a person"): ``the evaluator found: <blocker>`` for each blocker of a FAIL goal, ``the evaluator could
    not judge: <problem>`` when ``evaluation.json`` in ``workdir`` says no attempt gave a valid answer (the CLI's own
    line, e.g. "Not logged in", is in that problem), then ``failure_reason`` and the notes recorded with the stop
    (a boot failure's screen line, the question left unanswered, an API error's text). Never raises."""
    lines = [f"the evaluator found: {b}" for b in goal_blockers if goal_result == "FAIL" and str(b).strip()]
    try:
        evaluation = parse_json((Path(workdir) / EVALUATION_FILE).read_text(encoding="utf-8"))
        attempts = evaluation.get("attempts") or [] if evaluation.get("judged_by") == "fallback" else []
        lines += [f"the evaluator could not judge: {p}" for p in (attempts[-1].get("problems") or [])[:3]]
    except (OSError, ValueError, AttributeError, IndexError, TypeError):
        pass
    lines += [str(line) for line in (failure_reason, *stop_notes) if line and str(line).strip()]
    return tuple(lines)


def write_verdict(workdir: Path, doc: dict) -> Path:
    """Validate ``doc`` against the verdict schema and write ``<workdir>/verdict.json`` atomically; return its path.

    Raises :class:`~live_trial.errors.SchemaInvalid` (nothing written) when it does not fit.
    """
    path = Path(workdir).resolve() / VERDICT_FILE
    write_json(path, doc, SCHEMA)
    return path


def write_trial_verdict(**kw: Any) -> tuple[dict, Path]:
    """Build and write a trial's verdict (the API ``run`` calls). Keywords: those of :func:`build_verdict`.

    Returns ``(doc, path)``. Refusals raise before anything is written.
    """
    doc = build_verdict(**kw)
    return doc, write_verdict(kw["workdir"], doc)


def read_verdict(path: Path) -> dict:
    """Read and schema-validate a verdict; raise :class:`RefusedInput` naming the file when unreadable or invalid."""
    from live_trial.jsonfile import read_json

    return read_json(Path(path), SCHEMA)


def trial_duration_s(doc: Any) -> float | None:
    """Seconds a trial took by its verdict document: ``written_at - started_at`` (UTC ``...Z`` times), or None when
    either is missing, unreadable or the difference is not positive. Plan records it (``last_duration_s``) for
    ``run --plan --shard`` to balance shards; the JUnit file gives it as a testcase's time."""
    if not isinstance(doc, dict) or not doc.get("started_at") or not doc.get("written_at"):
        return None
    try:
        start = datetime.fromisoformat(str(doc["started_at"]).replace("Z", "+00:00"))
        end = datetime.fromisoformat(str(doc["written_at"]).replace("Z", "+00:00"))
    except ValueError:
        return None
    seconds = (end - start).total_seconds()
    return round(seconds, 3) if seconds > 0 else None
