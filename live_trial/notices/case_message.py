"""What a person is told about a case run: one sentence with its pass rate (the case verdict's ``summary``) and the
one message that ends it (seed 000 "通知文の書き方"; references/suite-format.md "Repeats").

The attempts of a case run send no message of their own: a person hears once per case, with the pass rate ("passed
2 of its 3 tries"), in the words of the catalogues' ``case`` sentences. The message's kind follows the case verdict:
PASS done ✅, FLAKY flaky ⚠️ ("works only sometimes", never a success), anything else not_working ⚠️ with what the
first attempt that did not pass showed and its next step (:func:`live_trial.notices.outcome.compose` of that
attempt's verdict).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from live_trial.notices.catalogue import catalogue, resolve_lang
from live_trial.notices.outcome import Message, compose, joined, story, trial_name

DEFAULT_CASE = "default"


def case_name(doc: Mapping[str, Any], lang: str) -> str:
    """The case as a person reads it: the skill and its plugin, and the case's name when it is a named one."""
    t = catalogue(lang)
    name = trial_name(story({"target": doc.get("target"), "plugin": doc.get("plugin"), "skill": doc.get("skill")}),
                      lang)
    case = str(doc.get("case") or DEFAULT_CASE)
    return name if case == DEFAULT_CASE else str(t["case"]["case_name"]).format(name=name, case=case)


def case_summary(doc: Mapping[str, Any], lang: str) -> str:
    """The case verdict's one sentence with its pass rate, in ``lang``: all k passed, passed p of n (FLAKY), none
    passed, or could not be tried k times (BLOCKED, not the skill's fault) and why. ``doc``: the case verdict's
    ``target``, ``plugin``, ``skill``, ``case``, ``repeats``, ``verdict``, ``pass_rate``, ``blocked_retries`` and
    ``attempts``."""
    texts = catalogue(lang)["case"]
    rate = doc.get("pass_rate") or {}
    values = {"name": case_name(doc, lang), "passed": rate.get("passed", 0), "samples": rate.get("samples", 0),
              "repeats": doc.get("repeats")}
    verdict = doc.get("verdict")
    if verdict == "PASS":
        return str(texts["pass"]).format(**values)
    if verdict == "FLAKY":
        return str(texts["flaky"]).format(**values)
    if verdict in ("FAIL", "DEGRADED"):
        return str(texts["none"]).format(**values)
    retries = doc.get("blocked_retries") or {}
    blocked = sum(1 for a in doc.get("attempts") or [] if not a.get("sample"))
    cause = (str(texts["cause_retries"]).format(blocked=blocked, max=retries.get("max", 0))
             if blocked > int(retries.get("max", 0)) else str(texts["cause_stopped"]))
    return str(texts["blocked"]).format(cause=cause, **values)


def case_message(doc: Mapping[str, Any], attempt_docs: Sequence[Mapping[str, Any] | None], lang: str, *,
                 description: str | None = None, eval_root: Path | None = None) -> Message:
    """The message that ends a case run (module docstring). ``attempt_docs``: each attempt's verdict document in
    order (None for an attempt stopped before it had one); ``description``: the skill's promise."""
    texts = catalogue(lang)["case"]
    attempts = list(doc.get("attempts") or [])
    docs = [(a, d) for a, d in zip(attempts, attempt_docs) if d is not None]
    failing = next(((a, d) for a, d in docs if a.get("verdict") != "PASS" and a.get("sample")), None)
    blocked = next(((a, d) for a, d in reversed(docs) if not a.get("sample")), None)
    verdict = doc.get("verdict")
    shown = (docs[-1] if verdict == "PASS" and docs else blocked if verdict == "BLOCKED" else failing) or (
        docs[-1] if docs else None)
    workdir = Path(eval_root) / str(shown[0]["workdir"]) if shown and eval_root and shown[0].get("workdir") else None
    one = compose(shown[1], lang, description=description, workdir=workdir) if shown else None
    parts = [case_summary(doc, lang)]
    if verdict == "FLAKY" and failing is not None:
        parts.append(str(texts["not_passed"]).format(summary=str(failing[0].get("summary") or "")))
    elif one is not None and verdict != "FLAKY":
        parts.append(one.detail)
    used = int((doc.get("blocked_retries") or {}).get("used") or 0)
    if used and verdict != "BLOCKED":
        parts.append(str(texts["retried"]).format(n=used))
    kind = {"PASS": "done", "FLAKY": "flaky"}.get(str(verdict), "not_working")
    next_step = str(texts["flaky_next"]) if verdict == "FLAKY" else (one.next if one and verdict != "PASS" else "")
    objective = one.objective if one is not None else case_name(doc, lang)
    allowed = frozenset((one.allowed if one else frozenset()) | {str(doc.get("case") or "")} - {""})
    return Message(kind, objective, joined(parts, lang), next_step, allowed)


def notify_case(eval_root: Path, doc: Mapping[str, Any], attempt_docs: Sequence[Mapping[str, Any] | None],
                lang: str | None = None, *, description: str | None = None,
                env: Mapping[str, str] | None = None) -> dict:
    """Send the one message of a case run and return its record (a line of notifications.jsonl; ``refs`` hold the
    case run's id, the target and the case verdict). A rehearsal's message says the model was a script; the
    attempts' costs are one sentence (README "What a trial costs")."""
    from live_trial.notices.notify import cost_sentence, notify

    lang = resolve_lang(lang, env)
    message = case_message(doc, attempt_docs, lang, description=description, eval_root=eval_root)
    detail = message.detail
    if doc.get("scenario_origin") == "rehearsal" and message.kind != "not_working":
        detail = joined([detail, catalogue(lang)["notes"]["rehearsal"]], lang)
    if cost := cost_sentence(doc.get("usage"), lang):
        detail = joined([detail, cost], lang)
    refs = {"case_run_id": str(doc.get("case_run_id")), "target": str(doc.get("target")),
            "case": str(doc.get("case")), "overall": str(doc.get("verdict"))}
    return notify(eval_root, message.kind, message.objective, detail, lang, next_step=message.next,
                  allowed=message.allowed, refs=refs, env=env)
