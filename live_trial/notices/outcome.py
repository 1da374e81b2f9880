"""What a finished trial means, in plain words: the one-sentence summary (verdict.json ``summary``), the parts of the
message that ends a trial, the next step a person should take, and the user's own names a message may show.

Every sentence comes from the catalogues' ``trial`` section (``references/notifications.<lang>.json``) and is chosen
from the verdict's facts, never from a word of the verdict alone, so no sentence contradicts its verdict (README
"Evidence, watches and messages to a person"):

- "got to the end" / "did not get to the end" follows the last poll exit (DONE or not): a FAIL whose session finished
  (the skill was never called, the expected question never came) never reads "did not get to the end";
- a DEGRADED trial names what made it DEGRADED: the result missing, the result not judged, or the help it needed
  (nudges, questions answered for it), so one whose goal was met never reads "the result is missing";
- a BLOCKED trial says it is not the skill's fault; nothing a trial sends says it is still "waiting for an answer";
- the last line of a message that is not a success is what to do next (nothing reads replies, so it never asks for
  one): :func:`next_step` decides it from the stop reason and what the trial saw, :func:`next_step_sentence` words it.

The trial's own names (plugin, skill, ``plugin:skill``, the file names the skill's description promises and the files
the session made) are the user's, not internal codes: :func:`user_names` lists them for the forbidden-token check
(:func:`live_trial.notices.notify.forbidden_spans`), which still removes the harness's codes, commands, ids and paths.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial import workdir_files as wf
from live_trial.errors import PollExit, RefusedInput
from live_trial.jsonfile import parse_json
from live_trial.notices.catalogue import DEFAULT_LANG, catalogue, reason_sentence, resolve_lang
from live_trial.notices.seen import Seen, seen_in_workdir
from live_trial.stop_reasons import StopReason

#: Files the harness writes for itself: never a user's name, even when a description mentions one (the eval root's
#: notifications.jsonl and watches.json too: a rehearsal keeps its own in its workdir).
HARNESS_NAMES = {wf.MARKER, wf.TASK, wf.TRIAL_STATE, wf.TRIAL_LOG, wf.POLL_STATE, wf.CWD_SNAPSHOT, wf.EVALUATION,
                 wf.VERDICT, wf.TRANSCRIPT, wf.PANE, wf.NOTIFICATIONS_FILE, wf.LEDGER_FILE, wf.REPORT,
                 wf.SIDE_EFFECTS_LIST}
_FILE_NAME = re.compile(r"(?<![\w.\\-])[A-Za-z0-9_][A-Za-z0-9_.\-]*\.[A-Za-z0-9]{1,8}(?![\w/\\-])")
_MCP_TOOL = re.compile(r"(?<![A-Za-z0-9_])mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+")
#: Next steps of a stop reason that hold even when the verdict is BLOCKED: they name what to change (install the
#: tool, allow more time, wait for the model's service, log in, name a model it knows, record a new tape, answer a
#: request in the rehearsal's scenario, give an answer among the question's options, mend the stand-in MCP server
#: given to the trial: README "Whose failure it is").
#: Every other row's step comes after "not the skill's fault: retry" of a BLOCKED verdict.
BEFORE_BLOCKED = ("install", "hard_cap", "budget", "later", "usage_limit", "login", "model", "replay", "scenario",
                  "gate_option", "mcp_fixture", "model_setup")


@dataclass(frozen=True)
class Story:
    """The facts of one verdict that its sentences depend on (read tolerantly from a verdict dict)."""

    overall: str
    plugin: str | None
    skill: str
    target: str
    reached_end: bool           # the last poll exit was DONE: the session finished its turn with the marker
    goal: str | None            # the evaluator's PASS / FAIL, None when not judged
    nudges: int
    gates: int                  # questions answered as a rescue (a contractual answer is no help)
    stop_reason: str | None
    poll_exit: str | None
    blockers: list[str]
    unverified: str | None
    rehearsal: bool
    proof: bool


@dataclass(frozen=True)
class Step:
    """The next step a person should take: ``key`` of the catalogues' ``trial.next`` and its values."""

    key: str
    params: dict = field(default_factory=dict)


