"""The end of a trial: the launch check, the fresh evaluator (when the run completed), the verdict, the notification.

Works on a trial (:class:`~live_trial.trial.runner.Trial`) whose session is already collected and killed, through its
public parts only: its request, its :class:`~live_trial.trial.facts.Facts` and its
:class:`~live_trial.trial.journal.Journal`. Each step is recorded as a phase (evaluating, judged, verdict_written,
finished) with the facts it established, so a resume continues at the first step not done: it never judges twice,
never writes a second verdict, and sends the notification exactly once (README "Resuming a trial").

A PASS whose evaluator named what the trial cannot show yet (``unverified``) is "mostly done" (seed 000 rule 2): a
watch is registered before the verdict is written (its id is in the verdict) and the 🟡 notice is sent. A rehearsal's
watch goes to its own ledger, ``<workdir>/rehearsal-watches/watches.json``, never the eval root's: a scripted model
confirms nothing real, and plan must not treat the skill as watched.
"""
from __future__ import annotations

import json
from pathlib import Path

from live_trial.errors import LiveTrialError
from live_trial.jsonfile import utc_now
from live_trial.trial.context import TrialContext
from live_trial.trial.facts import TrialOutcome, phase_at_least

EXPECTED_GATE_NOT_SHOWN = "expected gate was not shown"
NOTIFIED = ("sent", "failed", "not_configured")
#: A rehearsal's own watch ledger, inside its workdir (a harness folder: live_trial.judge.sources.HARNESS_FILES).
REHEARSAL_WATCHES = "rehearsal-watches"


def judge(trial: TrialContext) -> TrialOutcome:
    """Evaluate the goal when the run completed, write the verdict, notify; return the trial's outcome. Continues
    from the phase recorded in the trial's state (collecting or earlier: from the start). Raises a one-line
    :class:`~live_trial.errors.Blocked` when the verdict cannot be written (a read-only or full disk)."""
    from live_trial.acceptance.causes import unwritable
    from live_trial.acceptance.verdict import SCHEMA, VERDICT_FILE, build_verdict, read_verdict, write_verdict
    from live_trial.jsonfile import validate
    from live_trial.notices.outcome import summariser

    phase = trial.state.phase
    if not phase_at_least(phase, "evaluating"):
        _checks(trial)
    if not phase_at_least(phase, "judged") and _can_evaluate(trial):
        _evaluate(trial)
    if not phase_at_least(phase, "judged"):
        trial.journal.save(phase="judged")
    origin = "rehearsal" if trial.state.rehearsal else "live"
    path = trial.wd.path(VERDICT_FILE)
    if phase_at_least(phase, "verdict_written") and path.is_file():
        doc = read_verdict(path)
    else:
        doc = build_verdict(
            workdir=trial.wd.root, target=trial.target, plugins_root=Path(trial.state.plugins_root),
            session_id=trial.state.session_id, requested_model=trial.req.model, launch=trial.facts.launch,
            completion=trial.facts.completion, goal_result=trial.facts.goal, goal_blockers=trial.facts.goal_blockers,
            evidence=trial.facts.evidence, unverified="; ".join(trial.facts.unverified) or None,
            goal_ledger=_ledger(trial.facts), nudge_count=trial.state.nudge_count,
            gate_response_count=trial.state.gate_response_count, gate_kind=trial.req.gate_kind,
            poll_exit=trial.facts.poll_exit, proof=trial.req.proof, blocked=trial.facts.blocked,
            scenario_origin=origin, scenario_path=trial.req.rehearsal, args=trial.req.args,
            claude_version=trial.state.claude_version, stop_reason=trial.facts.stop_reason,
            stall_row=trial.facts.stall_row, notes=trial.facts.notes, warnings=trial.facts.warnings,
            started_at=trial.state.started_at, closure_at_boot=trial.state.closure,
            working_folder=trial.state.folder, gate_answers=_gate_answers(trial),
            criteria_checks=trial.facts.checks,
            not_judged_why="the goal was not judged: " + (trial.facts.stop_reason or "the run did not complete")
            if trial.facts.goal is None else None, summarise=summariser(trial.req.lang))
        validate(doc, SCHEMA, what="verdict.json")     # before the watch is registered: a bad doc changes nothing
        _register_watch(trial, doc, origin)
        try:
            path = write_verdict(trial.wd.root, doc)
        except OSError as exc:
            raise unwritable(exc, path) from None
        trial.journal.save(phase="verdict_written")
    overall = doc["overall"]["verdict"] if isinstance(doc.get("overall"), dict) else doc["overall"]
    text, delivery = _notify_once(trial, doc)
    trial.journal.save(phase="finished")
    return TrialOutcome(workdir=trial.wd.root, overall=overall, exit_code=exit_code_for(overall),
                        verdict=doc, verdict_path=path, summary=_summary(overall, origin, trial.facts, doc),
                        scenario_origin=origin, notification=text, notification_delivery=delivery,
                        stop_reason=doc.get("stop_reason"))


