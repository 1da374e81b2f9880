"""The diff ticket (seed 002 「差分チケット」): only what is missing, never the whole task again — what is missing, the
original intent, what already works, what to add — written from a verdict's blockers, criteria and evidence in the
person's language (``references/notifications.<lang>.json`` section ``ticket``).

Depth (the person's choice, seed 001 related section): ``light`` the first blocker only; ``standard`` every blocker;
``detailed`` every blocker and every criterion the evaluator found unmet. A verdict without blockers (DEGRADED by a
nudge or a rescue answer) gives its overall reasons instead. Pure: data in, text out.
"""
from __future__ import annotations

from typing import Any, Mapping

from live_trial.notices.catalogue import catalogue

LIGHT, DETAILED = "light", "detailed"


def ticket_items(doc: Mapping[str, Any], choice: str) -> list[dict[str, str]]:
    """``[{kind, text[, id]}]`` the ticket asks for from verdict ``doc``: ``blocker`` items (the evaluator's), else
    ``reason`` items (the overall reasons), cut to the first for light; for detailed also ``criterion`` items (the
    verdict's criteria with result ``fail``)."""
    items = [{"kind": "blocker", "text": str(b)} for b in doc.get("goal_blockers") or []]
    if not items:
        items = [{"kind": "reason", "text": str(r)} for r in (doc.get("overall") or {}).get("reasons") or []]
    if choice == LIGHT:
        return items[:1]
    if choice == DETAILED:
        items += [{"kind": "criterion", "id": str(c["id"]), "text": str(c.get("text") or "")}
                  for c in doc.get("criteria") or [] if c.get("result") == "fail"]
    return items


def works(doc: Mapping[str, Any], lang: str) -> list[str]:
    """What already works, as the records show it: the launch and completion when both passed ("on its own" only
    when it needed no nudge and no question answered for it: seed 001 verdict table), and the criteria the evaluator
    found met (its evidence of a FAIL shows what is missing: it goes under "Evidence")."""
    t = catalogue(lang)["ticket"]
    helped = bool(doc.get("nudge_count")) or bool(doc.get("gate_response_count"))
    out = [t["launch_ok_helped" if helped else "launch_ok"]] \
        if (doc.get("launch"), doc.get("completion")) == ("PASS", "PASS") else []
    out += [f"{c['id']}: {c.get('text')}" for c in doc.get("criteria") or [] if c.get("result") == "pass"]
    return out or [t["nothing_works"]]


def render(doc: Mapping[str, Any], *, n: int, max_rounds: int, choice: str, description: str, skill_dir: str,
           verdict_path: str, verdict_sha256: str, lang: str) -> tuple[str, list[dict[str, str]]]:
    """The ticket of round ``n`` as Markdown and its items (:func:`ticket_items`). ``description``: the skill's promise
    (the original intent); ``verdict_path`` / ``verdict_sha256``: the verdict it comes from."""
    t = catalogue(lang)["ticket"]
    items = ticket_items(doc, choice)
    lines = [f"# {t['title'].format(n=n, max=max_rounds, choice=choice, target=doc.get('target'))}", "",
             f"## {t['missing']}", ""]
    lines += [f"- {i['id'] + ': ' if i.get('id') else ''}{i['text']}" for i in items]
    lines += ["", f"## {t['intent']}", "", description.strip() or "-", "", f"## {t['works']}", ""]
    lines += [f"- {w}" for w in works(doc, lang)]
    lines += ["", f"## {t['add']}", ""]
    for i in items:
        lines.append("- " + (t["meet_criterion"].format(id=i["id"], text=i["text"]) if i["kind"] == "criterion"
                             else t["fix_blocker"].format(text=i["text"])))
    lines += ["", f"## {t['evidence']}", ""]
    lines += [f"- {e.get('claim')}: {e.get('observed')} ({e.get('source')})" for e in doc.get("evidence") or []] \
        or ["-"]
    lines += ["", f"## {t['source']}", "", f"- {verdict_path} ({verdict_sha256})", f"- {skill_dir}", "",
              t["rule"], ""]
    return "\n".join(lines), items