def find_key(doc: Any, *names: str) -> Any:
    """The first non-empty value of any of ``names`` in a nested dict (top level first, then depth first), so a
    verdict is read by key whatever its nesting; None when none is found."""
    if not isinstance(doc, Mapping):
        return None
    for name in names:
        if doc.get(name) not in (None, "", []):
            return doc[name]
    for value in doc.values():
        found = find_key(value, *names) if isinstance(value, Mapping) else None
        if found not in (None, "", []):
            return found
    return None


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def story(doc: Mapping[str, Any]) -> Story:
    """The :class:`Story` of a verdict dict (``verdict.json`` or any dict with the same keys, nested or not)."""
    overall = doc.get("overall")
    overall = str((overall.get("verdict") if isinstance(overall, Mapping) else overall) or "FAIL")
    target = str(find_key(doc, "target", "target_skill") or find_key(doc, "skill") or "")
    plugin = doc.get("plugin") if "plugin" in doc else (target.split(":", 1)[0] if ":" in target else None)
    skill = str(doc.get("skill") or target.split(":")[-1] or "-")
    blockers = find_key(doc, "goal_blockers", "blockers") or []
    goal = find_key(doc, "goal_result")
    if goal is None and isinstance(doc.get("goal"), Mapping):
        goal = doc["goal"].get("result")
    kind = find_key(doc, "gate_kind")
    gates = _int(find_key(doc, "gate_response_count"))
    answers = doc.get("gate_answers")
    if isinstance(answers, list) and answers:
        gates = sum(1 for a in answers if isinstance(a, Mapping) and a.get("kind") != "contractual")
    elif kind == "contractual":
        gates = 0
    return Story(overall=overall, plugin=str(plugin) if plugin else None, skill=skill, target=target,
                 reached_end=find_key(doc, "poll_exit") == PollExit.DONE, goal=str(goal) if goal else None,
                 nudges=_int(find_key(doc, "nudge_count")), gates=gates, stop_reason=find_key(doc, "stop_reason"),
                 poll_exit=find_key(doc, "poll_exit"),
                 blockers=[str(b) for b in blockers] if isinstance(blockers, list) else [str(blockers)],
                 unverified=find_key(doc, "unverified"), rehearsal=find_key(doc, "scenario_origin") == "rehearsal",
                 proof=bool(find_key(doc, "proof")))


def _texts(lang: str) -> dict:
    return catalogue(lang)["trial"]


def trial_name(s: Story, lang: str) -> str:
    """The trial's target as a person reads it: its skill and its plugin (``greet（hello のスキル）``)."""
    t = _texts(lang)
    return (t["name"] if s.plugin else t["name_no_plugin"]).format(skill=s.skill, plugin=s.plugin)


def first_sentence(text: str, lang: str) -> str:
    """The first sentence of ``text`` without its full stop (``。`` in Japanese, ``.`` followed by a space or the
    end in English)."""
    text = text.strip()
    if lang == "ja":
        head = text.split("。", 1)[0]
    else:
        head = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return head.rstrip("。.")


def _clause(sentence: str, lang: str) -> str:
    """A sentence made the clause after a colon: first sentence, no stop, lower case first letter in English."""
    head = first_sentence(sentence, lang)
    if lang != "ja" and head[:1].isupper() and head[1:2].islower():
        head = head[0].lower() + head[1:]
    return head


