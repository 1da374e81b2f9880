"""The end of a trial: the launch check, the fresh evaluator (when the run completed), the verdict, the notification.

Works on a trial (:class:`~live_trial.trial.runner.Trial`) whose session is already collected and killed, through its
public parts only: its request, its :class:`~live_trial.trial.facts.Facts` and its
:class:`~live_trial.trial.journal.Journal`.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

from live_trial.errors import LiveTrialError
from live_trial.trial.facts import TrialOutcome

EXPECTED_GATE_NOT_SHOWN = "expected gate was not shown"

def judge(trial) -> TrialOutcome:
    """Evaluate the goal when the run completed, write the verdict, notify; return the trial's outcome."""
    from live_trial.acceptance.verdict import write_trial_verdict
    from live_trial.notices import notify

    if trial.facts.launch == "PASS":
        _check_launch(trial)
    if trial.req.expect_gate and not trial.facts.gate_seen and not trial.facts.blocked:
        # README "Questions (gates)": a skill that must stop at a question but never showed one has a broken guard.
        trial.facts.completion = "FAIL"
        trial.facts.stop_reason = trial.facts.stop_reason or "expected_gate_not_shown"
        trial.facts.notes.append(EXPECTED_GATE_NOT_SHOWN)
    unused = len(trial.state["gate_responses"]) - trial.state["gate_response_count"]
    if unused > 0 and not trial.facts.blocked:
        trial.facts.warnings.append(f"{unused} --gate-response answer(s) were never used: the skill asked fewer "
                                    "questions than expected")
    if trial.facts.completion == "PASS" and trial.facts.launch == "PASS" and not trial.facts.blocked:
        _evaluate(trial)
    trial.journal.save(phase="judged")
    origin = "rehearsal" if trial.state.get("rehearsal") else "live"
    doc, path = write_trial_verdict(
        workdir=trial.wd.root, target=trial.target, plugins_root=Path(trial.state["plugins_root"]),
        session_id=trial.state["session_id"], requested_model=trial.req.model, launch=trial.facts.launch,
        completion=trial.facts.completion, goal_result=trial.facts.goal, goal_blockers=trial.facts.goal_blockers,
        evidence=trial.facts.evidence, nudge_count=trial.state["nudge_count"],
        gate_response_count=trial.state["gate_response_count"], gate_kind=trial.req.gate_kind,
        poll_exit=trial.facts.poll_exit, proof=trial.req.proof, blocked=trial.facts.blocked,
        scenario_origin=origin, scenario_path=trial.req.rehearsal, args=trial.req.args,
        claude_version=trial.state.get("claude_version"), stop_reason=trial.facts.stop_reason,
        stall_row=trial.facts.stall_row,
        notes=trial.facts.notes, warnings=trial.facts.warnings, started_at=trial.state["started_at"],
        closure_at_boot=trial.state.get("closure"))
    overall = doc["overall"]["verdict"] if isinstance(doc.get("overall"), dict) else doc["overall"]
    text, delivery = None, None
    try:
        record = notify.notify_trial_record(trial.req.eval_root, doc, lang=trial.req.lang)
        text = record["text"]
        delivery = record["webhook"]["status"]
    except Exception as exc:  # noqa: BLE001 - a failed notification is recorded, never fatal
        trial.journal.log("notify", "error", problem=f"{type(exc).__name__}: {exc}")
    trial.journal.save(phase="finished")
    return TrialOutcome(workdir=trial.wd.root, overall=overall, exit_code=exit_code_for(overall),
                        verdict=doc, verdict_path=path, summary=_summary(overall, origin, trial.facts, trial.state),
                        scenario_origin=origin, notification=text, notification_delivery=delivery,
                        stop_reason=trial.facts.stop_reason)


def skill_calls(records) -> list[tuple[str, bool]]:
    """``[(skill name, succeeded)]`` for every Skill tool_use of the main chain, in the order they happened.

    ``succeeded``: its tool_result exists and is not an error. ``records``: parsed transcript records."""
    from live_trial.transcript.order import causal_order
    from live_trial.transcript.records import message_content

    calls: list[tuple[str, str]] = []
    results: dict[str, bool] = {}
    for rec in causal_order(records):
        content = message_content(rec)
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == "Skill":
                skill = (block.get("input") or {}).get("skill") if isinstance(block.get("input"), dict) else None
                calls.append((str(skill or "").lstrip("/"), str(block.get("id"))))
            elif block.get("type") == "tool_result":
                results[str(block.get("tool_use_id"))] = block.get("is_error") is not True
    return [(name, results.get(use_id, False)) for name, use_id in calls]


def _tool_ids(rec: dict, block_type: str, key: str, name: str | None = None) -> list[str]:
    from live_trial.transcript.records import message_content

    content = message_content(rec)
    return [b[key] for b in content if isinstance(b, dict) and b.get("type") == block_type
            and isinstance(b.get(key), str) and (name is None or b.get("name") == name)] \
        if isinstance(content, list) else []