def _checks(trial: TrialContext) -> None:
    """What the collected evidence says before the goal is judged: the launch, an expected gate, unused answers."""
    records = _session_records(trial)
    _note_compactions(trial, records or [])
    _note_unknown_records(trial)
    if trial.facts.launch == "PASS" and records is not None:
        _check_launch(trial, records)
    if trial.req.expect_gate and not trial.facts.gate_seen and not trial.facts.blocked:
        # README "Questions (gates)": a skill that must stop at a question but never showed one has a broken guard.
        trial.facts.completion = "FAIL"
        trial.facts.stop_reason = trial.facts.stop_reason or "expected_gate_not_shown"
        trial.facts.notes.append(EXPECTED_GATE_NOT_SHOWN)
    unused = len(trial.state.gate_responses) - trial.state.gate_response_count
    if unused > 0 and not trial.facts.blocked:
        trial.facts.warnings.append(f"{unused} --gate-response answer(s) were never used: the skill asked fewer "
                                    "questions than expected")


def _can_evaluate(trial: TrialContext) -> bool:
    return trial.facts.completion == "PASS" and trial.facts.launch == "PASS" and not trial.facts.blocked


def _notify_once(trial: TrialContext, doc: dict) -> tuple[str | None, str | None]:
    """Send the trial's one notification unless it was sent already (README: every run ends with exactly one), and
    record its status in the state. A harness killed between sending and recording finds its line in
    notifications.jsonl (``refs.run_id``) and sends nothing again. Returns ``(text, webhook status)``."""
    from live_trial.notices import notify

    run_id = trial.state.run_id
    status = (trial.state.notification or {}).get("status")
    if status in NOTIFIED or status == "sending":
        sent = [r for r in notify.read_notifications(trial.req.eval_root)
                if (r.get("refs") or {}).get("run_id") == run_id]
        record = sent[0] if sent else None
        if record is not None and status == "sending":
            trial.journal.save(notification={"status": record["webhook"]["status"], "at": record["at"]})
        if record is not None or status in NOTIFIED:
            return (record or {}).get("text"), ((record or {}).get("webhook") or {}).get("status") or status
    trial.journal.save(notification={"status": "sending", "at": utc_now()})
    try:
        record = notify.notify_trial_record(trial.req.eval_root, doc, lang=trial.req.lang)
    except Exception as exc:  # noqa: BLE001 - a failed notification is recorded, never fatal
        trial.journal.log("notify", "error", problem=f"{type(exc).__name__}: {exc}")
        trial.journal.save(notification={"status": "error", "at": utc_now()})
        return None, None
    trial.journal.save(notification={"status": record["webhook"]["status"], "at": record["at"]})
    return record["text"], record["webhook"]["status"]


def _ledger(facts) -> str | None:
    """The goal's ledger kind (seed 000): done, mostly_done (PASS with what cannot be seen yet), not_done; None when
    the goal was not judged."""
    if facts.goal is None:
        return None
    if facts.goal != "PASS":
        return "not_done"
    return "mostly_done" if facts.unverified else "done"