def cause_sentence(s: Story, lang: str) -> str:
    """The plain sentence of why the trial stopped: the stop reason's sentence; else, by the last poll exit, what
    happened (a question stopped it, it stalled, the time cap); else a proof trial's rule or the general one."""
    t = _texts(lang)
    unknown = reason_sentence(None, lang)
    if s.stop_reason and reason_sentence(s.stop_reason, lang) != unknown:
        return reason_sentence(s.stop_reason, lang)
    if s.poll_exit in t["poll_exit"] and not s.reached_end:
        return t["poll_exit"][s.poll_exit]
    if s.overall == "BLOCKED":
        return t["cause"]["blocked"]
    if s.proof:
        return t["cause"]["proof"]
    return t["cause"]["fail"]


def help_clause(s: Story, lang: str) -> str:
    """What a person had to do for it: ``2 nudges; 1 question answered for it`` in the language's words."""
    t = _texts(lang)["help"]
    parts = []
    if s.nudges:
        parts.append(t["nudges"].format(n=s.nudges))
    if s.gates:
        parts.append(t["gates"].format(n=s.gates))
    return t["join"].join(parts)


def _summary_key(s: Story) -> str:
    if s.overall == "PASS":
        return "pass_unverified" if (s.unverified or "").strip() else "pass"
    if s.overall == "BLOCKED":
        # It got to the end but its goal was not judged (the evaluator gave no valid answer: README "Whose failure it
        # is"): never "could
        # not be tried to the end", never "did not achieve its goal".
        return "blocked_unjudged" if s.reached_end and s.goal is None else "blocked"
    if s.overall == "DEGRADED":
        if s.goal == "FAIL":
            return "degraded_goal"
        return "degraded_unjudged" if s.goal is None else "degraded_help"
    return "fail_finished" if s.reached_end else "fail_unfinished"


def summary(doc: Mapping[str, Any], lang: str) -> str:
    """One sentence in ``lang`` saying what happened in the trial of ``doc`` (verdict.json ``summary``): the skill
    and its plugin, whether it got to the end, whether the result was there, the help it needed, why it stopped,
    and that a rehearsal's model was a script. Raises KeyError for a language without a catalogue."""
    s = story(doc)
    t = _texts(lang)
    key = _summary_key(s)
    text = t["summary"][key].format(name=trial_name(s, lang), cause=_clause(cause_sentence(s, lang), lang))
    extra = help_clause(s, lang)
    if key == "degraded_help":
        text += t["paren"].format(extra or t["help"]["someone"])
    elif extra and s.overall != "PASS":
        text += t["paren"].format(extra)
    if s.rehearsal:
        text += t["rehearsal"]
    return text + t["stop"]


def summariser(lang: str | None = None, env: Mapping[str, str] | None = None) -> Callable[[Mapping[str, Any]], str]:
    """:func:`summary` in the message language (``lang``, else env ``LIVE_TRIAL_LANG``, else Japanese), for
    :func:`live_trial.acceptance.verdict.build_verdict`; a language without a catalogue falls back to the default, so
    a verdict is never lost to a bad setting."""
    try:
        chosen = resolve_lang(lang, env)
    except RefusedInput:
        chosen = DEFAULT_LANG
    return lambda doc: summary(doc, chosen)


