"""A request no rule of a rehearsal scenario answers, named the way a person writes the rule that would
(references/scenario-format.md "`when`: all given predicates must hold"): whose request it is, its ``human_turn`` and
``step``, and what it last carried (the tool_result, the task notification or the prompt).

In a trial the scenario is the harness's input, as a tape is: the server answers such a request with an error the CLI
does not retry, and the trial stops BLOCKED ``scenario_unmatched`` (live_trial/stop_reasons.py), never a FAIL of the
skill and, for the evaluator's request, never a judgement of the goal. Pure functions.
"""
from __future__ import annotations

from dataclasses import dataclass

from live_trial.rehearsal.scenario import RequestView

#: Characters of the last input quoted.
QUOTE_CHARS = 80


@dataclass(frozen=True)
class Unmatched:
    """A request no rule answered: ``role`` (``session``, ``subagent`` or ``evaluator``: the only caller offering
    ``StructuredOutput``), ``human_turn`` and ``step`` (as the scenario language reads them: 1 the task, 0 the first
    reply) and ``last`` (what the request last carried, one phrase)."""

    role: str
    human_turn: int
    step: int
    last: str

    def sentence(self) -> str:
        """``no rule matches the session's request at human_turn 1, step 2 (its last tool_result: "…")``: the
        ``when`` keys a rule answering it would have."""
        return (f"no rule matches the {self.role}'s request at human_turn {self.human_turn}, step {self.step} "
                f"({self.last})")


def unmatched(view: RequestView) -> Unmatched:
    """The :class:`Unmatched` of the request ``view`` that no rule answered."""
    role = "evaluator" if "StructuredOutput" in view.tools else "subagent" if view.subagent else "session"
    if view.compaction:
        last = "a compaction request"
    elif view.task_notification is not None:
        last = f"a task notification: {_quote(view.task_notification)}"
    elif view.last_tool_result is not None:
        error = " (an error)" if view.last_tool_result.get("is_error") else ""
        last = f"its last tool_result{error}: {_quote(str(view.last_tool_result.get('content') or ''))}"
    else:
        last = f"its last prompt: {_quote(view.last_prompt)}"
    return Unmatched(role, view.human_turn, view.step, last)


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return '"' + (flat if len(flat) <= QUOTE_CHARS else flat[:QUOTE_CHARS - 1] + "…") + '"'
