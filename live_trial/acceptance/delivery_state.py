"""The delivery of a trial's first artifact to a person, ``<workdir>/delivery.json`` (seed 001 ``artifact_delivery``,
contract ``artifact-delivery-v1``; README "Use it from Claude Code").

States, in order: ``artifact_created`` (the trial through collect and its machine gates, its verdict written with the
goal not judged) → ``minimal_guard_passed`` → ``artifact_presented`` → ``user_choice_recorded`` →
``semantic_evaluator_started`` (light, standard, detailed) or ``handoff_complete`` (accept-as-is) →
``handoff_complete`` (improvement_complete). The allowed steps are read from ``schemas/delivery.schema.json``
(``$defs.transition``), the one place that spells them: an event not allowed from the current state is refused
(exit 2) and the file stays byte for byte as it was. Before a choice is recorded nothing of the post-choice part runs
(seed 001 ``pre_choice_forbidden``: the semantic evaluator, the revise loop): :func:`require_choice` is what
``evaluate`` and ``ticket`` ask first.

A workdir is under this contract when ``prepare --delivery`` made it (trial-state.json ``delivery``); its first
``verdict`` creates the file. This module holds the state file and its rules only; the guards, the presentation, the
diff ticket and the loop's ledger are :mod:`live_trial.delivery`.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from live_trial.clock import utc_now
from live_trial.errors import RefusedInput
from live_trial.jsonfile import parse_json, read_json, write_json
from live_trial.resources import load_schema
from live_trial.workdir_files import DELIVERY, TRIAL_STATE, VERDICT

SCHEMA = "delivery.schema.json"
VERSION = "live-trial-delivery/1"
CONTRACT = "artifact-delivery-v1"
CREATE = "create_artifact"
ARTIFACT_CREATED = "artifact_created"
MINIMAL_GUARD_PASSED = "minimal_guard_passed"
ARTIFACT_PRESENTED = "artifact_presented"
USER_CHOICE_RECORDED = "user_choice_recorded"
SEMANTIC_EVALUATOR_STARTED = "semantic_evaluator_started"
HANDOFF_COMPLETE = "handoff_complete"
RECORD_USER_CHOICE = "record_user_choice"
IMPROVEMENT_COMPLETE = "improvement_complete"
ACCEPT_AS_IS = "accept-as-is"
#: The person's choices (seed 001): accept the artifact as it is, or have it judged and improved to a depth.
CHOICES = (ACCEPT_AS_IS, "light", "standard", "detailed")


@lru_cache(maxsize=None)
def transitions() -> dict[tuple[str | None, str], str]:
    """``{(from state, event): to state}``, read from ``schemas/delivery.schema.json`` ``$defs.transition`` (seed 001
    ``artifact_delivery.state_machine.transitions``, ``light|standard|detailed`` spelled out)."""
    table = {}
    for row in load_schema(SCHEMA)["$defs"]["transition"]["oneOf"]:
        p = row["properties"]
        table[(p["from"]["const"], p["event"]["const"])] = p["to"]["const"]
    return table


def events_from(state: str | None) -> list[str]:
    """The events allowed from ``state`` (None: before the artifact exists), in the schema's order."""
    return [event for (src, event) in transitions() if src == state]


def sha256_of(path: Path) -> str:
    """``sha256:<hex>`` of the file's bytes."""
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Delivery:
    """``delivery.json`` as read (schema-checked): the document and where it is."""

    path: Path
    doc: Mapping[str, Any]

    @property
    def state(self) -> str:
        """The current state."""
        return str(self.doc["state"])

    @property
    def choice(self) -> str | None:
        """What the person chose, None before ``record_user_choice``."""
        return self.doc.get("choice")