def next_step(doc: Mapping[str, Any], seen: Seen | None = None) -> Step:
    """The step a person should take after the trial of ``doc``, from its stop reason and what was ``seen``.

    A PASS: ``none`` (a live trial); a rehearsal's by how it was played: ``live`` (drop ``--rehearsal``),
    ``live_replay`` (record again, or run live), ``live_scripted`` (a script answered). Else the stop reason's row
    (:class:`~live_trial.stop_reasons.StopReason` ``step``) when its step is one of :data:`BEFORE_BLOCKED`; a last
    poll exit HARD_CAP is ``hard_cap`` too; a BLOCKED verdict is ``retry`` (not the skill's fault); then the row's
    step (``retry`` only through the BLOCKED rule); then ``goal``, ``gate_in_skill``, ``self_driven``, ``proof``,
    ``look`` (the general one). Steps with values: ``gate_answer`` (question, option), ``gate_option`` (question,
    options, the answer given), ``stall_limit`` (seconds: the
    silence seen before the STALL), ``hard_cap`` (seconds), ``install`` (tool), ``model`` (the model the service did
    not know)."""
    s = story(doc)
    seen = seen or Seen()
    row = StopReason.of(s.stop_reason)
    if s.overall == "PASS":
        return Step({"tape": "live_replay", "live": "live_scripted"}.get(seen.played or "", "live")
                    if s.rehearsal else "none")
    if row is not None and row.step in BEFORE_BLOCKED:
        return _row_step(row, seen)
    if s.poll_exit == PollExit.HARD_CAP:
        return _row_step(StopReason.HARD_CAP, seen)
    if s.overall == "BLOCKED":
        return Step("retry")
    if row is not None and row.step != "retry":
        return _row_step(row, seen)
    if s.overall == "DEGRADED" and s.goal == "FAIL":
        return Step("goal")
    if s.overall == "DEGRADED" and s.gates:
        return Step("gate_in_skill")
    if s.nudges:
        return Step("self_driven")
    if s.proof:
        return Step("proof")
    return Step("look")


def _row_step(row: StopReason, seen: Seen) -> Step:
    """The step of ``row``, with the values its sentence names from what the trial's records show."""
    values: dict[str, dict] = {
        "install": {"tool": row.removesuffix("_missing")},
        "hard_cap": {"seconds": _seconds(seen.hard_cap_s)},
        "budget": {"usd": f"{seen.budget_usd:g}" if seen.budget_usd else None},
        "stall_limit": {"seconds": _seconds(seen.silent_s)},
        "gate_answer": {"question": seen.question, "option": seen.options[0] if seen.options else None},
        "gate_option": {"question": seen.question, "answer": seen.answer,
                        "options": ", ".join(f'"{o}"' for o in seen.options) or None},
        "model": {"model": seen.model}}
    return Step(row.step, values.get(row.step, {}))


def _seconds(value: float | None) -> int | None:
    return int(math.ceil(value)) if value else None


def next_step_sentence(step: Step, lang: str) -> str:
    """``step`` in plain words (no command, flag or path); a key whose values are unknown uses its ``_plain``
    wording; the general sentence for an unknown key; empty for ``none``."""
    t = _texts(lang)["next"]
    if step.key == "none":
        return ""
    values = {k: v for k, v in step.params.items() if v not in (None, "")}
    needed = set(re.findall(r"{(\w+)}", t.get(step.key, "")))
    if step.key not in t or not needed <= set(values):
        return t.get(step.key + "_plain") or t["look"]
    return t[step.key].format(**values)


def reason_rows(lang: str) -> list[dict]:
    """Every stop reason (:class:`~live_trial.stop_reasons.StopReason`, in its order) as a person reads it in
    ``lang``: ``code``, ``whose``, ``verdict``, ``why`` (the English clause of the verdict's reason), ``sentence`` (its
    plain sentence) and ``next`` (what the message of a trial stopped for it says to do next, in its wording for
    values the trial's records did not give)."""
    rows = []
    for row in StopReason:
        step = next_step({"overall": {"verdict": row.verdict}, "stop_reason": str(row)})
        rows.append({"code": str(row), "whose": str(row.whose), "verdict": row.verdict, "why": row.why,
                     "sentence": reason_sentence(row, lang), "next": next_step_sentence(step, lang)})
    return rows


