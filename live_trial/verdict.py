"""The verdict of one trial: ``derive_overall`` (seed 001 判定ロジック), gate-kind grounding, the proof gates,
the actual model, and a schema-validated ``verdict.json`` (issue 5).

Judgement table (seed 001 + issue 5), applied by :func:`judge` in this order — the first matching group wins:

==== ====================================================================== ==========
step condition                                                              overall
==== ====================================================================== ==========
1    ``blocked`` (tmux/claude missing) or last poll exit HARD_CAP or BLOCKED BLOCKED
2    launch FAIL                                                             FAIL
3    completion FAIL, or completion PASS but the last poll exit is not DONE  FAIL
4    (collect DEGRADED reasons) goal not PASS; nudges > 0; rescue gate > 0   —
5    proof: any gate response (any kind); any DEGRADED reason; actual model  FAIL
     set ≠ {requested} (empty, several, other, or no requested model)
6    any DEGRADED reason                                                     DEGRADED
7    otherwise                                                               PASS
==== ====================================================================== ==========

Precedence decisions: BLOCKED beats FAIL (a trial the environment stopped — tmux missing, the hard cap —
was not judged; seed 001 says record it ``--blocked`` whatever else happened), also in proof trials (BLOCKED
is never a pass, so it cannot loosen a proof). Launch beats completion beats goal. In a proof trial every
DEGRADED reason becomes FAIL and the model gate is checked even when the rest would PASS.
Gate kind: default ``rescue``; normalised to ``rescue`` when there were no gate responses; ``contractual``
with responses must be grounded in the skill's frontmatter (:func:`contract_evidence`), else refused.

Reading a verdict back (plan's reuse) recomputes :func:`derive_overall` from the verdict's own inputs
(:meth:`VerdictInputs.from_doc`), so an edited ``overall`` is detected.
"""
from __future__ import annotations

import hashlib
import json
import platform
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial import transcript as transcript_mod
from live_trial.errors import RefusedInput
from live_trial.jsonfile import utc_now, write_json
from live_trial.origin import check_state_target, workdir_origin

SCHEMA = "live-trial-verdict.schema.json"
SCHEMA_VERSION = "live-trial-verdict/1"
VERDICT_FILE = "verdict.json"
TRANSCRIPT_FILE = "transcript.jsonl"
EVALUATION_FILE = "evaluation.json"
RESULTS = ("PASS", "FAIL")
OVERALLS = ("PASS", "FAIL", "DEGRADED", "BLOCKED")
GATE_KINDS = ("rescue", "contractual")
POLL_EXITS = ("DONE", "STALL", "GATE", "HARD_CAP", "TICK_BUDGET", "BLOCKED")
ORIGINS = ("live", "rehearsal")
#: Tools whose pending call is a gate (live_trial.status GATE_TOOLS); naming one in allowed-tools grounds ``contractual``.
GATE_TOOLS = ("AskUserQuestion", "ExitPlanMode")
GUARD_KEY = "external_mutation_guard"


# --------------------------------------------------------------------------------------------- judging

@dataclass(frozen=True)
class VerdictInputs:
    """Everything :func:`derive_overall` looks at. Results are ``"PASS"``/``"FAIL"``; ``goal_result`` None = not judged."""

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

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> "VerdictInputs":
        """The inputs recorded in a verdict document (for re-deriving its overall)."""
        return cls(launch=doc["launch"], completion=doc["completion"], goal_result=doc.get("goal_result"),
                   nudge_count=doc["nudge_count"], gate_response_count=doc["gate_response_count"],
                   gate_kind=doc["gate_kind"], poll_exit=doc.get("poll_exit"), proof=doc["proof"],
                   blocked=doc["blocked"], requested_model=doc.get("requested_model"),
                   actual_model=tuple(doc.get("actual_model") or ()))


