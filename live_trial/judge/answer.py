"""The rules the fresh evaluator's answer must meet (seed 001 "goal verification"; seed 000 rule 1; README "Evidence,
watches and messages to a person").

Answer shape (``ANSWER_SCHEMA``, sent to ``claude -p --json-schema``)::

    {"verdict": "PASS"|"FAIL", "blockers": [str],
     "evidence": [{"claim": str, "source": "<a file the session produced> | <uuid of a tool call record>",
                   "quote": "<verbatim piece of the source>", "observed": "what was seen, counted"}],
     "checks": [{"id": "<criterion id>", "result": "pass"|"fail", "evidence": str}],
     "unverified": [str]}

:func:`review` sorts what is wrong into two kinds:

- the form (refused, one retry, then "the evaluator gave no valid judgement"): not an object, a verdict other than
  PASS or FAIL, malformed lists, a FAIL without a blocker, a score, rating, grade, confidence or points field anywhere
  (:func:`live_trial.judge.sources.is_score_key`) or such a word next to a number in any text field (blockers,
  claim, observed, quote, a check's evidence, unverified: :func:`live_trial.judge.evidence.score_words`, the rule of
  ``verdict --evidence``);
- the evidence (refused, one retry, then goal FAIL "insufficient evidence: <why>"): a PASS without an evidence item;
  an item whose source may not be cited (:mod:`live_trial.judge.citable`: the session's own words in any spelling,
  the marker, the harness's files, the author's files, ``out/``, a failed call), whose quote is not in the source or
  whose counts do not hold (:mod:`live_trial.judge.quotes`); a PASS without ``unverified`` whose items only name
  proxies (launched, finished, tests passed, "deployed 2 services" ...).

A FAIL's evidence items that do not hold are dropped (the FAIL stands on its blockers). Not refused but counted as a
failed criterion: a check with empty evidence, a missing check (:func:`settle`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from live_trial.errors import RefusedInput
from live_trial.judge.citable import Cited, resolve
from live_trial.judge.context import Context
from live_trial.judge.evidence import check_evidence, score_words
from live_trial.judge.quotes import count_problems, quote_problem
from live_trial.judge.sources import score_fields

__all__ = ["ANSWER_SCHEMA", "Review", "answer_problems", "review", "settle", "split_criteria"]

NO_VALID_JUDGEMENT = "the evaluator gave no valid judgement"
INSUFFICIENT_EVIDENCE = "insufficient evidence"
EVALUATOR_VERIFY_BY = {"evaluator", "live-trial", None, ""}
ITEM_KEYS = ("claim", "source", "quote", "observed")

ANSWER_SCHEMA: dict = {
    "type": "object",
    "required": ["verdict", "blockers", "evidence", "checks"],
    "properties": {
        "verdict": {"type": "string", "enum": ["PASS", "FAIL"],
                    "description": "PASS only when the promised result is really there"},
        "blockers": {"type": "array", "items": {"type": "string"},
                     "description": "what stands between the artifacts and the promise; at least one for FAIL"},
        "evidence": {
            "type": "array",
            "items": {
                "type": "object",
                "required": list(ITEM_KEYS),
                "properties": {
                    "claim": {"type": "string", "description": "what this item shows"},
                    "source": {"type": "string", "description": "a file the session created or changed (as listed), "
                                                                "or the uuid of a tool call record or its result"},
                    "quote": {"type": "string", "description": "a short verbatim piece of that source"},
                    "observed": {"type": "string", "description": "what you saw there, counted"},
                },
            },
        },
        "checks": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "result", "evidence"],
                "properties": {
                    "id": {"type": "string"},
                    "result": {"type": "string", "enum": ["pass", "fail"]},
                    "evidence": {"type": "string"},
                },
            },
        },
        "unverified": {"type": "array", "items": {"type": "string"},
                       "description": "what this trial cannot show yet (checked later by a watch); [] when nothing"},
    },
}


@dataclass
class Review:
    """What is wrong with an answer: ``form`` and ``evidence`` problems (module docstring), ``dropped``: why a FAIL's
    items were left out, ``items``: the evidence items that hold (``{claim, source, quote, observed}``)."""

    form: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    items: list[dict] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Every reason the answer is refused (empty: it is valid)."""
        return self.form + self.evidence