def under_contract(workdir: Path) -> bool:
    """True when ``prepare --delivery`` made ``workdir`` (trial-state.json ``delivery``): its goal waits for the
    person's choice."""
    try:
        state = parse_json((Path(workdir) / TRIAL_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False        # no trial-state (a workdir made by hand): not under the contract
    return isinstance(state, dict) and state.get("delivery") is True


def load(workdir: Path) -> Delivery | None:
    """The workdir's ``delivery.json`` (schema-checked; :class:`~live_trial.errors.SchemaInvalid` otherwise), None
    when it has none."""
    path = Path(workdir) / DELIVERY
    return Delivery(path, read_json(path, SCHEMA)) if path.is_file() else None


def create(workdir: Path, *, overall: str, lang: str | None, now: str | None = None) -> Delivery:
    """Create ``delivery.json`` in state ``artifact_created`` for the verdict just written in ``workdir`` (its digest
    is what the person will be shown). Raises :class:`RefusedInput` when one exists already."""
    path = Path(workdir) / DELIVERY
    if path.exists():
        raise RefusedInput("the first artifact of this trial was created already", where=str(path),
                           code="delivery_exists", fix="go on with `live-trial delivery record`")
    at = now or utc_now()
    doc: dict[str, Any] = {
        "version": VERSION, "contract": CONTRACT, "state": ARTIFACT_CREATED, "choice": None,
        "artifact": {"verdict": VERDICT, "sha256": sha256_of(Path(workdir) / VERDICT), "overall": overall,
                     "report": None},
        "completed": None, "handoff": None,
        "history": [{"from": None, "event": CREATE, "to": ARTIFACT_CREATED, "at": at}]}
    if lang:
        doc["lang"] = lang
    write_json(path, doc, SCHEMA)
    return Delivery(path, doc)


def step(delivery: Delivery, event: str) -> str:
    """The state ``event`` leads to from ``delivery``'s state. Raises :class:`RefusedInput` (exit 2) when the schema
    allows no such step, or when a choice event is not the choice recorded (seed 001: the event after
    ``record_user_choice`` is the choice itself)."""
    to = transitions().get((delivery.state, event))
    if to is None:
        allowed = events_from(delivery.state)
        raise RefusedInput(f"event {event!r} is not allowed from state {delivery.state}", where=str(delivery.path),
                           code="bad_transition",
                           fix=("allowed now: " + ", ".join(allowed)) if allowed else "the delivery is complete")
    if delivery.state == USER_CHOICE_RECORDED and event != delivery.choice:
        raise RefusedInput(f"event {event!r} is not the choice recorded ({delivery.choice})",
                           where=str(delivery.path), code="bad_transition",
                           fix=f"record --event {delivery.choice}")
    return to


def advance(delivery: Delivery, event: str, *, now: str | None = None, **fields: Any) -> Delivery:
    """Apply ``event`` (checked by :func:`step`), set ``fields`` (``choice``, ``artifact``, ``completed``, ``handoff``,
    ``lang``) and write the file (schema-checked, atomic). Returns the new :class:`Delivery`."""
    to = step(delivery, event)
    doc = {**delivery.doc, **fields, "state": to,
           "history": [*delivery.doc["history"], {"from": delivery.state, "event": event, "to": to,
                                                  "at": now or utc_now()}]}
    write_json(delivery.path, doc, SCHEMA)
    return Delivery(delivery.path, doc)


def update(delivery: Delivery, **fields: Any) -> Delivery:
    """Set ``fields`` without a change of state (the completed verdict, the artifact's report) and write the file."""
    doc = {**delivery.doc, **fields}
    write_json(delivery.path, doc, SCHEMA)
    return Delivery(delivery.path, doc)


def require_choice(workdir: Path, what: str) -> Delivery | None:
    """Refuse (:class:`RefusedInput`, exit 2, nothing changed) ``what`` (a post-choice step: the fresh evaluator, a
    diff ticket) in a workdir under the delivery contract whose person has not chosen light, standard or detailed
    (seed 001 ``pre_choice_forbidden``); return its :class:`Delivery` (None outside the contract)."""
    if not under_contract(workdir):
        return None
    delivery = load(workdir)
    if delivery is not None and delivery.state == SEMANTIC_EVALUATOR_STARTED:
        return delivery
    if delivery is not None and delivery.choice == ACCEPT_AS_IS:
        raise RefusedInput(f"{what}: the person accepted the first artifact as it is (the goal is not judged)",
                           where=str(delivery.path), code="accepted_as_is",
                           fix="start a new trial to have the goal judged")
    now = delivery.state if delivery is not None else "no first artifact yet"
    raise RefusedInput(f"{what} runs only after the person's choice (light, standard or detailed); the delivery is at "
                       f"{now}", where=str(Path(workdir) / DELIVERY), code="no_choice_recorded",
                       fix="present the first artifact and record the choice: `live-trial delivery record "
                           f"{workdir} --event ...` (seed 001 artifact_delivery)")