def _gate_answers(trial: TrialContext) -> list[dict] | None:
    """The answered questions as the poll loop recorded them (question, options, answer, kind); None when the record
    does not hold one line per answer (a trial resumed from an older harness): then each counts as ``gate_kind``."""
    answers = trial.state.gate_answers
    if isinstance(answers, list) and len(answers) == trial.state.gate_response_count:
        return answers
    return None


def _register_watch(trial: TrialContext, doc: dict, origin: str) -> None:
    """A mostly-done PASS registers a watch of what is not confirmed yet (seed 000 rule 2) and records its id in
    ``doc``: in the eval root's ledger, or in a rehearsal the rehearsal's own ledger (module docstring). A failure is
    a note, never fatal."""
    if doc.get("goal_ledger") != "mostly_done" or doc["overall"]["verdict"] != "PASS":
        return
    from live_trial.notices.watch import register_watch

    root = trial.wd.path(REHEARSAL_WATCHES) if origin == "rehearsal" else trial.req.eval_root
    try:
        watch = register_watch(root, objective=str(trial.target.frontmatter.get("description") or doc["target"]),
                               unverified=doc["unverified"], evidence="; ".join(e["observed"] for e in doc["evidence"]),
                               target=doc["target"], workdir=str(trial.wd.root), closure=doc["skill_dir_tree_sha"])
    except Exception as exc:  # noqa: BLE001 - the verdict is still written; the note says what went wrong
        doc["notes"].append(f"no watch could be registered: {type(exc).__name__}: {exc}")
        trial.journal.log("watch", "error", problem=f"{type(exc).__name__}: {exc}")
        return
    doc["watch_id"] = watch["id"]
    if origin == "rehearsal":
        doc["notes"].append(f"the watch is kept in the rehearsal's own ledger ({REHEARSAL_WATCHES}/watches.json in the "
                            "workdir), not the eval root's: a scripted model confirms nothing real")
    trial.journal.log("watch", "registered", watch_id=watch["id"], ledger=str(root))


def skill_calls(records) -> list[tuple[str, bool]]:
    """``[(skill name, succeeded)]`` for every Skill tool_use of the main chain, in the order they happened.

    ``succeeded``: its tool_result exists and is not an error. ``records``: parsed transcript records. The name is the
    skill the CLI resolved the call to when the transcript says so: a call by a bare name (``hello``) that the CLI
    resolved to a plugin's skill is followed by an assistant record with ``attributionSkill: "plugin:hello"``
    (seen on 2.1.197; references/transcript-jsonl.md "Plugins"); otherwise the name as called."""
    from live_trial.transcript.order import causal_order
    from live_trial.transcript.records import message_content

    calls: list[tuple[str, str]] = []
    results: dict[str, bool] = {}
    resolved: dict[str, str] = {}
    waiting: list[str] = []            # successful bare-name calls whose next assistant record is not seen yet
    for rec in causal_order(records):
        if rec.get("type") == "assistant" and waiting:
            attributed = rec.get("attributionSkill")
            for use_id in waiting:
                if isinstance(attributed, str) and attributed:
                    resolved[use_id] = attributed.lstrip("/")
            waiting = []
        content = message_content(rec)
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == "Skill":
                skill = (block.get("input") or {}).get("skill") if isinstance(block.get("input"), dict) else None
                calls.append((str(skill or "").lstrip("/"), str(block.get("id"))))
            elif block.get("type") == "tool_result":
                use_id = str(block.get("tool_use_id"))
                results[use_id] = block.get("is_error") is not True
                if results[use_id] and any(c[1] == use_id and ":" not in c[0] for c in calls):
                    waiting.append(use_id)
    return [(resolved.get(use_id, name), results.get(use_id, False)) for name, use_id in calls]


def _tool_ids(rec: dict, block_type: str, key: str, name: str | None = None) -> list[str]:
    from live_trial.transcript.records import message_content

    content = message_content(rec)
    return [b[key] for b in content if isinstance(b, dict) and b.get("type") == block_type
            and isinstance(b.get(key), str) and (name is None or b.get("name") == name)] \
        if isinstance(content, list) else []


