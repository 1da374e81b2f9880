"""``trial-state.json`` as a typed object: what a trial records so that a resume, ``reap`` and the steps run by hand
continue from it (README "What a trial leaves behind", "Resuming a trial").

:class:`TrialState` mirrors ``schemas/trial-state.schema.json`` field for field and is read and written in one place
(:meth:`TrialState.load`, :meth:`TrialState.save`: schema-checked, atomic). An optional key the schema does not let
be null (``args`` of an old trial, ``lease_ttl_s`` of a trial not prepared by hand) is None here and left out of the
file, so an older state reads back and is written again unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from live_trial.jsonfile import read_json, write_json
from live_trial.workdir_files import TRIAL_STATE

STATE_SCHEMA = "trial-state.schema.json"
STATE_VERSION = 1


@dataclass
class TrialState:
    """One trial's recorded state; a field per key of ``trial-state.json``."""

    run_id: str                          #: the workdir's name, ``<UTC time>-<4 hex>``
    target: str                          #: the skill under trial, ``plugin:skill`` or a bare skill
    plugin: str | None                   #: the target's plugin (None: a bare skill)
    skill: str                           #: the target's skill name
    cwd: str                             #: where the session starts (the trial's own folder)
    session: str                         #: the tmux session name
    session_id: str                      #: the CLI's session id (``--session-id``), names the transcript
    phase: str                           #: created | prepared | booting | ... | finished (trial/facts.PHASES)
    owner_pid: int                       #: the harness driving the trial (a prepared trial: its lease's process)
    started_at: str                      #: UTC ISO 8601 with ``Z``
    nudge_count: int = 0                 #: nudges sent (seed 001 STALL row 4)
    gate_response_count: int = 0         #: questions answered so far
    gate_responses: list[str] = field(default_factory=list)        #: the answers given for the gates, in order
    stall_extended: bool = False         #: STALL row 2 doubled the stall limit once
    rehearsal: dict[str, Any] | None = None   #: ``{scenario, port}`` of a rehearsal (``tape``: a replay), None live
    schema_version: int = STATE_VERSION  #: always 1
    args: str | None = None              #: the skill's arguments (None: an older state without them)
    plugins_root: str | None = None      #: where the plugin and its dependencies were found
    eval_root: str | None = None         #: the eval root the workdir is in
    socket: str | None = None            #: the tmux socket name (None: the default server)
    config_dir: str | None = None        #: the CLI config folder the session runs with
    claude_bin: str | None = None        #: the claude executable booted
    claude_version: str | None = None    #: its version, as ``claude --version`` said
    model: str | None = None             #: the requested model (None: the CLI's default)
    proof: bool | None = None            #: a proof trial (full model id, never downgraded)
    gate_kind: str | None = None         #: rescue | contractual: the kind of an answer without its own
    lease_ttl_s: float | None = None     #: a prepared trial: its session lease's time-to-live, seconds
    pane_pid: int | None = None          #: the pid of the pane's command (the CLI)
    gate_response_kinds: list[str] | None = None   #: the kind of each of ``gate_responses`` (None: older trials)
    gate_answers: list[dict[str, Any]] | None = None  #: one line per answered question: question, options, answer, kind
    cwd_snapshot: str | None = None      #: the folder's snapshot at start (collect compares against it)
    cwd_snapshot_sha256: str | None = None   #: the snapshot file's digest when it was written (checked before use)
    folder: dict[str, Any] | None = None     #: the trial's own folder record (form, path, source, removed, ...)
    expect_gate: bool | None = None      #: ``--expect-gate``: the skill must stop at a question
    policy: dict[str, Any] | None = None     #: the loop bounds the trial started with (a resume keeps them)
    delivery: bool | None = None         #: ``prepare --delivery``: its first artifact waits for the person's choice
    lang: str | None = None              #: the notification language asked for at the start
    collected: bool | None = None        #: the evidence was collected into the workdir
    records_seal: str | None = None      #: the digest of records-seal.json written at collect (trial/seal.py)
    evaluator: dict[str, Any] | None = None      #: the evaluator process while it runs (pid, start ticks)
    containment: dict[str, Any] | None = None    #: where the session's processes are held (session/containment.py)
    evaluator_containment: dict[str, Any] | None = None  #: where the evaluator's are held while it runs
    notification: dict[str, Any] | None = None   #: the trial's one notification: status and when
    facts: dict[str, Any] | None = None  #: what the trial established so far (trial/facts.Facts.to_doc)
    closure: dict[str, Any] | None = None    #: the behaviour closure pinned when the trial was created
    environment: dict[str, Any] | None = None    #: claude, tmux, Python and platform versions at the start
    recording: dict[str, Any] | None = None  #: ``{port, upstream}`` of a recorded live trial's proxy (``run --record``)
    mcp_fixtures: list[dict[str, Any]] | None = None  #: the stand-in MCP servers started (trial/activity.py)
    case_run: dict[str, Any] | None = None       #: the case run it is an attempt of (acceptance/case_verdict.CaseRun)
    criteria: list[dict[str, Any]] | None = None  #: a suite case's own criteria {id, text} (acceptance/case_criteria)
    activation: dict[str, Any] | None = None     #: the activation prompt it is a session of (acceptance/activation)

    # ------------------------------------------------------------------ reading and writing
    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> "TrialState":
        """The state of a schema-valid ``trial-state.json`` document (keys it lacks take their defaults)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in known})

    @classmethod
    def load(cls, path: Path) -> "TrialState":
        """Read ``path`` (schema-checked). Raises what :func:`live_trial.jsonfile.read_json` raises (a missing or
        invalid file: RefusedInput / SchemaInvalid, one line)."""
        return cls.from_doc(read_json(path, STATE_SCHEMA))

    def to_doc(self) -> dict[str, Any]:
        """The JSON document: every field, except the optional ones the schema does not let be null that are None."""
        doc: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name in _NOT_NULL:
                continue
            doc[f.name] = value
        return doc

    def save(self, path: Path) -> None:
        """Write ``path`` atomically after the schema check. Raises SchemaInvalid (nothing written) and OSError."""
        write_json(path, self.to_doc(), STATE_SCHEMA)

    def update(self, **changes: Any) -> None:
        """Set the given fields. Raises AttributeError for a name that is not a field (a misspelt key is a bug)."""
        names = {f.name for f in fields(self)}
        for name, value in changes.items():
            if name not in names:
                raise AttributeError(f"{TRIAL_STATE} has no field {name!r}")
            setattr(self, name, value)


#: The optional keys whose schema type does not include null: left out of the file while unset.
_NOT_NULL = frozenset({"args", "plugins_root", "eval_root", "proof", "gate_kind", "lease_ttl_s",
                       "gate_response_kinds", "gate_answers", "folder", "expect_gate", "policy", "collected",
                       "facts", "environment", "records_seal", "cwd_snapshot_sha256", "recording", "case_run",
                       "criteria", "delivery", "activation"})