def user_names(doc: Mapping[str, Any], *texts: str, workdir: Path | str | None = None) -> set[str]:
    """The user's own names in a trial's message: the plugin, the skill, ``plugin:skill``, the file names that
    ``texts`` (the skill's description, the evaluator's blockers) mention (alone, or last in a path), and the names of
    the files the session added or changed (``side-effects/files.json`` in ``workdir``). Never a harness file
    (``status.json``, ``verdict.json`` ...), never a path (a name with a slash). The MCP tools they (or the
    evidence) name, ``mcp__<server>__<tool>``, are the plugin's own too."""
    s = story(doc)
    names = {s.skill, s.target} | ({s.plugin} if s.plugin else set())
    for text in texts:
        names.update(_FILE_NAME.findall(text or ""))
    for text in (*texts, evidence_text(doc.get("evidence"))):   # its plugin's MCP tools, named as the CLI names them
        names.update(_MCP_TOOL.findall(text or ""))
    if workdir:
        try:
            changes = parse_json((Path(workdir) / wf.SIDE_EFFECTS_LIST_PATH).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            changes = {}
        for key in ("added", "changed"):
            for rel in changes.get(key) or [] if isinstance(changes, dict) else []:
                names.add(Path(str(rel)).name)
    return {n for n in names if n and n != "-" and "/" not in n and "\\" not in n and n not in HARNESS_NAMES}


def evidence_text(evidence: Any) -> str:
    """What the evidence items observed, joined: ``"1 file written; 1 Skill call"`` (a string is kept as is)."""
    if isinstance(evidence, str):
        return evidence
    items = []
    for item in evidence or []:
        if isinstance(item, Mapping):
            items.append(str(item.get("observed") or item.get("claim") or ""))
        elif item:
            items.append(str(item))
    return "; ".join(i for i in items if i)


@dataclass(frozen=True)
class Message:
    """The parts of the message that ends a trial: the notification ``kind``, the ``objective`` (what the skill is
    for, naming it), the ``detail`` (what was found), the ``next`` step, the ``allowed`` user names."""

    kind: str
    objective: str
    detail: str
    next: str
    allowed: frozenset


def compose(doc: Mapping[str, Any], lang: str, *, description: str | None = None,
            workdir: Path | str | None = None) -> Message:
    """The message that ends the trial of ``doc``: PASS -> done ✅ (detail: what was observed), PASS with something
    not confirmed -> mostly_done 🟡, anything else -> not_working ⚠️ (detail: the summary sentence, the rest of the
    stop reason's sentences, the evaluator's blockers; then the next step). ``description``: the skill's promise
    (else the objective is its name alone); ``workdir`` adds what the trial's records show. The question left
    unanswered and its options are the skill's own words, and an answer given that was none of them and the model the
    service did not know are the user's: they are allowed names too."""
    s = story(doc)
    t = _texts(lang)
    name = trial_name(s, lang)
    objective = t["objective"].format(name=name, description=description) if description else name
    seen = seen_in_workdir(workdir)
    allowed = frozenset(user_names(doc, description or "", *s.blockers, workdir=workdir)
                        | {n for n in (seen.question, *seen.options, seen.answer, seen.model) if n})
    if s.overall == "PASS" and (s.unverified or "").strip():
        return Message("mostly_done", objective, str(s.unverified), "", allowed)
    if s.overall == "PASS":
        detail = evidence_text(find_key(doc, "evidence")) or find_key(doc, "evidence_text") or summary(doc, lang)
        return Message("done", objective, str(detail), "", allowed)
    parts = [summary(doc, lang)]
    cause = cause_sentence(s, lang)
    rest = cause.strip()[len(first_sentence(cause, lang)):].lstrip("。. ").strip()
    if rest:
        parts.append(rest)
    if s.goal == "FAIL" and s.blockers:
        parts.append(t["blockers"].format(blockers="; ".join(s.blockers)))
    step = next_step(doc, seen)
    return Message("not_working", objective, joined(parts, lang), next_step_sentence(step, lang), allowed)


def joined(parts: list[str], lang: str) -> str:
    """Sentences one after another: each gets a full stop when it has none (``。`` or ``.``); a space between them in
    English."""
    out = []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        ends = ("。", "！", "？", ".", "!", "?") if lang == "ja" else (".", "!", "?", "。")
        out.append(part if part.endswith(ends) else part + ("。" if lang == "ja" else "."))
    return ("" if lang == "ja" else " ").join(out)