_SLIM_KEYS = ("type", "subtype", "uuid", "parentUuid", "timestamp", "isSidechain", "attributionSkill",
              "compactMetadata")


def _slim(rec: dict) -> dict | None:
    """What :func:`skill_calls` and the compaction note read of a record: its order keys, ``attributionSkill``,
    ``compactMetadata``, its Skill tool_use blocks (id and skill) and its tool_result blocks (id and is_error); None
    for a record that holds none of them (nothing else of it is kept)."""
    from live_trial.transcript.records import message_content

    content = message_content(rec)
    blocks = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Skill":
            inp = b.get("input")
            blocks.append({"type": "tool_use", "name": "Skill", "id": b.get("id"),
                           "input": {"skill": inp.get("skill")} if isinstance(inp, dict) else None})
        elif isinstance(b, dict) and b.get("type") == "tool_result":
            blocks.append({"type": "tool_result", "tool_use_id": b.get("tool_use_id"), "is_error": b.get("is_error")})
    if not blocks and not rec.get("attributionSkill") and rec.get("subtype") != "compact_boundary":
        return None
    slim = {k: rec[k] for k in _SLIM_KEYS if k in rec}
    if blocks:
        slim["message"] = {"content": blocks}
    return slim


def skill_call_records(*paths: Path) -> list[dict]:
    """The records of a session's transcripts (in the order given) that the launch check and the compaction note
    need, cut to what those read (:func:`_slim`): Skill tool_use records, the tool_result records answering them,
    the assistant records naming the skill the CLI resolved a bare-name call to (``attributionSkill``) and
    ``compact_boundary`` records, streamed: lines that mention neither ``"Skill"``, ``attributionSkill``,
    ``compact_boundary`` nor a Skill call's id are not parsed, and only the cut records are held (ARCHITECTURE
    invariant 9). A result written before its call (the CLI's out-of-order first turn) is found by a second pass that
    looks only for the ids still unanswered."""
    from live_trial.transcript.reader import iter_records

    ids: set[bytes] = set()

    def select(line: bytes) -> bool:
        return (b'"Skill"' in line or b"\\u" in line or b"compact_boundary" in line or b"attributionSkill" in line
                or any(i in line for i in ids))

    kept = []
    for path in paths:
        for rec in iter_records(path, select=select):
            for i in _tool_ids(rec, "tool_use", "id", "Skill"):
                ids.update({i.encode(), json.dumps(i)[1:-1].encode()})      # as written raw or escaped
            slim = _slim(rec)
            if slim is not None:
                kept.append(slim)
    answered = {i for rec in kept for i in _tool_ids(rec, "tool_result", "tool_use_id")}
    missing = {i for rec in kept for i in _tool_ids(rec, "tool_use", "id", "Skill")} - answered
    if missing:
        needles = {n for i in missing for n in (i.encode(), json.dumps(i)[1:-1].encode())}
        kept += [_slim(rec) for path in paths
                 for rec in iter_records(path, select=lambda line: any(n in line for n in needles))
                 if set(_tool_ids(rec, "tool_result", "tool_use_id")) & missing]
    return kept


def _session_records(trial: TrialContext) -> list[dict] | None:
    """The records of the whole session the launch check and the compaction note need
    (:func:`skill_call_records`): from the transcripts it moved away from (``/clear``), then ``transcript.jsonl``;
    None when no transcript was collected (the notes already say why)."""
    from live_trial.trial.moves import MOVED_FROM_DIR

    path = trial.wd.path("transcript.jsonl")
    if not path.is_file():
        return None
    return skill_call_records(*sorted(trial.wd.path(MOVED_FROM_DIR).glob("*.jsonl")), path)


