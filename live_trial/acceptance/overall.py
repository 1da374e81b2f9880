"""The overall verdict of one trial from its facts: the judgement table of seed 001 "判定ロジック", as pure data in
and data out (``derive_overall``), used when a verdict is written and again when plan re-reads one.

Judgement table, applied by :func:`judge` in this order (the first matching group wins):

==== ====================================================================== ==========
step condition                                                              overall
==== ====================================================================== ==========
1    ``blocked`` (stop_reasons.py) or last poll exit HARD_CAP or BLOCKED        BLOCKED
2    launch FAIL                                                             FAIL
3    completion FAIL, or completion PASS but the last poll exit is not DONE  FAIL
3b   a stop reason of the skill's own (stop_reasons.py, e.g. the question   FAIL
     ``--expect-gate`` expected never asked, a hook or MCP server it needs
     failed) though it ran to its end
4    (collect DEGRADED reasons) goal not PASS; nudges > 0; rescue gate > 0   —
5    proof: any gate response (any kind); any DEGRADED reason; actual model  FAIL
     set ≠ {requested} (empty, several, other, or no requested model)
6    any DEGRADED reason                                                     DEGRADED
7    otherwise                                                               PASS
==== ====================================================================== ==========

Precedence: BLOCKED beats FAIL (a trial the environment or the harness stopped was not judged; whose failure it
was is :mod:`live_trial.stop_reasons`; seed 001 says record it ``--blocked`` whatever else happened), also in
proof trials (BLOCKED is never a pass, so it cannot loosen a proof). Launch beats completion beats goal. In a proof
trial every DEGRADED reason becomes FAIL and the model gate is checked even when the rest would PASS. Gate kinds
(seed 001, gate kinds): each answered question has its own kind (``gate_kinds``, one per answer, in order): a
``rescue`` answer degrades, a ``contractual`` one does not, and a proof allows none of either. A verdict without
per-answer kinds (``live-trial-verdict/1``, or the counts given by hand) applies ``gate_kind`` to every answer:
default ``rescue``, normalised to ``rescue`` when there were no gate responses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from live_trial.errors import PollExit
from live_trial.stop_reasons import StopReason, blocked_reason

RESULTS = ("PASS", "FAIL")


OVERALLS = ("PASS", "FAIL", "DEGRADED", "BLOCKED")


GATE_KINDS = ("rescue", "contractual")


@dataclass(frozen=True)
class VerdictInputs:
    """What :func:`derive_overall` looks at. Results are ``"PASS"``/``"FAIL"``; ``goal_result`` None = not judged."""

    launch: str
    completion: str
    goal_result: str | None
    nudge_count: int = 0
    gate_response_count: int = 0
    gate_kind: str = "rescue"
    poll_exit: str | None = None
    proof: bool = False
    blocked: bool = False
    requested_model: str | None = None
    actual_model: tuple[str, ...] = ()
    gate_kinds: tuple[str, ...] = ()
    stop_reason: str | None = None

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> "VerdictInputs":
        """The inputs recorded in a verdict document (for re-deriving its overall); the kinds of ``gate_answers``
        when it lists them (``live-trial-verdict/2``)."""
        answers = doc.get("gate_answers")
        kinds = tuple(str(a.get("kind")) for a in answers) if isinstance(answers, list) else ()
        return cls(launch=doc["launch"], completion=doc["completion"], goal_result=doc.get("goal_result"),
                   nudge_count=doc["nudge_count"], gate_response_count=doc["gate_response_count"],
                   gate_kind=doc["gate_kind"], poll_exit=doc.get("poll_exit"), proof=doc["proof"],
                   blocked=doc["blocked"], requested_model=doc.get("requested_model"),
                   actual_model=tuple(doc.get("actual_model") or ()), gate_kinds=kinds,
                   stop_reason=doc.get("stop_reason"))

    def answer_kinds(self) -> tuple[str, ...]:
        """The kind of each answered question: ``gate_kinds`` when it holds one per answer, else the normalised
        ``gate_kind`` for every answer."""
        if self.gate_kinds and len(self.gate_kinds) == self.gate_response_count:
            return tuple("contractual" if k == "contractual" else "rescue" for k in self.gate_kinds)
        return (normalise_gate_kind(self.gate_kind, self.gate_response_count),) * self.gate_response_count


@dataclass(frozen=True)
class Judgement:
    """``verdict`` is one of PASS, FAIL, DEGRADED, BLOCKED; ``reasons`` say why (empty for a clean PASS)."""

    verdict: str
    reasons: tuple[str, ...]


def normalise_gate_kind(kind: str | None, gate_response_count: int) -> str:
    """``rescue`` unless ``kind`` is ``contractual`` and there were gate responses (seed 001: default + 0 → rescue)."""
    return "contractual" if kind == "contractual" and gate_response_count > 0 else "rescue"


def summary_gate_kind(kinds: Iterable[str]) -> str:
    """The one word a verdict records for its answers' kinds: ``contractual`` when there are answers and all are
    contractual, ``mixed`` when both kinds were given, else ``rescue`` (also with no answers: seed 001's default)."""
    found = set(kinds)
    if found == {"contractual"}:
        return "contractual"
    return "mixed" if found == {"contractual", "rescue"} else "rescue"


def judge(inputs: VerdictInputs) -> Judgement:
    """Apply the judgement table of the module docstring. Pure."""
    i = inputs
    kinds = i.answer_kinds()
    rescues = kinds.count("rescue")
    if i.blocked:
        return Judgement("BLOCKED", (blocked_reason(None),))
    if i.poll_exit in (PollExit.HARD_CAP, PollExit.BLOCKED):
        return Judgement("BLOCKED", (f"poll ended {i.poll_exit}: the trial was stopped before it could be judged",))
    if i.launch != "PASS":
        return Judgement("FAIL", ("launch failed: the skill never started (boot, install or argument problem)",))
    if i.completion != "PASS":
        where = f" (last poll exit {i.poll_exit})" if i.poll_exit else ""
        return Judgement("FAIL", (f"did not complete on its own{where}",))
    if i.poll_exit not in (None, PollExit.DONE):
        return Judgement("FAIL", (f"completion PASS contradicts the last poll exit {i.poll_exit}",))
    stop = StopReason.of(i.stop_reason)
    if stop is not None and not stop.blocks:
        return Judgement("FAIL", (stop.why,))       # a stop of the skill's own is never a PASS nor DEGRADED
    degraded: list[str] = []
    if i.goal_result != "PASS":
        degraded.append("goal FAIL: it completed but did not achieve its goal (goal-proxy gap)"
                        if i.goal_result == "FAIL" else "goal not judged")
    if i.nudge_count > 0:
        degraded.append(f"{i.nudge_count} nudge(s) were needed: not self-driven")
    if rescues > 0:
        degraded.append(f"{rescues} rescue gate response(s): a person had to step in")
    if i.proof:
        fails: list[str] = []
        if i.gate_response_count > 0:
            fails.append(f"proof: {i.gate_response_count} gate response(s) ({summary_gate_kind(kinds)}); "
                         "a proof allows none")
        fails += [f"proof: {r}" for r in degraded]
        model_problem = proof_model_problem(i.requested_model, i.actual_model)
        if model_problem:
            fails.append(f"proof: {model_problem}")
        if fails:
            return Judgement("FAIL", tuple(dict.fromkeys(fails)))
    if degraded:
        return Judgement("DEGRADED", tuple(degraded))
    return Judgement("PASS", ())


def not_reached(launch: str, completion: str, goal_result: str | None) -> str | None:
    """What a BLOCKED trial never got to, worded as not reached (README "Whose failure it is"): the environment, the
    harness or the person's input stopped it, so its launch or completion FAIL records what was not reached, never a
    failure of the skill. The line for the first step not reached: the Skill call, the skill's end, the goal's
    judgement; None when the goal was judged. Pure."""
    if launch != "PASS":
        return ("the skill was never reached: the trial stopped before the session called it; its end was not reached "
                "and its goal was not judged")
    if completion != "PASS":
        return "the skill's end was never reached: the trial stopped while the skill ran; its goal was not judged"
    if goal_result is None:
        return "the goal was not judged: the trial stopped after the skill ran to its end"
    return None


def derive_overall(inputs: VerdictInputs) -> str:
    """PASS | FAIL | DEGRADED | BLOCKED for ``inputs`` (seed 001 判定ロジック; see the module docstring). Pure."""
    return judge(inputs).verdict


def proof_model_problem(requested: str | None, actual: Iterable[str]) -> str | None:
    """Why the actual models fail a proof trial, or None when it is exactly ``{requested}`` (seed 001 model gate)."""
    models = list(dict.fromkeys(actual))
    if not requested:
        return "no requested model: a proof trial needs one"
    if not models:
        return "no actual model in the transcript's main-chain assistant records"
    if len(models) > 1:
        return f"several actual models {models}; requested {requested}"
    if models[0] != requested:
        return f"actual model {models[0]} is not the requested {requested}"
    return None
