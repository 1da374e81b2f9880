"""``verdict`` in a workdir under the delivery contract (``prepare --delivery``; seed 001 ``artifact_delivery``): the
first artifact, then its completion (README "Use it from Claude Code").

- **The first artifact.** Before the person's choice the trial goes through collect and its machine gates (the launch
  read from the transcript, the completion from poll-state.json, a proof's model gate, the session reaped) and its
  verdict is written with the goal *not judged*: never a PASS (the judgement table makes a goal not judged DEGRADED at
  best). A goal claim or ``--override`` there is refused: nobody judged it. Writing it creates ``delivery.json``
  (``artifact_created``) with the verdict's digest.
- **The completed verdict.** Once the person chose light, standard or detailed (``semantic_evaluator_started``) and the
  fresh evaluator wrote ``evaluation.json``, ``verdict`` derives the verdict again by the same rules as ``run``'s,
  with the goal the evaluator's. That is not an override: it replaces nothing the evaluator said. The first artifact
  is kept byte for byte as ``verdict-first.json`` (the digest the person was shown still holds) and ``delivery.json``
  records the completed one. A second completion, one before the choice, or a ``verdict.json`` changed since it was
  presented is refused (exit 2, nothing written).

``plan`` reads only ``verdict.json``: a first artifact (goal not judged) is never a PASS, so never reused.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from live_trial.acceptance import delivery_state as ds
from live_trial.errors import RefusedInput
from live_trial.jsonfile import copy_file_private
from live_trial.workdir_files import DELIVERY, EVALUATION, FIRST_VERDICT, VERDICT

if TYPE_CHECKING:
    from live_trial.acceptance.claims import Claims
    from live_trial.acceptance.verdict_facts import VerdictFacts

FIRST = "first"
COMPLETE = "complete"
FIRST_NOTE = ("the first artifact of a delivery: the goal is not judged before the person chooses whether a fresh "
              "evaluator judges it (seed 001 artifact_delivery)")


@dataclass(frozen=True)
class Step:
    """What ``verdict`` does in a delivery workdir: ``kind`` :data:`FIRST` or :data:`COMPLETE`."""

    kind: str
    delivery: ds.Delivery | None


def plan_step(workdir: Path, claims: Claims, facts: VerdictFacts) -> Step | None:
    """The delivery step of ``verdict`` in ``workdir`` (None outside the contract: the usual rules). Raises
    :class:`RefusedInput` (exit 2, nothing written) for a goal claim or ``--override`` on the first artifact, a
    verdict before the choice or after the completion, a completion without ``evaluation.json``, or a
    ``verdict.json`` that is not the artifact presented."""
    if not ds.under_contract(workdir):
        return None
    said = [flag for flag, value in (("--goal-result", claims.goal_result), ("--evidence", claims.evidence),
                                     ("--goal-blocker", claims.goal_blockers), ("--unverified", claims.unverified),
                                     ("--override", claims.override)) if value]
    if said:
        raise RefusedInput(f"{said[0]} in a delivery: the goal is the fresh evaluator's, after the person's choice",
                           where=str(workdir / DELIVERY), code="bad_value",
                           fix="leave it out: the first verdict's goal is not judged; after the choice `evaluate` "
                               "judges it and `verdict` completes it")
    delivery = ds.load(workdir)
    if delivery is None:
        if facts.evaluation.present:
            raise RefusedInput(f"the first artifact's goal is not judged, but the workdir holds {EVALUATION}",
                               where=str(workdir / EVALUATION), code="not_first_artifact",
                               fix="start a new trial with `live-trial prepare --delivery`")
        return Step(FIRST, None)
    if delivery.state != ds.SEMANTIC_EVALUATOR_STARTED or delivery.doc.get("completed") is not None:
        why = ("its verdict was completed already" if delivery.doc.get("completed") is not None
               else f"the delivery is at {delivery.state}")
        raise RefusedInput(f"the verdict of this delivery is written: {why}", where=str(workdir / VERDICT),
                           code="verdict_exists",
                           fix="a verdict is completed once, after the person chose light, standard or detailed and "
                               "`live-trial evaluate` judged the goal")
    if not facts.evaluation.present:
        raise RefusedInput(f"no fresh evaluator judged the goal yet (no {EVALUATION})", where=str(workdir / EVALUATION),
                           code="not_judged", fix=f"run `live-trial evaluate --workdir {workdir}` first")
    presented = delivery.doc["artifact"]["sha256"]
    if not (workdir / VERDICT).is_file() or ds.sha256_of(workdir / VERDICT) != presented:
        raise RefusedInput(f"{VERDICT} is not the first artifact the person was shown ({presented})",
                           where=str(workdir / VERDICT), code="artifact_changed",
                           fix="start a new trial: the artifact that was presented is gone")
    return Step(COMPLETE, delivery)


def note_of(step: Step) -> str:
    """The verdict note of ``step``."""
    if step.kind == FIRST:
        return FIRST_NOTE
    assert step.delivery is not None
    return (f"completes the first artifact ({FIRST_VERDICT}, {step.delivery.doc['artifact']['sha256']}), whose goal "
            "was not judged before the person's choice: the goal is now the fresh evaluator's")


def keep_first(workdir: Path, step: Step) -> None:
    """Before the completed verdict is written: keep the first artifact's bytes as ``verdict-first.json``."""
    if step.kind == COMPLETE:
        copy_file_private(workdir / VERDICT, workdir / FIRST_VERDICT)


def after_write(workdir: Path, step: Step, doc: dict[str, Any], lang: str | None) -> ds.Delivery:
    """After the verdict ``doc`` was written: create ``delivery.json`` (the first artifact; ``lang``: the person's
    language of the messages) or record the completed verdict in it."""
    overall = str(doc["overall"]["verdict"])
    if step.kind == FIRST:
        return ds.create(workdir, overall=overall, lang=lang)
    assert step.delivery is not None
    artifact = {**step.delivery.doc["artifact"], "verdict": FIRST_VERDICT}
    return ds.update(step.delivery, artifact=artifact,
                     completed={"sha256": ds.sha256_of(workdir / VERDICT), "overall": overall,
                                "goal_result": doc.get("goal_result")})
