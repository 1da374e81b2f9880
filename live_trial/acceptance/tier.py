"""The acceptance tier of a skill and what its frontmatter grounds, read from the frontmatter alone.

Seed 001 "適用境界": a skill whose hooks or allowed-tools (Skill, Agent, AskUserQuestion, ExitPlanMode) need a real
session is ``live``; other executing skills are ``fork``; the rest ``static``. Seed 001 "判定ロジック": a
``contractual`` gate answer counts only when the frontmatter declares the gate. Pure: used by plan and verdict alike.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping

from live_trial.errors import RefusedInput

LIVE_TOOLS = ("Skill", "Agent", "Task", "AskUserQuestion", "ExitPlanMode")


FORK_TOOLS = ("Bash", "Write", "Edit", "MultiEdit", "NotebookEdit")


def derive_tier(frontmatter: Mapping[str, Any]) -> str:
    """``live`` | ``fork`` | ``static`` from a skill's own frontmatter (seed 001 適用境界, derive_acceptance_tier).

    live: declares ``hooks`` or allowed-tools includes Skill, Agent (or its old name Task), AskUserQuestion or
    ExitPlanMode. fork: other executing skills (allowed-tools Bash, Write, Edit, MultiEdit, NotebookEdit, or a
    ``goal_seek`` loop). static: the rest.
    """
    return tier_and_reason(frontmatter)[0]


def tier_and_reason(frontmatter: Mapping[str, Any]) -> tuple[str, str]:
    """:func:`derive_tier` with the fact that decided it."""
    if frontmatter.get("hooks") not in (None, "", [], {}):
        return "live", "declares hooks"
    tools = allowed_tools(frontmatter)
    live = [t for t in LIVE_TOOLS if t in tools]
    if live:
        return "live", f"allowed-tools: {', '.join(live)}"
    fork = [t for t in FORK_TOOLS if t in tools]
    if fork:
        return "fork", f"allowed-tools: {', '.join(fork)}"
    if frontmatter.get("goal_seek") not in (None, "", False, [], {}):
        return "fork", "goal-seek loop"
    return "static", "no executing tools"


#: Tools whose pending call is a gate (live_trial.transcript.status GATE_TOOLS); naming one in allowed-tools grounds
#: ``contractual``.
GATE_TOOLS = ("AskUserQuestion", "ExitPlanMode")


GUARD_KEY = "external_mutation_guard"


def allowed_tools(frontmatter: Mapping[str, Any]) -> list[str]:
    """Tool names of ``allowed-tools`` (a YAML list, or a comma/space separated string; ``Bash(python3 *)`` →
    ``Bash``)."""
    value = frontmatter.get("allowed-tools", frontmatter.get("allowed_tools"))
    if value is None:
        return []
    if isinstance(value, str):
        entries = [e for e in re.findall(r"[^\s,()]+(?:\([^)]*\))?", value)]
    elif isinstance(value, list):
        entries = [str(e) for e in value if e is not None]
    else:
        return []
    names = []
    for entry in entries:
        name = entry.strip().split("(", 1)[0].strip()
        if name and name not in names:
            names.append(name)
    return names


def contract_evidence(frontmatter: Mapping[str, Any]) -> list[str]:
    """The frontmatter facts that ground ``--gate-kind contractual``; raise :class:`RefusedInput` when there are none.

    Counts only ``external_mutation_guard`` (present and not empty/false) and ``allowed-tools`` naming
    AskUserQuestion or ExitPlanMode. The body's prose never counts (seed 001, gate kinds).
    """
    found: list[str] = []
    guard = frontmatter.get(GUARD_KEY)
    if guard not in (None, False, "", [], {}):
        found.append(f"frontmatter {GUARD_KEY}: {json.dumps(guard, ensure_ascii=False, default=str)[:200]}")
    tools = allowed_tools(frontmatter)
    found += [f"frontmatter allowed-tools: {t}" for t in GATE_TOOLS if t in tools]
    if not found:
        raise RefusedInput("gate kind contractual is not grounded in the skill's frontmatter",
                           code="ungrounded_contractual",
                           fix=f"the skill must declare {GUARD_KEY} or allowed-tools with AskUserQuestion or "
                               "ExitPlanMode; otherwise record the gate responses as rescue")
    return found