def _note_compactions(trial: TrialContext, records: list[dict]) -> None:
    """A note when the conversation was compacted during the trial (``compact_boundary`` records): the model then
    worked from a summary of the task, which a reader of the verdict should know."""
    triggers = [str((r.get("compactMetadata") or {}).get("trigger") or "unknown") for r in records
                if r.get("type") == "system" and r.get("subtype") == "compact_boundary"]
    if triggers:
        note = (f"the conversation was compacted {len(triggers)} time(s) during the trial "
                f"({', '.join(sorted(set(triggers)))}): the model went on from a summary of it")
        if note not in trial.facts.notes:
            trial.facts.notes.append(note)


def _note_unknown_records(trial: TrialContext) -> None:
    """A note naming the records of types the harness does not know, with the CLI version that wrote them (README
    "Set-up"): they were left out of every count, and a person should know the CLI wrote something the harness was
    never shown, and how to find out what else changed."""
    from live_trial.transcript.reader import unknown_record_types
    from live_trial.trial.moves import MOVED_FROM_DIR

    path = trial.wd.path("transcript.jsonl")
    if not path.is_file():
        return
    found = unknown_record_types(*sorted(trial.wd.path(MOVED_FROM_DIR).glob("*.jsonl")), path)
    if not found:
        return
    kinds = ", ".join(f"{kind} ×{n}" for kind, n in sorted(found.items()))
    note = (f"the transcript holds {sum(found.values())} record(s) of types the harness does not know ({kinds}), "
            f"written by claude {trial.state.claude_version or 'of unknown version'}: they were left out of "
            "every count; run `live-trial doctor --cli` to see what else this CLI does differently")
    if note not in trial.facts.notes:
        trial.facts.notes.append(note)


def _check_launch(trial: TrialContext, records: list[dict]) -> None:
    """Seed 001 verdict table, axis 起動: the skill launched. READY and a delivered task are not enough: the
    transcript must show a successful Skill call to the target itself (task.md asks for exactly that), in any of the
    session's transcripts. Without one, launch is FAIL: the session ran, but not the skill under trial (another
    skill, or none)."""
    target = trial.target.qualified
    calls = skill_calls(records)
    if any(name == target and ok for name, ok in calls):
        return
    seen = ", ".join(f"{n or '?'}{'' if ok else ' (failed)'}" for n, ok in calls) or "none"
    trial.facts.launch = "FAIL"
    trial.facts.stop_reason = trial.facts.stop_reason or "skill_not_launched"
    trial.facts.notes.append(f"the transcript shows no successful Skill call to {target} (Skill calls: {seen})")
    trial.journal.log("launch", "FAIL", target=target, skill_calls=seen)


def _evaluate(trial: TrialContext) -> None:
    """Have the fresh evaluator judge the goal. Its pid and start time are in the state while it runs (a resume or
    ``reap`` ends one whose harness died); it carries the trial's tag. A process that could not run, crashed or never
    answered is the harness's failure (BLOCKED ``evaluator_failed``), never a judgement of the skill."""
    from live_trial.acceptance.causes import cause
    from live_trial.judge import evaluator
    from live_trial.session import proctree
    from live_trial.trial.changes import session_output

    trial.journal.save(phase="evaluating")
    env = {**trial.env, **trial.child_overrides, proctree.TAG_ENV: trial.state.session}
    results: list = []

    def started(pid: int) -> None:
        me = proctree.proc(pid)
        trial.journal.save(evaluator={"pid": pid, "start": me.start} if me else None)

    def runner(*args, **kw):
        results.append(evaluator.run_process(*args, should_stop=trial.stop_event.is_set, on_start=started, **kw))
        return results[-1]

    problem = None
    produced = session_output(trial.wd.root, (trial.state.folder or {}).get("path"))
    try:
        result = evaluator.evaluate(trial.wd.root, trial.target, trial.claude, env, produced=produced,
                                    model=trial.req.model, runner=runner)
    except (LiveTrialError, OSError) as exc:
        problem = f"the evaluator could not run: {getattr(exc, 'message', None) or exc}"
    finally:
        trial.journal.save(evaluator=None)
    if trial.stop_event.is_set():
        # Ctrl-C / SIGTERM while the evaluator ran: it was killed within a second; the goal was not judged.
        trial.facts.blocked, trial.facts.stop_reason = True, trial.stop_code()
        trial.facts.goal, trial.facts.goal_blockers = None, []
        trial.facts.notes.append("the harness was stopped while the evaluator judged the goal")
        trial.journal.log("evaluate", "interrupted")
        return
    failures = [evaluator.process_failure(r) for r in results]
    if problem is None and results and all(failures):
        problem = "; ".join(dict.fromkeys(failures))
    if problem is not None:
        trial.facts.blocked, trial.facts.stop_reason = True, "evaluator_failed"
        trial.facts.goal, trial.facts.goal_blockers = None, []
        trial.facts.notes.append(f"{cause('evaluator_failed').why}: {problem}")
        trial.journal.log("evaluate", "error", problem=problem)
        return
    trial.facts.goal = result["goal_result"]
    trial.facts.goal_blockers = list(result.get("blockers", []))
    trial.facts.evidence = list(result.get("evidence", []))
    trial.facts.unverified = list(result.get("unverified") or [])
    trial.facts.checks = list(result.get("checks") or [])
    trial.journal.log("evaluate", trial.facts.goal, blockers=trial.facts.goal_blockers,
                      evidence_items=len(trial.facts.evidence), unverified=trial.facts.unverified,
                      judged_by=result.get("judged_by"))


