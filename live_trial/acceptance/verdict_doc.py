"""The shape of ``verdict.json`` (``schemas/live-trial-verdict.schema.json``; seed 001 "verdict + 掃除"): its file
names and schema version, the :class:`Verdict` a trial's verdict is derived into and the document it writes
(:meth:`Verdict.to_doc`), and the task contract's ``scenario_id``.

The bottom of the verdict's modules: it imports none of them. :mod:`live_trial.acceptance.verdict_facts` reads a
workdir into facts, :mod:`live_trial.acceptance.derive` derives a :class:`Verdict` from them without reading
anything, :mod:`live_trial.acceptance.verdict` writes and reads the document.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from live_trial.acceptance.overall import Judgement

SCHEMA = "live-trial-verdict.schema.json"


SCHEMA_VERSION = "live-trial-verdict/2"


#: Verdicts judged under the older evidence rules: still read, never reused by plan.
OLDER_SCHEMA_VERSIONS = ("live-trial-verdict/1",)


VERDICT_FILE = "verdict.json"


TRANSCRIPT_FILE = "transcript.jsonl"


EVALUATION_FILE = "evaluation.json"


ORIGINS = ("live", "rehearsal")


@dataclass(frozen=True)
class Environment:
    """The versions a verdict records (never environment variables or keys)."""

    claude_version: str | None
    """The claude CLI's version, None when unknown (claude missing)."""
    tmux_version: str | None
    """tmux's version (``3.3a``), None when tmux is missing."""
    python: str
    """The Python version the harness ran on."""
    platform: str
    """The platform, terse (``Linux-6.1-x86_64-with-glibc2.36``)."""

    def to_doc(self) -> dict:
        """``{claude_version, tmux_version, python, platform}`` as verdict.json and trial-state.json keep it."""
        return {"claude_version": self.claude_version, "tmux_version": self.tmux_version, "python": self.python,
                "platform": self.platform}

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> "Environment":
        """The environment recorded in a document (``KeyError`` when a key is missing)."""
        return cls(doc["claude_version"], doc["tmux_version"], str(doc["python"]), str(doc["platform"]))