@dataclass(frozen=True)
class Judgement:
    """``verdict`` is one of PASS, FAIL, DEGRADED, BLOCKED; ``reasons`` say why (empty for a clean PASS)."""

    verdict: str
    reasons: tuple[str, ...]


def normalise_gate_kind(kind: str | None, gate_response_count: int) -> str:
    """``rescue`` unless ``kind`` is ``contractual`` and there were gate responses (seed 001: default + 0 → rescue)."""
    return "contractual" if kind == "contractual" and gate_response_count > 0 else "rescue"


BLOCKED_WHY = {
    "tmux_missing": "tmux was missing",
    "claude_missing": "the claude binary was missing",
    "tmux_error": "tmux stopped answering",
    "hard_cap": "the trial reached its hard time cap",
    "harness_interrupted": "the harness was stopped (Ctrl-C or SIGTERM) before the trial finished",
}


def judge(inputs: VerdictInputs) -> Judgement:
    """Apply the judgement table of the module docstring. Pure."""
    i = inputs
    kind = normalise_gate_kind(i.gate_kind, i.gate_response_count)
    if i.blocked:
        return Judgement("BLOCKED", ("blocked: a required tool (tmux or claude) was missing",))
    if i.poll_exit in ("HARD_CAP", "BLOCKED"):
        return Judgement("BLOCKED", (f"poll ended {i.poll_exit}: the trial was stopped before it could be judged",))
    if i.launch != "PASS":
        return Judgement("FAIL", ("launch failed: the skill never started (boot, install or argument problem)",))
    if i.completion != "PASS":
        where = f" (last poll exit {i.poll_exit})" if i.poll_exit else ""
        return Judgement("FAIL", (f"did not complete on its own{where}",))
    if i.poll_exit not in (None, "DONE"):
        return Judgement("FAIL", (f"completion PASS contradicts the last poll exit {i.poll_exit}",))
    degraded: list[str] = []
    if i.goal_result != "PASS":
        degraded.append("goal FAIL: it completed but did not achieve its goal (goal-proxy gap)"
                        if i.goal_result == "FAIL" else "goal not judged")
    if i.nudge_count > 0:
        degraded.append(f"{i.nudge_count} nudge(s) were needed: not self-driven")
    if i.gate_response_count > 0 and kind == "rescue":
        degraded.append(f"{i.gate_response_count} rescue gate response(s): a person had to step in")
    if i.proof:
        fails: list[str] = []
        if i.gate_response_count > 0:
            fails.append(f"proof: {i.gate_response_count} gate response(s) ({kind}); a proof allows none")
        fails += [f"proof: {r}" for r in degraded]
        model_problem = proof_model_problem(i.requested_model, i.actual_model)
        if model_problem:
            fails.append(f"proof: {model_problem}")
        if fails:
            return Judgement("FAIL", tuple(dict.fromkeys(fails)))
    if degraded:
        return Judgement("DEGRADED", tuple(degraded))
    return Judgement("PASS", ())


def derive_overall(inputs: VerdictInputs) -> str:
    """PASS | FAIL | DEGRADED | BLOCKED for ``inputs`` (seed 001 判定ロジック; see the module docstring). Pure."""
    return judge(inputs).verdict


def proof_model_problem(requested: str | None, actual: Iterable[str]) -> str | None:
    """Why the actual model set fails a proof trial, or None when it is exactly ``{requested}`` (seed 001 model gate)."""
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


