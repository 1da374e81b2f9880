"""What a trial's own records show beyond its verdict, for the message that ends it and its next step
(:mod:`live_trial.notices.outcome`): the question left unanswered and its options, the answer given ahead of time that
was none of them, the silence before a STALL, the hard cap, the model the service did not know, the budget, how the
model was played. Read tolerantly: a record missing or unreadable leaves its field empty, never an error.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from live_trial import workdir_files as wf
from live_trial.errors import PollExit
from live_trial.jsonfile import parse_json
from live_trial.stop_reasons import StopReason

_NO_PROGRESS = re.compile(r"no progress for (\d+(?:\.\d+)?)s")
_HARD_CAP = re.compile(r">= hard_cap_s (\d+(?:\.\d+)?)s")


@dataclass
class Seen:
    """What the trial's own records show beyond the verdict: the question left unanswered and its options (and the
    answer given ahead of time that was none of them), how long the session was silent before a STALL, the hard cap
    it reached (seconds), the model the model's service did not know, how its model was ``played``: ``tape``
    (``--replay``), ``scenario`` or ``live`` (neither), or None."""

    question: str | None = None
    options: list[str] = field(default_factory=list)
    answer: str | None = None
    silent_s: float | None = None
    hard_cap_s: float | None = None
    model: str | None = None
    budget_usd: float | None = None
    played: str | None = None


def seen_in_workdir(workdir: Path | str | None) -> Seen:
    """What the trial's records in ``workdir`` show (:class:`Seen`); empty when they are missing or unreadable.

    Reads the last unanswered question (``trial-log.jsonl``, a ``poll`` ``GATE`` decision with no answer; its
    ``not_an_option``: the answer given ahead of time that was none of its options), the model of a ``poll``
    ``model_unknown`` decision, the poll exits of ``poll-state.json`` (``no progress for Ns``: the silence before the
    last STALL; ``hard_cap_s N``) and how the model was played (``trial-state.json``)."""
    seen = Seen()
    if not workdir:
        return seen
    root = Path(workdir)
    try:
        played = parse_json((root / wf.TRIAL_STATE).read_text(encoding="utf-8")).get("rehearsal")
        seen.played = "tape" if isinstance(played, dict) and played.get("tape") else "scenario" if played else "live"
    except (OSError, ValueError, AttributeError):
        pass
    try:
        lines = (root / wf.TRIAL_LOG).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            rec = parse_json(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("step") == "poll" and rec.get("decision") == PollExit.GATE \
                and not rec.get("answered"):
            seen.question = str(rec.get("question") or "") or None
            seen.options = [str(o) for o in rec.get("options") or [] if str(o).strip()]
            seen.answer = str(rec.get("not_an_option") or "") or None
        if isinstance(rec, dict) and rec.get("step") == "poll" and rec.get("decision") == StopReason.MODEL_UNKNOWN:
            seen.model = str(rec.get("model") or "") or None
        if isinstance(rec, dict) and rec.get("step") == "budget" and isinstance(rec.get("max_cost_usd"), (int, float)):
            seen.budget_usd = float(rec["max_cost_usd"])
    try:
        exits = parse_json((root / wf.POLL_STATE).read_text(encoding="utf-8")).get("exits") or []
    except (OSError, ValueError, AttributeError):
        exits = []
    for ex in exits if isinstance(exits, list) else []:
        reason = str(ex.get("reason") or "") if isinstance(ex, dict) else ""
        if m := _NO_PROGRESS.search(reason):
            seen.silent_s = float(m.group(1))
        if m := _HARD_CAP.search(reason):
            seen.hard_cap_s = float(m.group(1))
    return seen
