"""The shape of ``verdict.json`` (``schemas/live-trial-verdict.schema.json``; seed 001 "verdict + 掃除"): its schema
version, the :class:`Verdict` a trial's verdict is derived into and the document it writes (:meth:`Verdict.to_doc`,
from its fields), the mark of a fact or finding it records as it is (:data:`AS_IS`), and the task contract's
``scenario_id``. The workdir's file names are :mod:`live_trial.workdir_files`'s.

The bottom of the verdict's modules: it imports none of them. :mod:`live_trial.acceptance.verdict_facts` reads a
workdir into facts, :mod:`live_trial.acceptance.derive` derives a :class:`Verdict` from them without reading
anything, :mod:`live_trial.acceptance.verdict` writes and reads the document.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from live_trial.acceptance.overall import Judgement

SCHEMA = "live-trial-verdict.schema.json"


SCHEMA_VERSION = "live-trial-verdict/2"


#: Verdicts judged under the older evidence rules: still read, never reused by plan.
OLDER_SCHEMA_VERSIONS = ("live-trial-verdict/1",)


ORIGINS = ("live", "rehearsal")


#: ``dataclasses.field(metadata=AS_IS)`` marks a field of :class:`~live_trial.acceptance.verdict_facts.VerdictFacts`
#: or :class:`~live_trial.acceptance.findings.Findings` that the verdict records as it is, under the same name:
#: :func:`live_trial.acceptance.derive.derive_verdict` carries each such field over (:func:`as_is`), so a new one
#: needs no line there.
AS_IS: Mapping[str, Any] = {"verdict": "as is"}


def as_is(source: Any) -> dict[str, Any]:
    """The fields of the dataclass instance ``source`` marked :data:`AS_IS`, by name, with their values."""
    return {f.name: getattr(source, f.name) for f in fields(source) if f.metadata.get("verdict") == AS_IS["verdict"]}


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

    def to_doc(self) -> dict[str, Any]:
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
    evidence: tuple[dict[str, Any], ...]
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
    gate_answers: tuple[dict[str, Any], ...]
    """One line per answered question ``{n, question, options, answer, kind}``."""
    criteria: tuple[dict[str, Any], ...]
    """One line per criterion of the skill's feedback_contract."""
    poll_exit: str | None
    """The last poll exit (DONE, STALL, GATE, HARD_CAP, TICK_BUDGET, BLOCKED), None when poll never ran."""
    stop_reason: str | None
    """Why the trial stopped (a :class:`~live_trial.stop_reasons.StopReason`, or the code of an error a step raised),
    None for a clean end."""
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
    working_folder: dict[str, Any] | None = None
    """The trial's own folder ``{form, path, source, removed}``, None when not recorded."""
    summary: str | None = None
    """One sentence in the message language saying what happened; None when no summariser was given."""
    override: dict[str, Any] | None = None
    """What ``verdict --override WHY`` records ``{why, evaluation_goal_result, replaced}``, None otherwise."""
    usage: dict[str, Any] | None = None
    """Tokens per model of the session and the evaluator, each API response once, and the API list price estimate
    (:func:`live_trial.acceptance.verdict_facts.trial_usage`); None when the trial left no transcript."""
    plugin_activity: dict[str, Any] | None = None
    """The ledger of the loaded plugins' hooks and MCP servers (:mod:`live_trial.session.plugin_activity`); None when
    the trial loaded none of either."""

    def to_doc(self) -> dict[str, Any]:
        """The verdict.json document: ``schema_version``, then every field under its own name in the order above
        (the order verdict.json has always had), tuples as lists, the overall judgement and the environment as
        objects; a field whose default is None (``working_folder``, ``summary``, ``override``) only when set. A new
        field is written without a line here."""
        doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.default is None:
                continue
            doc[f.name] = _doc_value(value)
        return doc


def _doc_value(value: Any) -> Any:
    """One field's value as verdict.json keeps it: ``to_doc()`` of an object that has it, a dataclass's fields as an
    object, a tuple (or list) as a new list (of copies of its mappings), a mapping copied."""
    if hasattr(value, "to_doc"):
        return value.to_doc()
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _doc_value(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (tuple, list)):
        return [dict(v) if isinstance(v, Mapping) else v for v in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


def sha256_file(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    with open(path, "rb") as fh:
        return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()


def fixture_words(command: Sequence[str]) -> tuple[str, ...]:
    """The words of a stand-in MCP server's command as its task contract holds them: a word naming an existing file
    by its absolute path (the stand-in's script) as that file's ``sha256:<hex>``, every other word as written; so an
    edit of the script changes the contract and a checkout in another folder does not (references/suite-format.md
    "What a case changes in the plan")."""
    out = []
    for word in command:
        path = Path(word)
        out.append(sha256_file(path) if path.is_absolute() and path.is_file() else word)
    return tuple(out)


def contract_id(template_text: str, target: str, args: str, scenario_sha: str | None,
                answers: Sequence[tuple[str, str]] = (), criteria: Sequence[tuple[str, str]] = (),
                fixtures: Sequence[tuple[str, Sequence[str]]] = ()) -> str:
    """``sha256:<hex>`` of the task contract from its parts: the task template's text, the target, the args, the
    rehearsal scenario file's ``sha256:<hex>`` (None: live) and the answers given for the skill's questions
    (``(answer, kind)`` in order: a suite case's ``answers``, ``run --gate-response``). No answers leaves the contract
    as it was before answers were part of it, so a trial without answers keeps its id (references/suite-format.md);
    so do a suite case's own ``criteria`` (``(id, text)``) and its stand-in MCP servers (``fixtures``: ``(name,
    words)``, the words of :func:`fixture_words`, in name order).
    Pure: :func:`scenario_id` reads the files."""
    contract: dict[str, Any] = {"template": hashlib.sha256(template_text.encode("utf-8")).hexdigest(),
                                "target": target, "args": args or "", "scenario": scenario_sha}
    if answers:
        contract["answers"] = [[str(a), str(k)] for a, k in answers]
    if criteria:
        contract["criteria"] = [[str(i), str(t)] for i, t in criteria]
    if fixtures:
        contract["mcp_fixtures"] = sorted([str(n), [str(w) for w in words]] for n, words in fixtures)
    return "sha256:" + hashlib.sha256(json.dumps(contract, sort_keys=True).encode("utf-8")).hexdigest()


def scenario_id(target: str, args: str = "", scenario_path: Path | None = None,
                template_text: str | None = None, answers: Sequence[tuple[str, str]] = (),
                criteria: Sequence[tuple[str, str]] = (), mcp_fixtures: Sequence[tuple[str, str]] = ()) -> str:
    """``sha256:<hex>`` of the task contract: the task template, the target, the args, (rehearsal) the scenario
    file, the answers given (``(answer, kind)`` pairs; none: the id as before answers counted), a suite case's
    criteria and its stand-in MCP servers (``(NAME, COMMAND)``: the command split as a shell would, its script files
    by their content, :func:`fixture_words`).

    A change to any of them makes old verdicts non-reusable (seed 001: change scenario_id with the contract).
    """
    if template_text is None:
        from live_trial.resources import read_reference

        template_text = read_reference("task-template.md")
    scenario = sha256_file(Path(scenario_path)) if scenario_path is not None else None
    import shlex

    fixtures = [(name, fixture_words(shlex.split(command))) for name, command in mcp_fixtures]
    return contract_id(template_text, target, args, scenario, answers, criteria, fixtures)
