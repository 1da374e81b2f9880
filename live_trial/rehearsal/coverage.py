"""What ``live-trial rehearsal check`` can tell of a scenario before any run: whether some rule can answer a trial's
first request of the session and its evaluator's request (references/scenario-format.md "How a trial talks to the
server").

Both requests are known before a run in everything but their text: the session's first request is ``human_turn`` 1,
``step`` 0, no tool_result, no task notification, no compaction, not a subagent's, conversation 1, attempt 1, the
Skill tool offered and never ``StructuredOutput``; the evaluator's is the same, offering exactly ``Glob``, ``Grep``,
``Read`` and ``StructuredOutput`` (observed on 2.1.197 and 2.1.332: references/transcript-jsonl.md "The last message
of a request, and a replay's match by turn"). A regex on the prompt or the model is taken to match (the text is only
known in a run). Whether the rules answer the rest of a run is known only when it runs: a trial stops BLOCKED
``scenario_unmatched`` at the first request no rule answers (live_trial/rehearsal/unmatched.py). Pure functions.
"""
from __future__ import annotations

from dataclasses import dataclass

from live_trial.rehearsal.scenario import Rule, Scenario

#: What the check looks at, in the words ``rehearsal check`` prints.
CHECKED = ("the schema, the regexes and the placeholders; whether a rule can answer a trial's first request of the "
           "session and its evaluator's request (a regex on a prompt or the model counted as matching); the rest of "
           "a run is matched only when it runs")


@dataclass(frozen=True)
class FirstRequest:
    """A request whose shape is known before a run: ``name`` (as a person reads it), ``offered`` (tools it offers
    for certain), ``exact`` (True: it offers those and nothing else), ``never`` (tools it never offers)."""

    name: str
    offered: frozenset[str]
    exact: bool
    never: frozenset[str] = frozenset()


SESSION_FIRST = FirstRequest("the session's first request (human_turn 1, step 0: the task, with Skill offered)",
                             frozenset({"Skill"}), False, frozenset({"StructuredOutput"}))
EVALUATOR = FirstRequest("the evaluator's request (offering StructuredOutput, Read, Glob and Grep)",
                         frozenset({"Glob", "Grep", "Read", "StructuredOutput"}), True)


def can_answer(rule: Rule, request: FirstRequest) -> bool:
    """True when ``rule`` may answer ``request``: none of its predicates rules it out (a regex counts as matching)."""
    w = rule.when
    if rule.times == 0 or w.get("compaction") or w.get("subagent") or w.get("task_notification") not in (None, False):
        return False
    if any(key in w and w[key] != value for key, value in (("conversation", 1), ("attempt", 1), ("step", 0),
                                                           ("human_turn", 1))):
        return False
    result = w.get("last_tool_result")
    if result is not None and result.get("present", True) is not False:
        return False
    include, exclude = set(w.get("tools_include", [])), set(w.get("tools_exclude", []))
    if exclude & request.offered or include & request.never:
        return False
    return not (request.exact and include - request.offered)


def gaps(scenario: Scenario) -> list[str]:
    """One sentence per first request no rule of ``scenario`` can answer (empty when each has one)."""
    out = []
    for request, what in ((SESSION_FIRST, "a trial with it stops BLOCKED scenario_unmatched at its first turn"),
                          (EVALUATOR, "a trial that gets to the end stops BLOCKED scenario_unmatched, its goal not "
                                      "judged")):
        if not any(can_answer(rule, request) for rule in scenario.rules):
            out.append(f"no rule can answer {request.name}: {what}")
    return out