def actual_models(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Unique ``message.model`` of main-chain assistant records, without ``<synthetic>`` (delegates to transcript)."""
    from live_trial.transcript import main_chain_assistant_models

    return main_chain_assistant_models(records)


# --------------------------------------------------------------------------------------------- grounding

def allowed_tools(frontmatter: Mapping[str, Any]) -> list[str]:
    """Tool names of ``allowed-tools`` (a YAML list, or a comma/space separated string; ``Bash(python3 *)`` → ``Bash``)."""
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
        raise RefusedInput("gate kind contractual is not grounded in the skill's frontmatter", code="ungrounded_contractual",
                           fix=f"the skill must declare {GUARD_KEY} or allowed-tools with AskUserQuestion or "
                               "ExitPlanMode; otherwise record the gate responses as rescue")
    return found


# --------------------------------------------------------------------------------------------- documents

def sha256_file(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    with open(path, "rb") as fh:
        return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()


def scenario_id(target: str, args: str = "", scenario_path: Path | None = None, template_text: str | None = None) -> str:
    """``sha256:<hex>`` of the task contract: the task template, the target, the args, and (rehearsal) the scenario file.

    A change to any of them makes old verdicts non-reusable (seed 001: change scenario_id with the contract).
    """
    if template_text is None:
        from live_trial.resources import read_reference

        template_text = read_reference("task-template.md")
    scenario = None
    if scenario_path is not None:
        scenario = sha256_file(Path(scenario_path))
    contract = {"template": hashlib.sha256(template_text.encode("utf-8")).hexdigest(), "target": target,
                "args": args or "", "scenario": scenario}
    return "sha256:" + hashlib.sha256(json.dumps(contract, sort_keys=True).encode("utf-8")).hexdigest()


def environment(claude_version: str | None = None, tmux_version: str | None = None) -> dict:
    """Versions only (claude, tmux, python, platform) — never environment variables or keys."""
    if tmux_version is None:
        try:
            from live_trial.backend import Backend

            tmux_version = Backend().tmux_version()
        except Exception:  # noqa: BLE001 - a missing tmux is recorded as null, not an error here
            tmux_version = None
    return {"claude_version": claude_version, "tmux_version": tmux_version,
            "python": platform.python_version(), "platform": platform.platform(terse=True)}


def _check_choice(value: Any, choices: tuple, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if value not in choices:
        raise RefusedInput(f"{name} must be one of {', '.join(choices)} (got {value!r})", where=name, code="bad_value",
                           fix=f"pass {name} {'|'.join(choices)}")


def _check_count(value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RefusedInput(f"{name} must be a whole number >= 0 (got {value!r})", where=name, code="bad_value")


def _evidence_items(items: Iterable[Mapping[str, Any]] | None) -> list[dict]:
    out = []
    for item in items or ():
        out.append({k: str(item.get(k, "")) for k in ("claim", "source", "observed")})
    return out


def _closure_fields(target: Any, plugins_root: Path | None, at_boot: Mapping[str, Any] | None,
                    notes: list[str]) -> tuple[str, list[str], int]:
    """``(digest, plugin names, file count)`` for the verdict: the boot-time closure when known, else now's.
    Appends a note to ``notes`` when the files changed since boot or the closure cannot be built any more."""
    from live_trial import closure

    try:
        now = closure.pin(target, plugins_root)
    except closure.ClosureError as exc:
        if not at_boot:
            raise
        notes.append(f"the behaviour closure can no longer be built ({exc.message}); the verdict records the "
                     "closure pinned when the trial started")
        return str(at_boot["digest"]), [str(n) for n in at_boot["plugins"]], int(at_boot["file_count"])
    if not at_boot:
        return now.digest, [p.name for p in now.plugins], len(now.files)
    if now.digest != at_boot["digest"]:
        notes.append(f"the skill's files changed during the trial: the verdict records the closure tested "
                     f"({at_boot['digest'][:19]}), not the files now ({now.digest[:19]}), which need a new trial")
    return str(at_boot["digest"]), [str(n) for n in at_boot["plugins"]], int(at_boot["file_count"])


def build_verdict(*, workdir: Path, target: Any, plugins_root: Path | None, session_id: str | None,
                  requested_model: str | None, launch: str, completion: str, goal_result: str | None,
                  nudge_count: int = 0, gate_response_count: int = 0, gate_kind: str = "rescue",
                  poll_exit: str | None = None, proof: bool = False, blocked: bool = False,
                  scenario_origin: str = "live", scenario_path: Path | None = None, args: str = "",
                  goal_blockers: Iterable[str] = (), evidence: Iterable[Mapping[str, Any]] | None = None,
                  evidence_text: str | None = None, unverified: str | None = None, goal_ledger: str | None = None,
                  claude_version: str | None = None, tmux_version: str | None = None,
                  stop_reason: str | None = None, stall_row: int | None = None, failure_reason: str | None = None,
                  notes: Iterable[str] = (), warnings: Iterable[str] = (), started_at: str | None = None,
                  watch_id: str | None = None, closure_at_boot: Mapping[str, Any] | None = None) -> dict:
    """Build (not write) a verdict document, checking every rule first. Raises :class:`RefusedInput` (exit 2) for
    a denylisted target, a bad value, an ungrounded ``contractual``, a target other than the one the workdir's
    ``trial-state.json`` records, or an unreadable ``trial-state.json``; :class:`~live_trial.closure.ClosureError`
    when the behaviour closure cannot be built. ``target`` is a :class:`~live_trial.closure.Target` or a string.

    ``scenario_origin`` is checked against the workdir (:func:`live_trial.origin.workdir_origin`): a rehearsal
    workdir is always recorded ``rehearsal`` — a caller's ``live`` is overridden with a note (not refused: the
    workdir decides, and the override can only make the verdict less reusable, never more) and the scenario path
    is taken from ``trial-state.json`` when the caller gave none.

    ``closure_at_boot`` (``{"digest", "plugins", "file_count", ...}``, trial-state.json ``closure``): the
    behaviour closure pinned when the trial started. The verdict records that one — what was really tested — so a
    skill edited during the trial is not recorded (and later reused) as tested; a note says when the files differ
    now or the closure can no longer be built (then no ClosureError is raised: the trial did run)."""
    from live_trial import closure
    from live_trial.backend import check_target_allowed
    from live_trial.plan import derive_tier

    qualified = target.qualified if isinstance(target, closure.Target) else str(target)
    check_target_allowed(qualified)
    for value, choices, name in ((launch, RESULTS, "--launch"), (completion, RESULTS, "--completion"),
                                 (gate_kind, GATE_KINDS, "--gate-kind"), (scenario_origin, ORIGINS, "scenario_origin")):
        _check_choice(value, choices, name)
    _check_choice(goal_result, RESULTS, "--goal-result", optional=True)
    _check_choice(poll_exit, POLL_EXITS, "--poll-exit", optional=True)
    _check_count(nudge_count, "--nudge-count")
    _check_count(gate_response_count, "--gate-response-count")
    workdir = Path(workdir).resolve()
    if not workdir.is_dir():
        raise RefusedInput("workdir is not a folder", where=str(workdir), code="bad_workdir",
                           fix="pass the trial's workdir eval-log/<plugin>/<skill>/live-trial/<run-id>")
    if not isinstance(target, closure.Target):
        target = closure.resolve_target(qualified, plugins_root)  # type: ignore[arg-type]
    found = workdir_origin(workdir)
    check_state_target(found.state, target.plugin_name, target.skill, qualified)
    kind = normalise_gate_kind(gate_kind, gate_response_count)
    notes = list(notes)
    if found.origin == "rehearsal" and scenario_origin != "rehearsal":
        # The workdir is the authority: a rehearsal is never recorded as live (it would be reused as a live PASS).
        notes.append(f"scenario_origin {scenario_origin} was overridden to rehearsal: {found.why}")
        scenario_origin = "rehearsal"
        if scenario_path is None and found.scenario is not None and found.scenario.is_file():
            scenario_path = found.scenario
    if gate_kind == "contractual" and kind == "rescue":
        notes.append("gate kind contractual was normalised to rescue: there were no gate responses")
    grounding = contract_evidence(target.frontmatter) if kind == "contractual" else []
    digest, plugin_names, file_count = _closure_fields(target, plugins_root, closure_at_boot, notes)
    transcript = workdir / TRANSCRIPT_FILE
    transcript_sha, models = None, []
    if transcript.is_file():
        from live_trial.transcript import read_records

        transcript_sha = transcript_mod.transcript_sha256(transcript)
        models = actual_models(read_records(transcript).records)
    else:
        notes.append(f"{TRANSCRIPT_FILE} is missing from the workdir: no transcript_sha256, no actual model")
    tier = derive_tier(target.frontmatter)
    downgrade = None
    if scenario_origin == "rehearsal":
        downgrade = "rehearsal: the model was scripted; this proves the harness path and plugin loading, not the skill"
    elif tier != "live":
        downgrade = f"the skill's tier is {tier}: fork or static acceptance would have been enough"
    inputs = VerdictInputs(launch, completion, goal_result, nudge_count, gate_response_count, kind, poll_exit,
                           bool(proof), bool(blocked), requested_model or None, tuple(models))
    judgement = judge(inputs)
    if blocked and stop_reason in BLOCKED_WHY:
        # The table says BLOCKED; the reason says which block it was (tool missing, time cap, harness stopped).
        judgement = Judgement(judgement.verdict, (f"blocked: {BLOCKED_WHY[stop_reason]}",))
    return {
        "schema_version": SCHEMA_VERSION,
        "target": qualified,
        "plugin": target.plugin_name,
        "skill": target.skill,
        "run_id": workdir.name,
        "tier": tier,
        "downgrade_reason": downgrade,
        "proof": bool(proof),
        "blocked": bool(blocked),
        "launch": launch,
        "completion": completion,
        "goal_result": goal_result,
        "goal_blockers": [str(b) for b in goal_blockers],
        "evidence": _evidence_items(evidence),
        "evidence_text": evidence_text or None,
        "unverified": unverified or None,
        "goal_ledger": goal_ledger,
        "watch_id": watch_id,
        "evaluation_file": EVALUATION_FILE if (workdir / EVALUATION_FILE).is_file() else None,
        "nudge_count": nudge_count,
        "gate_response_count": gate_response_count,
        "gate_kind": kind,
        "gate_contract_evidence": grounding,
        "poll_exit": poll_exit,
        "stop_reason": stop_reason,
        "stall_row": stall_row,
        "failure_reason": failure_reason,
        "overall": {"verdict": judgement.verdict, "reasons": list(judgement.reasons)},
        "skill_dir_tree_sha": digest,
        "closure_plugins": plugin_names,
        "closure_file_count": file_count,
        "transcript_sha256": transcript_sha,
        "session_id": session_id or None,
        "scenario_id": scenario_id(qualified, args, scenario_path if scenario_origin == "rehearsal" else None),
        "scenario_origin": scenario_origin,
        "environment": environment(claude_version, tmux_version),
        "requested_model": requested_model or None,
        "actual_model": models,
        "notes": notes,
        "warnings": [str(w) for w in warnings],
        "started_at": started_at,
        "written_at": utc_now(),
    }


def write_verdict(workdir: Path, doc: dict) -> Path:
    """Validate ``doc`` against the verdict schema and write ``<workdir>/verdict.json`` atomically; return its path.

    Raises :class:`~live_trial.errors.SchemaInvalid` (nothing written) when it does not fit.
    """
    path = Path(workdir).resolve() / VERDICT_FILE
    write_json(path, doc, SCHEMA)
    return path


def write_trial_verdict(**kw: Any) -> tuple[dict, Path]:
    """Build and write a trial's verdict (the API ``run`` calls). Keywords: those of :func:`build_verdict`.

    Returns ``(doc, path)``. Refusals raise before anything is written.
    """
    doc = build_verdict(**kw)
    return doc, write_verdict(kw["workdir"], doc)


def read_verdict(path: Path) -> dict:
    """Read and schema-validate a verdict; raise :class:`RefusedInput` naming the file when unreadable or invalid."""
    from live_trial.jsonfile import read_json

    return read_json(Path(path), SCHEMA)