def split_criteria(frontmatter: dict) -> tuple[list[dict], list[dict]]:
    """Return (criteria for the evaluator, criteria left to tests/scripts) from ``feedback_contract.criteria``.

    Criteria whose ``verify_by`` is ``evaluator``, ``live-trial`` or absent are judged here; ``test`` and
    ``script`` criteria are verified elsewhere and only listed as skipped.
    """
    contract = frontmatter.get("feedback_contract") if isinstance(frontmatter, dict) else None
    items = contract.get("criteria") if isinstance(contract, dict) else None
    judged: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for item in items or []:
        if not isinstance(item, dict) or not item.get("id"):
            continue
        entry = {"id": str(item["id"]), "text": str(item.get("text", "")), "verify_by": item.get("verify_by")}
        (judged if entry["verify_by"] in EVALUATOR_VERIFY_BY else skipped).append(entry)
    return judged, skipped


def _strings(answer: Any, where: str = "") -> list[tuple[str, str]]:
    """``(field, text)`` of every text field of an answer that words of scoring may not appear in: every string at
    any depth (blockers, each item's claim and observed, a check's evidence, unverified, and any field the answer
    adds), except the ones that are names or choices (``verdict``, a check's ``id`` and ``result``, an item's
    ``source``: a path or a record uuid) and an item's ``quote`` (the source's words, checked verbatim)."""
    if isinstance(answer, str):
        return [(where or "answer", answer)]
    out: list[tuple[str, str]] = []
    if isinstance(answer, dict):
        for key, value in answer.items():
            if key in _NAMES and isinstance(value, str):
                continue
            label = {"evidence": "evidence", "checks": "check"}.get(str(key), str(key))
            out += _strings(value, f"{where} {label}".strip())
    elif isinstance(answer, list):
        for i, item in enumerate(answer):
            text = _strings(item, f"{where} {i}" if isinstance(item, dict) else where)
            out += text
    return out


#: Fields whose strings are names or choices, not text, and an evidence item's ``quote``: the source's own words,
#: checked verbatim against it (:func:`live_trial.judge.quotes.quote_problem`), so a score in it is the source's ("a
#: line of the report says progress: 85% done"), never the evaluator's: never read for words of scoring.
_NAMES = frozenset({"verdict", "id", "result", "source", "quote"})


def _form(answer: dict) -> list[str]:
    problems = [f"a score-like field is not allowed ({p})" for p in score_fields(answer)]
    for where, text in _strings(answer):
        problems += [f"a score is not allowed in {where} ({s!r})" for s in score_words(text)]
    verdict = answer.get("verdict")
    if verdict not in ("PASS", "FAIL"):
        problems.append(f"verdict must be PASS or FAIL, not {verdict!r}")
    blockers = answer.get("blockers")
    if not isinstance(blockers, list) or not all(isinstance(b, str) for b in blockers):
        problems.append("blockers must be a list of strings")
    elif verdict == "FAIL" and not [b for b in blockers if b.strip()]:
        problems.append("a FAIL needs at least one blocker")
    evidence = answer.get("evidence")
    if not isinstance(evidence, list) or not all(isinstance(e, dict) for e in evidence):
        problems.append("evidence must be a list of {claim, source, quote, observed} objects")
    checks = answer.get("checks", [])
    if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
        problems.append("checks must be a list of {id, result, evidence} objects")
    unverified = answer.get("unverified", [])
    if not isinstance(unverified, list) or not all(isinstance(u, str) for u in unverified):
        problems.append("unverified must be a list of strings")
    return problems