def skill_call_records(path: Path) -> list[dict]:
    """The records of a transcript that :func:`skill_calls` needs (Skill tool_use records and the tool_result records
    answering them), streamed: lines that mention neither ``"Skill"`` nor a Skill call's id are not parsed, and only
    the records kept are held (ARCHITECTURE invariant 9). A result written before its call (the CLI's out-of-order
    first turn) is found by a second pass that looks only for the ids still unanswered."""
    from live_trial.transcript.reader import iter_records

    ids: set[bytes] = set()

    def select(line: bytes) -> bool:
        return b'"Skill"' in line or b"\\u" in line or any(i in line for i in ids)

    kept = []
    for rec in iter_records(path, select=select):
        for i in _tool_ids(rec, "tool_use", "id", "Skill"):
            ids.update({i.encode(), json.dumps(i)[1:-1].encode()})      # as written raw or escaped
        kept.append(rec)
    answered = {i for rec in kept for i in _tool_ids(rec, "tool_result", "tool_use_id")}
    missing = {i for rec in kept for i in _tool_ids(rec, "tool_use", "id", "Skill")} - answered
    if missing:
        needles = {n for i in missing for n in (i.encode(), json.dumps(i)[1:-1].encode())}
        kept += [rec for rec in iter_records(path, select=lambda line: any(n in line for n in needles))
                 if set(_tool_ids(rec, "tool_result", "tool_use_id")) & missing]
    return kept


def _check_launch(trial) -> None:
    """Seed 001 verdict table, axis 起動: the skill launched. READY and a delivered task are not enough: the
    transcript must show a successful Skill call to the target itself (task.md asks for exactly that). Without
    one, launch is FAIL: the session ran, but not the skill under trial (another skill, or none)."""
    path = trial.wd.path("transcript.jsonl")
    if not path.is_file():
        return                                  # nothing collected: the notes already say why
    target = trial.target.qualified
    calls = skill_calls(skill_call_records(path))
    if any(name == target and ok for name, ok in calls):
        return
    seen = ", ".join(f"{n or '?'}{'' if ok else ' (failed)'}" for n, ok in calls) or "none"
    trial.facts.launch = "FAIL"
    trial.facts.stop_reason = trial.facts.stop_reason or "skill_not_launched"
    trial.facts.notes.append(f"the transcript shows no successful Skill call to {target} (Skill calls: {seen})")
    trial.journal.log("launch", "FAIL", target=target, skill_calls=seen)


def _evaluate(trial) -> None:
    from live_trial.judge import evaluator

    trial.journal.save(phase="evaluating")
    env = {**trial.env, **trial.child_overrides}
    runner = functools.partial(evaluator.run_process, should_stop=trial.stop_event.is_set)
    try:
        result = evaluator.evaluate(trial.wd.root, trial.target, trial.claude, env, model=trial.req.model,
                                    runner=runner)
    except LiveTrialError as exc:
        trial.facts.goal, trial.facts.goal_blockers = "FAIL", [f"the evaluator could not run: {exc.message}"]
        trial.journal.log("evaluate", "error", problem=exc.message)
        return
    if trial.stop_event.is_set():
        # Ctrl-C / SIGTERM while the evaluator ran: it was killed within a second; the goal was not judged.
        trial.facts.blocked, trial.facts.stop_reason = True, "harness_interrupted"
        trial.facts.goal, trial.facts.goal_blockers = None, []
        trial.facts.notes.append("the harness was stopped while the evaluator judged the goal")
        trial.journal.log("evaluate", "interrupted")
        return
    trial.facts.goal = result["goal_result"]
    trial.facts.goal_blockers = list(result.get("blockers", []))
    trial.facts.evidence = list(result.get("evidence", []))
    trial.journal.log("evaluate", trial.facts.goal, blockers=trial.facts.goal_blockers,
              evidence_items=len(trial.facts.evidence))


def exit_code_for(overall: str) -> int:
    """``run`` exit code for an overall verdict: 0 PASS, 1 FAIL, 6 DEGRADED, 3 BLOCKED (CONVENTIONS.md)."""
    return {"PASS": 0, "FAIL": 1, "DEGRADED": 6, "BLOCKED": 3}.get(overall, 1)


def _summary(overall: str, origin: str, facts, state: dict) -> str:
    """The plain-words summary ``run`` prints: what the verdict means, and why, for this trial."""
    words = {"PASS": "The skill ran to the end on its own and reached its goal.",
             "DEGRADED": "The skill finished, but not cleanly: the goal was missed or someone had to step in.",
             "FAIL": "The skill did not finish as required.",
             "BLOCKED": "The trial could not be completed: a required tool was missing or the time limit was reached."}
    text = words.get(overall, overall)
    if facts.stop_reason and not facts.notes:
        from live_trial.notices.notify import reason_sentence

        sentence = reason_sentence(facts.stop_reason, "en")
        if sentence != reason_sentence(None, "en"):
            text += " " + sentence
    if facts.notes:
        text += " " + "; ".join(facts.notes[:2]) + "."
    if facts.goal == "FAIL" and facts.goal_blockers:
        text += " The evaluator found: " + "; ".join(facts.goal_blockers[:2]) + "."
    if state.get("nudge_count"):
        text += f" It needed {state['nudge_count']} nudge(s) to go on."
    if state.get("gate_response_count"):
        text += f" {state['gate_response_count']} question(s) were answered for it ({state.get('gate_kind', 'rescue')})."
    if origin == "rehearsal":
        text += (" The model was scripted (rehearsal): this proves the harness path and the plugin's loading, "
                 "not the skill's real behaviour.")
    return text
