"""One line per criterion of the skill's ``feedback_contract`` in its verdict (seed 001 frontmatter
``feedback_contract.criteria``; README "Evidence, watches and messages to a person").

Each criterion the evaluator judges (``verify_by`` evaluator, live-trial or none) is ``pass`` or ``fail`` with the
evaluator's evidence, or ``not_judged`` when the goal was not judged (the run never completed, the evaluator could not
run); ``fail`` always means judged and failed. Criteria verified by tests or scripts (``verify_by`` test, script, or
anything else) are ``not_checked_here``: the trial does not run them, and a PASS says so in plain words
(:func:`elsewhere_sentence`). Pure: data in, data out.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

from live_trial.judge.answer import split_criteria

RESULTS = ("pass", "fail", "not_checked_here", "not_judged")
_BY = {"test": ("a test", "tests"), "script": ("a script", "scripts")}


def criteria_table(frontmatter: Mapping[str, Any], checks: Iterable[Mapping[str, Any]] | None,
                   not_judged_why: str = "the goal was not judged") -> list[dict[str, Any]]:
    """``[{id, text, verify_by, result, evidence}]`` for every criterion of ``frontmatter``'s feedback_contract, in its
    order. ``checks``: the evaluator's ``[{id, result, evidence}]`` (None when the goal was not judged: the evaluator's
    criteria are then ``not_judged`` with ``not_judged_why``)."""
    judged, elsewhere = split_criteria(dict(frontmatter or {}))
    given = {str(c.get("id")): c for c in checks or () if isinstance(c, Mapping)}
    rows = {}
    for crit in judged:
        c = given.get(crit["id"])
        if checks is None:
            result, evidence = "not_judged", not_judged_why
        elif c is None:
            result, evidence = "fail", "not checked by the evaluator"
        else:
            result = "pass" if c.get("result") == "pass" else "fail"
            evidence = str(c.get("evidence") or "") or "no evidence given"
        rows[crit["id"]] = {**_row(crit), "result": result, "evidence": evidence}
    for crit in elsewhere:
        by = str(crit["verify_by"])
        rows[crit["id"]] = {**_row(crit), "result": "not_checked_here",
                            "evidence": f"verified by {_BY.get(by, (by, by))[1]}, which this trial does not run"}
    order = [c["id"] for c in _all(frontmatter)]
    return [rows[i] for i in dict.fromkeys(order) if i in rows]


def _row(crit: Mapping[str, Any]) -> dict[str, Any]:
    by = crit.get("verify_by")
    return {"id": crit["id"], "text": crit["text"], "verify_by": str(by) if by not in (None, "") else None}


def _all(frontmatter: Mapping[str, Any]) -> list[dict[str, Any]]:
    judged, elsewhere = split_criteria(dict(frontmatter or {}))
    contract = (frontmatter or {}).get("feedback_contract")
    items = contract.get("criteria") if isinstance(contract, Mapping) else None
    known = {c["id"]: c for c in judged + elsewhere}
    return [known[str(i["id"])] for i in items or () if isinstance(i, Mapping) and str(i.get("id")) in known]


def elsewhere_counts(rows: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """How many criteria are ``not_checked_here``, by ``verify_by``."""
    return Counter(str(r.get("verify_by")) for r in rows if r.get("result") == "not_checked_here")


def elsewhere_sentence(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """"2 criteria are checked by tests, not by this trial." for the ``not_checked_here`` rows; None when none."""
    counts = elsewhere_counts(rows)
    n = sum(counts.values())
    if not n:
        return None
    kinds = sorted(counts)
    if n == 1:
        by = _BY.get(kinds[0], (kinds[0], kinds[0]))[0]
        return f"1 criterion is checked by {by}, not by this trial."
    return f"{n} criteria are checked by {' and '.join(_BY.get(k, (k, k))[1] for k in kinds)}, not by this trial."


def elsewhere_note(rows: Iterable[Mapping[str, Any]] | None) -> tuple[int, str] | None:
    """``(n, key)`` for a plain-language notice about the ``not_checked_here`` rows: ``key`` is ``test`` or ``script``
    when all of them are checked that way, else ``other`` (a key of ``notes.criteria_elsewhere`` in the notification
    catalogues); None when there are none."""
    counts = elsewhere_counts(rows or ())
    if not counts:
        return None
    kinds = set(counts)
    return sum(counts.values()), (kinds.pop() if len(kinds) == 1 and kinds <= {"test", "script"} else "other")