def item_problems(i: int, item: dict, ctx: Context) -> tuple[list[str], Cited | None]:
    """Why evidence item ``i`` does not hold (empty when it does), and the source it cites when that may be cited."""
    where = f"evidence item {i}"
    empty = [k for k in ITEM_KEYS if not str(item.get(k) or "").strip()]
    if "source" in empty:
        return [f"{where} has no source"], None
    cited = resolve(str(item["source"]), ctx)
    where = f"evidence item {i} ({str(item['source'])[:120]!r})"
    if isinstance(cited, str):
        return [f"{where} {cited}"], None
    problems = [f"{where} has an empty {k}" for k in empty if k != "quote"]
    quote = quote_problem(item.get("quote"), cited.text)
    if quote:
        problems.append(f"{where} {quote}")
    text = f"{item.get('claim') or ''}\n{item.get('observed') or ''}"
    problems += [f"{where} {p}" for p in count_problems(text, cited.body, ctx.produced.changed,
                                                        one_file=cited.one_file)]
    return problems, cited


def _counted(observed: str) -> bool:
    try:
        return check_evidence("PASS", observed, None) == "done"
    except RefusedInput:
        return False


def review(answer: Any, ctx: Context) -> Review:
    """Check an answer against the module docstring's rules and the workdir's files and transcript."""
    if not isinstance(answer, dict):
        return Review(form=["the answer is not a JSON object"])
    out = Review(form=_form(answer))
    evidence = answer.get("evidence")
    evidence = evidence if isinstance(evidence, list) else []
    passing = answer.get("verdict") == "PASS"
    for i, item in enumerate(e for e in evidence if isinstance(e, dict)):
        problems, _ = item_problems(i, item, ctx)
        if not problems:
            out.items.append({k: str(item[k]).strip() for k in ITEM_KEYS})
        elif passing:
            out.evidence += problems
        else:
            out.dropped += problems
    unverified = [u for u in answer.get("unverified") or [] if isinstance(u, str) and u.strip()]
    if passing:
        if not evidence:
            out.evidence.append("a PASS needs at least one evidence item")
        elif not out.evidence and not unverified and not any(_counted(e["observed"]) for e in out.items):
            out.evidence.append("the evidence only names proxies (ran, finished, passed, launched, deployed, running, "
                                "written...): name what happened, counted, e.g. '1 file written with 3 keys'")
    return out


def answer_problems(answer: Any, ctx: Context) -> list[str]:
    """Every reason the answer is refused (empty list = valid): :attr:`Review.problems` of :func:`review`."""
    return review(answer, ctx).problems


def settle(answer: dict, ctx: Context, checked: Review | None = None) -> dict:
    """Turn a valid answer into the goal result: criterion checks with empty evidence (or missing) count as fail.

    Returns ``{"goal_result", "blockers", "evidence", "checks", "unverified"}``: the evidence items that hold
    (``checked``, else reviewed here), a failed criterion makes a PASS a FAIL with one blocker per failed criterion,
    and ``unverified`` (what the trial cannot show yet) is kept for a PASS only.
    """
    checked = checked or review(answer, ctx)
    given = {str(c.get("id")): c for c in answer.get("checks") or [] if isinstance(c, dict)}
    checks = []
    for crit in ctx.criteria:
        c = given.get(crit["id"])
        ev = str((c or {}).get("evidence") or "").strip()
        result = (c or {}).get("result") if ev else "fail"
        checks.append({"id": crit["id"], "result": "pass" if result == "pass" else "fail",
                       "evidence": ev or ("not checked" if c is None else "no evidence given")})
    blockers = [b.strip() for b in answer.get("blockers") or [] if b.strip()]
    for c in checks:
        if c["result"] == "fail":
            blockers.append(f"criterion {c['id']} failed: {c['evidence']}")
    goal = "PASS" if answer["verdict"] == "PASS" and all(c["result"] == "pass" for c in checks) else "FAIL"
    if goal == "FAIL" and not blockers:
        blockers = [NO_VALID_JUDGEMENT]
    unverified = [u.strip() for u in answer.get("unverified") or [] if isinstance(u, str) and u.strip()]
    return {"goal_result": goal, "blockers": blockers if goal == "FAIL" else [], "evidence": checked.items,
            "checks": checks, "unverified": unverified if goal == "PASS" else []}


def insufficient(problems: list[str]) -> str:
    """The blocker of a goal FAIL whose evidence did not hold after the retry: "insufficient evidence: <why>"."""
    return f"{INSUFFICIENT_EVIDENCE}: " + "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)"
                                                                       if len(problems) > 3 else "")