def exit_code_for(overall: str) -> int:
    """``run`` exit code for an overall verdict: 0 PASS, 1 FAIL, 6 DEGRADED, 3 BLOCKED (CONVENTIONS.md)."""
    return {"PASS": 0, "FAIL": 1, "DEGRADED": 6, "BLOCKED": 3}.get(overall, 1)


def _summary(overall: str, origin: str, facts, doc: dict) -> str:
    """The plain-words summary ``run`` prints: what the verdict means, and why, for this trial (``doc``: its
    verdict). For BLOCKED, whose failure it was comes first (acceptance/causes.py), in plain words."""
    from live_trial.acceptance.criteria import elsewhere_sentence
    from live_trial.notices.notify import reason_sentence

    words = {"PASS": "The skill ran to the end on its own and reached its goal.",
             "DEGRADED": "The skill finished, but not cleanly: the goal was missed or someone had to step in.",
             "FAIL": "The skill did not finish as required.",
             "BLOCKED": "The trial could not be completed, and not because of the skill:"}
    text = words.get(overall, overall)
    sentence = reason_sentence(facts.stop_reason, "en") if facts.stop_reason else None
    if sentence == reason_sentence(None, "en"):
        sentence = None
    if overall == "BLOCKED":
        text += " " + (sentence or reason_sentence("BLOCKED", "en"))
    elif sentence and not facts.notes:
        text += " " + sentence
    if facts.notes:
        text += " " + "; ".join(facts.notes[:2]) + "."
    if facts.goal == "FAIL" and facts.goal_blockers:
        text += " The evaluator found: " + "; ".join(facts.goal_blockers[:2]) + "."
    if overall == "PASS" and doc.get("goal_ledger") == "mostly_done":
        text += f" Mostly done: not confirmed yet: {doc['unverified']}." + (
            " A watch checks it every day." if origin == "live" and doc.get("watch_id") else
            " Its watch is in the rehearsal's own ledger." if doc.get("watch_id") else "")
    if overall == "PASS" and elsewhere_sentence(doc.get("criteria") or []):
        text += " " + elsewhere_sentence(doc["criteria"])
    if doc.get("nudge_count"):
        text += f" It needed {doc['nudge_count']} nudge(s) to go on."
    if doc.get("gate_response_count"):
        kinds = [a["kind"] for a in doc.get("gate_answers") or []]
        told = ", ".join(f"{kinds.count(k)} {k}" for k in ("contractual", "rescue") if kinds.count(k))
        text += f" {doc['gate_response_count']} question(s) were answered for it ({told or doc['gate_kind']})."
    if origin == "rehearsal":
        text += (" The model was scripted (rehearsal): this proves the harness path and the plugin's loading, "
                 "not the skill's real behaviour.")
    return text
