"""What a person is told about an activation case: one sentence (the result's ``summary``) and the one message that
ends the run (seed 000 "通知文の書き方"; README "Does it start by itself?").

The sessions of the prompts send no message of their own: a person hears once per activation case, in the words of
the catalogues' ``activation`` sentences (plain counts of requests and tries: no prompt text, no jargon). The kind
follows the verdict: PASS done ✅, FLAKY flaky ⚠️ ("only sometimes", never a success), FAIL and BLOCKED not_working ⚠️
with the next step. A rehearsal says its model was a script: it proves the mechanics, never the description.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from live_trial.notices.case_message import case_name
from live_trial.notices.catalogue import catalogue, resolve_lang
from live_trial.notices.outcome import joined


def _counts(doc: Mapping[str, Any]) -> dict[str, int]:
    prompts = list(doc.get("prompts") or [])
    should = [p for p in prompts if p.get("should_trigger")]
    should_not = [p for p in prompts if not p.get("should_trigger")]
    c = doc.get("confusion") or {}
    return {"prompts": len(prompts), "should": len(should), "should_not": len(should_not),
            "should_tries": sum(int(p.get("samples") or 0) for p in should),
            "should_not_tries": sum(int(p.get("samples") or 0) for p in should_not),
            "sessions": sum(int(p.get("samples") or 0) for p in prompts),
            "tp": int(c.get("true_positive") or 0), "fp": int(c.get("false_positive") or 0),
            "wrong": sum(1 for p in prompts if p.get("status") == "wrong"),
            "mixed": sum(1 for p in prompts if p.get("status") == "mixed")}


def activation_summary(doc: Mapping[str, Any], lang: str) -> str:
    """The activation result's one sentence in ``lang``: started whenever it should and never otherwise (PASS), did
    not start as it should for n requests (FAIL), only sometimes (FLAKY), could not be tried (BLOCKED, not the skill's
    fault) or was not loaded. ``doc``: the activation.json fields ``target``, ``plugin``, ``skill``, ``case``,
    ``verdict``, ``prompts``, ``confusion``, ``reasons``, ``blocked_retries``."""
    texts = catalogue(lang)["activation"]
    values = {"name": case_name(doc, lang), **_counts(doc)}
    verdict = doc.get("verdict")
    if verdict == "PASS":
        return str(texts["pass"]).format(**values)
    if verdict == "FLAKY":
        return str(texts["flaky"]).format(**values)
    if verdict == "FAIL":
        loaded = not any(p.get("ended") == "not_loaded" for q in doc.get("prompts") or [] for p in q.get("runs") or [])
        return str(texts["fail" if loaded else "not_loaded"]).format(**values)
    case = catalogue(lang)["case"]
    retries = doc.get("blocked_retries") or {}
    stopped = sum(1 for q in doc.get("prompts") or [] for p in q.get("runs") or [] if p.get("outcome") == "blocked")
    cause = (str(case["cause_retries"]).format(blocked=stopped, max=retries.get("max", 0))
             if stopped > int(retries.get("max", 0)) else str(case["cause_stopped"]))
    return str(texts["blocked"]).format(cause=cause, **values)


def activation_message(doc: Mapping[str, Any], lang: str) -> tuple[str, str, str, str, frozenset]:
    """``(kind, objective, detail, next step, allowed names)`` of the message that ends an activation run."""
    texts = catalogue(lang)["activation"]
    verdict = str(doc.get("verdict"))
    parts = [activation_summary(doc, lang), str(texts["counts"]).format(**_counts(doc))]
    others = sorted({o for q in doc.get("prompts") or [] if q.get("should_trigger")
                     for p in q.get("runs") or [] for o in p.get("others") or []})
    if others:
        parts.append(str(texts["instead"]).format(others=", ".join(others)))
    acceptance = doc.get("acceptance")
    if isinstance(acceptance, Mapping) and acceptance.get("summary"):
        parts.append(str(texts["acceptance"]).format(summary=str(acceptance["summary"]).rstrip(".。")))
    not_loaded = verdict == "FAIL" and any(p.get("ended") == "not_loaded" for q in doc.get("prompts") or []
                                           for p in q.get("runs") or [])
    next_key = {"PASS": None, "FLAKY": "next_flaky", "BLOCKED": "next_blocked"}.get(
        verdict, "next_not_loaded" if not_loaded else "next_fail")
    kind = {"PASS": "done", "FLAKY": "flaky"}.get(verdict, "not_working")
    allowed = frozenset({str(doc.get("case") or ""), str(doc.get("skill") or ""), str(doc.get("plugin") or ""),
                         *others} - {""})
    return kind, case_name(doc, lang), joined(parts, lang), str(texts[next_key]) if next_key else "", allowed


def notify_activation(eval_root: Path, doc: Mapping[str, Any], lang: str | None = None, *,
                      env: Mapping[str, str] | None = None) -> dict:
    """Send the one message of an activation run and return its record (a line of notifications.jsonl; ``refs``
    hold the run's id, the target, the case and the verdict). A rehearsal's message says its model was a script."""
    from live_trial.notices.notify import notify

    lang = resolve_lang(lang, env)
    kind, objective, detail, next_step, allowed = activation_message(doc, lang)
    if doc.get("scenario_origin") == "rehearsal":
        detail = joined([detail, catalogue(lang)["notes"]["rehearsal"]], lang)
    refs = {"activation_run_id": str(doc.get("activation_run_id")), "target": str(doc.get("target")),
            "case": str(doc.get("case")), "overall": str(doc.get("verdict"))}
    return notify(eval_root, kind, objective, detail, lang, next_step=next_step, allowed=allowed, refs=refs, env=env)