@dataclass(frozen=True)
class Verdict:
    """One trial's verdict, field for field the keys of verdict.json in the order it writes them."""

    target: str
    """``plugin:skill`` (or a plain skill name) of the skill under trial."""
    plugin: str | None
    """The target's plugin, None for a plain skill."""
    skill: str
    """The target's skill name."""
    run_id: str
    """The workdir's name: the trial's run id."""
    tier: str
    """The skill's acceptance tier (live, fork, static)."""
    downgrade_reason: str | None
    """Why this verdict proves less than a live trial (a rehearsal, a tier below live); None otherwise."""
    proof: bool
    """A proof trial: no intervention and exactly the requested model."""
    blocked: bool
    """The environment or the harness stopped the trial (live_trial/stop_reasons.py)."""
    launch: str
    """PASS when the skill under trial was called and ran, else FAIL."""
    completion: str
    """PASS when the session finished on its own with the completion marker, else FAIL."""
    goal_result: str | None
    """The fresh evaluator's PASS / FAIL, None when the goal was not judged."""
    goal_blockers: tuple[str, ...]
    """What the evaluator found missing."""
    evidence: tuple[dict, ...]
    """The evidence items ``{claim, source, [quote], observed}``."""
    evidence_text: str | None
    """The evidence as a person gave it (``verdict --evidence``), None otherwise."""
    unverified: str | None
    """What could not be confirmed yet (a mostly-done PASS), None otherwise."""
    goal_ledger: str | None
    """done, mostly_done, not_done (seed 000), None when the goal was not judged."""
    watch_id: str | None
    """The watch registered for a mostly-done PASS, None otherwise."""
    evaluation_file: str | None
    """``evaluation.json`` when the workdir holds one, else None."""
    nudge_count: int
    """Nudges sent to the session."""
    gate_response_count: int
    """Questions answered for the session."""
    gate_kind: str
    """rescue, contractual or mixed: the kinds of the answers."""
    gate_contract_evidence: tuple[str, ...]
    """Where the frontmatter declares the questions a contractual answer answered."""
    gate_answers: tuple[dict, ...]
    """One line per answered question ``{n, question, options, answer, kind}``."""
    criteria: tuple[dict, ...]
    """One line per criterion of the skill's feedback_contract."""
    poll_exit: str | None
    """The last poll exit (DONE, STALL, GATE, HARD_CAP, TICK_BUDGET, BLOCKED), None when poll never ran."""
    stop_reason: str | None
    """Why the trial stopped (a :class:`~live_trial.stop_reasons.StopReason`, or the code of an error a step raised), None for a clean end."""
    stall_row: int | None
    """The STALL table's row that decided, None otherwise."""
    failure_reason: str | None
    """A boot, delivery or crash reason given by hand, None otherwise."""
    overall: Judgement
    """The overall verdict and its reasons (:class:`live_trial.acceptance.overall.Judgement`)."""
    skill_dir_tree_sha: str
    """The behaviour-closure digest of the files tested."""
    closure_plugins: tuple[str, ...]
    """The plugins of the behaviour closure, target first."""
    closure_file_count: int
    """How many files the behaviour closure covers."""
    transcript_sha256: str | None
    """``sha256:<hex>`` of transcript.jsonl, None when it is missing."""
    session_id: str | None
    """The claude session id of the trial."""
    scenario_id: str
    """``sha256:<hex>`` of the task contract (:func:`scenario_id`)."""
    scenario_origin: str
    """live or rehearsal (the workdir decides: acceptance/origin.py)."""
    environment: Environment
    """The versions the trial ran with."""
    requested_model: str | None
    """The model asked for, None for the user's default."""
    actual_model: tuple[str, ...]
    """The models of the transcript's main-chain assistant records."""
    notes: tuple[str, ...]
    """What a reader of the verdict should know."""
    warnings: tuple[str, ...]
    """Warnings of the trial (an unverified CLI version, plugin load warnings ...)."""
    started_at: str | None
    """When the trial started (UTC ``...Z``), None when unknown."""
    written_at: str
    """When the verdict was derived (UTC ``...Z``): the injected clock's time."""
    working_folder: dict | None = None
    """The trial's own folder ``{form, path, source, removed}``, None when not recorded."""
    summary: str | None = None
    """One sentence in the message language saying what happened; None when no summariser was given."""
    override: dict | None = None
    """What ``verdict --override WHY`` records ``{why, evaluation_goal_result, replaced}``, None otherwise."""

    def to_doc(self) -> dict:
        """The verdict.json document: every key in the order verdict.json has always had, lists as lists;
        ``working_folder``, ``summary`` and ``override`` only when set."""
        doc = {"schema_version": SCHEMA_VERSION, "target": self.target, "plugin": self.plugin, "skill": self.skill,
               "run_id": self.run_id, "tier": self.tier, "downgrade_reason": self.downgrade_reason,
               "proof": self.proof, "blocked": self.blocked, "launch": self.launch, "completion": self.completion,
               "goal_result": self.goal_result, "goal_blockers": list(self.goal_blockers),
               "evidence": [dict(e) for e in self.evidence], "evidence_text": self.evidence_text,
               "unverified": self.unverified, "goal_ledger": self.goal_ledger, "watch_id": self.watch_id,
               "evaluation_file": self.evaluation_file, "nudge_count": self.nudge_count,
               "gate_response_count": self.gate_response_count, "gate_kind": self.gate_kind,
               "gate_contract_evidence": list(self.gate_contract_evidence),
               "gate_answers": [dict(a) for a in self.gate_answers], "criteria": [dict(c) for c in self.criteria],
               "poll_exit": self.poll_exit, "stop_reason": self.stop_reason, "stall_row": self.stall_row,
               "failure_reason": self.failure_reason,
               "overall": {"verdict": self.overall.verdict, "reasons": list(self.overall.reasons)},
               "skill_dir_tree_sha": self.skill_dir_tree_sha, "closure_plugins": list(self.closure_plugins),
               "closure_file_count": self.closure_file_count, "transcript_sha256": self.transcript_sha256,
               "session_id": self.session_id, "scenario_id": self.scenario_id,
               "scenario_origin": self.scenario_origin, "environment": self.environment.to_doc(),
               "requested_model": self.requested_model, "actual_model": list(self.actual_model),
               "notes": list(self.notes), "warnings": list(self.warnings),
               "started_at": self.started_at, "written_at": self.written_at}
        if self.working_folder is not None:
            doc["working_folder"] = dict(self.working_folder)
        if self.summary is not None:
            doc["summary"] = self.summary
        if self.override is not None:
            doc["override"] = dict(self.override)
        return doc


def sha256_file(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    with open(path, "rb") as fh:
        return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()


def contract_id(template_text: str, target: str, args: str, scenario_sha: str | None) -> str:
    """``sha256:<hex>`` of the task contract from its parts: the task template's text, the target, the args and
    the rehearsal scenario file's ``sha256:<hex>`` (None: live). Pure: :func:`scenario_id` reads the files."""
    contract = {"template": hashlib.sha256(template_text.encode("utf-8")).hexdigest(), "target": target,
                "args": args or "", "scenario": scenario_sha}
    return "sha256:" + hashlib.sha256(json.dumps(contract, sort_keys=True).encode("utf-8")).hexdigest()


def scenario_id(target: str, args: str = "", scenario_path: Path | None = None, template_text: str | None = None) -> str:
    """``sha256:<hex>`` of the task contract: the task template, the target, the args, and (rehearsal) the scenario file.

    A change to any of them makes old verdicts non-reusable (seed 001: change scenario_id with the contract).
    """
    if template_text is None:
        from live_trial.resources import read_reference

        template_text = read_reference("task-template.md")
    scenario = sha256_file(Path(scenario_path)) if scenario_path is not None else None
    return contract_id(template_text, target, args, scenario)
