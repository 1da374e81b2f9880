"""A suite case's own criteria for the evaluator (references/suite-format.md, ``criteria``).

A case may add criteria to those of the skill's frontmatter (``feedback_contract.criteria``): each ``{id, text}``,
judged by the fresh evaluator like a frontmatter criterion with ``verify_by: evaluator``. They reach the evaluator's
request and the verdict's criteria lines the same way, through the target's frontmatter as the trial sees it
(:func:`with_criteria`), and they are part of the case's task contract (``scenario_id``). A trial records them in
its trial-state.json (``criteria``), so ``run --resume``, ``evaluate`` and ``verdict`` on its workdir judge and derive
with the same ones. An id the frontmatter already uses is refused (:func:`clashes`): one id, one criterion.
Pure.
"""
from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from live_trial.closure.index import Target


def criteria_pairs(raw: Iterable[Mapping[str, Any]] | None) -> tuple[tuple[str, str], ...]:
    """``((id, text), ...)`` of recorded criteria (trial-state.json's, a plan entry's), in order; () for none."""
    return tuple((str(c["id"]), str(c["text"])) for c in raw or () if isinstance(c, Mapping))


def clashes(frontmatter: Mapping[str, Any], criteria: Sequence[tuple[str, str]]) -> list[str]:
    """The ids of ``criteria`` the frontmatter's ``feedback_contract.criteria`` already has."""
    contract = (frontmatter or {}).get("feedback_contract")
    items = contract.get("criteria") if isinstance(contract, Mapping) else None
    taken = {str(i.get("id")) for i in items or () if isinstance(i, Mapping)}
    return [cid for cid, _ in criteria if cid in taken]


def with_criteria(target: Target, criteria: Sequence[tuple[str, str]]) -> Target:
    """``target`` whose frontmatter's ``feedback_contract.criteria`` ends with the case's ``criteria`` (``(id, text)``
    pairs), each ``verify_by: evaluator``; ``target`` itself when there are none. The frontmatter read from SKILL.md
    is never changed in place."""
    if not criteria:
        return target
    front = copy.deepcopy(dict(target.frontmatter or {}))
    contract = front.get("feedback_contract")
    contract = dict(contract) if isinstance(contract, Mapping) else {}
    items = list(contract["criteria"]) if isinstance(contract.get("criteria"), list) else []
    items += [{"id": cid, "text": text, "verify_by": "evaluator"} for cid, text in criteria]
    contract["criteria"] = items
    front["feedback_contract"] = contract
    return replace(target, frontmatter=front)
