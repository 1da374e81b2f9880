"""What a verdict is derived from that is on disk, read once: :func:`gather_facts` returns the :class:`VerdictFacts`
of one trial workdir (seed 001 "verdict + 掃除"; README "What a trial leaves behind").

One pass over every transcript of the session (the ones it moved away from with ``/clear`` first) gives the hash, the
actual model and whether the rehearsal server wrote the replies; ``evaluation.json`` is read once; the behaviour
closure and the environment are the ones ``trial-state.json`` recorded when the trial started (the closure is pinned
again only to say whether the files changed since; the environment is looked up only for a workdir that did not
record it). :func:`live_trial.acceptance.derive.derive_verdict` then reads nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.acceptance.case_criteria import criteria_pairs, with_criteria
from live_trial.acceptance.origin import WorkdirOrigin, check_state_target, is_rehearsal_reply, workdir_origin
from live_trial.acceptance.verdict_doc import AS_IS, Environment, sha256_file
from live_trial.closure.index import Target
from live_trial.errors import LiveTrialError, RefusedInput
from live_trial.jsonfile import parse_json, validate
from live_trial.session.activity_read import read_activity
from live_trial.session.plugin_activity import PluginActivity
from live_trial.transcript.reader import hashed_fold, iter_records
from live_trial.transcript.usage import UsageMeter
from live_trial.workdir_files import EVALUATION, TRANSCRIPT, VERDICT, Workdir

EVALUATION_SCHEMA = "evaluation.schema.json"


@dataclass(frozen=True)
class ClosurePin:
    """One computation of the behaviour closure: what a verdict records of it."""

    digest: str
    """``sha256:<hex>`` over the closure's files (``skill_dir_tree_sha``)."""
    plugins: tuple[str, ...]
    """The plugins of the dependency union, target first."""
    file_count: int
    """How many files the closure covers."""
    notes: tuple[str, ...] = ()
    """How the closure was read, for the verdict's notes (a hook command read unsure); empty when recorded at boot."""


@dataclass(frozen=True)
class ClosureFacts:
    """The behaviour closure pinned when the trial started and how it stands now."""

    at_boot: ClosurePin | None
    """The closure trial-state.json recorded at start (what was tested); None in a workdir that recorded none."""
    now: ClosurePin | None
    """The closure of the files now; None when it can no longer be built."""
    error: str | None
    """Why the closure can no longer be built (only with ``at_boot``: without it that is a refusal)."""


@dataclass(frozen=True)
class EvaluationFacts:
    """What ``evaluation.json`` holds, read once."""

    present: bool
    """The workdir holds evaluation.json."""
    checks: tuple[Mapping[str, Any], ...] | None
    """The evaluator's criterion checks; None when there are none to read."""
    could_not_judge: tuple[str, ...]
    """A fallback evaluation's last attempt's problems (at most 3): why the evaluator could not judge."""
    judgement: Mapping[str, Any] | None
    """The whole document when the evaluator judged (judged_by evaluator or insufficient_evidence), else None."""
    problem: LiveTrialError | None
    """Why the file cannot be read as an evaluation (unreadable, not JSON, not its schema); None when it can."""
    failed: str | None = None
    """Why the evaluator judged nothing (``judged_by`` fallback: no valid answer after its retry, or its process
    failed; :func:`live_trial.judge.evaluator.unjudged_problem`), None when it judged or there is no file."""


@dataclass(frozen=True)
class VerdictFacts:
    """Everything on disk a verdict is derived from (see :func:`gather_facts`). A field marked ``AS_IS`` is recorded
    in the verdict as it is, under the same name (:data:`~live_trial.acceptance.verdict_doc.AS_IS`)."""

    workdir: Path
    """The trial's workdir, resolved."""
    target: Target
    """The skill under trial, resolved (its frontmatter decides tier, grounding and criteria)."""
    origin: WorkdirOrigin
    """live or rehearsal as the workdir says, with the parsed trial-state.json (``origin.state``)."""
    transcript_sha256: str | None = field(metadata=AS_IS)
    """``sha256:<hex>`` of transcript.jsonl; None when the workdir holds none."""
    actual_models: tuple[str, ...]
    """The models of the main-chain assistant records of every transcript of the session."""
    closure: ClosureFacts
    """The behaviour closure at boot and now."""
    environment: Environment = field(metadata=AS_IS)
    """The versions recorded when the trial started (looked up now for a workdir that recorded none)."""
    evaluation: EvaluationFacts
    """What evaluation.json holds."""
    template_text: str
    """The task template (references/task-template.md), part of the task contract."""
    scenario_shas: Mapping[Path, str]
    """``sha256:<hex>`` of each rehearsal scenario file a verdict may name (the caller's, the recorded one)."""
    previous_verdict: Mapping[str, Any] | None
    """``{overall, written_at}`` of a verdict.json already in the workdir (None values: unreadable); None: none."""
    usage: Mapping[str, Any] | None = field(default=None, metadata=AS_IS)
    """What the session and the evaluator used and its estimated cost (:func:`trial_usage`); None without a
    transcript."""
    plugin_activity: PluginActivity | None = None
    """What the loaded plugins' hooks and MCP servers did in the session
    (:func:`live_trial.session.activity_read.read_activity`); None when the trial loaded none of either."""
    session_status: str | None = None
    """The status the session reported of itself in its completion marker
    (:func:`live_trial.judge.citable.marker_status`): its own words,
    never evidence, only what a person is warned of; None without one."""


def actual_models(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Unique ``message.model`` of main-chain assistant records, without ``<synthetic>`` (delegates to transcript)."""
    from live_trial.transcript.records import main_chain_assistant_models

    return main_chain_assistant_models(records)


def may_hold_assistant(line: bytes) -> bool:
    r"""False only for a transcript line that cannot be an assistant record (no ``assistant`` and no ``\u``
    escape that could spell it): such lines are not parsed when the actual model is read."""
    return b"assistant" in line or b"\\u" in line


def environment(claude_version: str | None = None, tmux_version: str | None = None) -> dict[str, Any]:
    """Versions only (claude, tmux, python, platform) — never environment variables or keys. ``tmux_version`` None:
    ``tmux -V`` is asked (null when tmux is missing)."""
    import platform as _platform

    if tmux_version is None:
        try:
            from live_trial.session.backend import Backend

            tmux_version = Backend().tmux_version()
        except Exception:  # noqa: BLE001 - a missing tmux is recorded as null, not an error here
            tmux_version = None
    return {"claude_version": claude_version, "tmux_version": tmux_version,
            "python": _platform.python_version(), "platform": _platform.platform(terse=True)}


def gather_facts(workdir: Path, target: Target, plugins_root: Any, *, scenario_path: Path | None = None,
                 closure_at_boot: Mapping[str, Any] | None = None, claude_version: str | None = None,
                 tmux_version: str | None = None, find_claude_version: bool = False) -> VerdictFacts:
    """Read what the verdict of the trial in ``workdir`` is derived from (:class:`VerdictFacts`), each file once.

    ``target``: the resolved target; ``plugins_root``: where its dependencies are (a folder or a PluginIndex).
    ``scenario_path``: the rehearsal scenario the caller names (hashed; the one trial-state.json records is hashed
    too when it is a file). ``closure_at_boot``: the closure pinned at start when the caller knows it (else
    trial-state.json's ``closure``). ``claude_version`` / ``tmux_version``: versions that replace the recorded ones;
    a workdir that recorded no ``environment`` gets the claude version trial-state.json records, else (with
    ``find_claude_version``) the one of the claude found now, and ``tmux -V``.

    Raises :class:`RefusedInput` when ``workdir`` is no folder, trial-state.json is unreadable or names another
    target; :class:`~live_trial.closure.manifest.ClosureError` when the closure cannot be built and none was
    recorded; OSError when a transcript or the named scenario cannot be read."""
    from live_trial.judge.citable import marker_status
    from live_trial.resources import read_reference

    workdir = Path(workdir).resolve()
    if not workdir.is_dir():
        raise RefusedInput("workdir is not a folder", where=str(workdir), code="bad_workdir",
                           fix="pass the trial's workdir eval-log/<plugin>/<skill>/live-trial/<run-id>")
    meter = UsageMeter()
    sha, models, scripted = _read_transcripts(workdir, meter)
    found = workdir_origin(workdir, scripted=lambda _: scripted)
    check_state_target(found.state, target.plugin_name, target.skill, target.qualified)
    state = found.state or {}
    target = with_criteria(target, criteria_pairs(state.get("criteria")))     # a suite case's own criteria
    shas = {Path(scenario_path): sha256_file(Path(scenario_path))} if scenario_path is not None else {}
    if found.scenario is not None and found.scenario not in shas and found.scenario.is_file():
        shas[found.scenario] = sha256_file(found.scenario)
    return VerdictFacts(
        workdir=workdir, target=target, origin=found, transcript_sha256=sha, actual_models=models,
        closure=_closure(target, plugins_root, closure_at_boot or state.get("closure")),
        environment=_environment(state, claude_version, tmux_version, find_claude_version),
        evaluation=_evaluation(workdir / EVALUATION), template_text=read_reference("task-template.md"),
        scenario_shas=shas, previous_verdict=_previous_verdict(workdir / VERDICT),
        usage=trial_usage(workdir, billed=found.origin == "live", meter=meter if sha is not None else None),
        plugin_activity=read_activity(workdir, target.frontmatter), session_status=marker_status(workdir))


def trial_usage(workdir: Path, *, billed: bool, meter: UsageMeter | None = None) -> dict[str, Any] | None:
    """verdict.json's ``usage`` of the trial in ``workdir`` (:func:`live_trial.transcript.usage.usage_doc`): every
    response of the session's transcripts (the ones it left with ``/clear``, ``transcript.jsonl``, ``subagents/``)
    once, and what the CLI reported for each evaluator attempt in ``evaluation.json``. ``billed``: a live trial (a
    rehearsal's cost is 0). ``meter``: one that already took every record of the session's transcripts in the
    verdict's one pass over them (only ``subagents/`` is read then). None when the workdir holds no transcript
    (nothing was spent that it can show)."""
    from live_trial.transcript.usage import Tokens, Usage, cli_session_cost, usage_doc

    wd = Workdir.of(workdir)
    if not wd.transcript.is_file():
        return None
    if meter is None:
        meter = UsageMeter()
        meter.read([*wd.moved_transcripts, wd.transcript])
    session = meter.read(sorted(wd.subagents.glob("*.jsonl")))
    evaluator: Usage | None = None
    cli_usd: float | None = None
    try:
        doc = parse_json(wd.evaluation.read_text(encoding="utf-8")) if wd.evaluation.is_file() else None
    except (OSError, ValueError, UnicodeDecodeError):
        doc = None
    for attempt in (doc or {}).get("attempts") or [] if isinstance(doc, dict) else []:
        used = attempt.get("usage") if isinstance(attempt, dict) else None
        if not isinstance(used, dict):
            continue
        by_model = dict(evaluator.by_model) if evaluator is not None else {}
        for model, counts in (used.get("by_model") or {}).items():
            by_model[model] = by_model.get(model, Tokens()) + Tokens.of_usage(counts, int(counts.get("responses", 1)))
        evaluator = Usage(by_model)
        if isinstance(used.get("cli_total_cost_usd"), (int, float)):
            cli_usd = (cli_usd or 0.0) + float(used["cli_total_cost_usd"])
    return usage_doc(session, evaluator, cli_usd, billed=billed,
                     session_cli_usd=cli_session_cost([*wd.moved_transcripts, wd.transcript]))


def _read_transcripts(workdir: Path, meter: UsageMeter) -> tuple[str | None, tuple[str, ...], bool]:
    """One pass over each transcript of the session: ``(transcript.jsonl's sha256, actual models, scripted)``; every
    record also goes to ``meter`` (the usage)."""
    transcript = workdir / TRANSCRIPT
    if not transcript.is_file():
        return None, (), False
    models: list[str] = []
    scripted = [False]

    def fold(rec: Mapping[str, Any]) -> None:
        models.extend(m for m in actual_models([rec]) if m not in models)
        scripted[0] = scripted[0] or is_rehearsal_reply(rec)
        meter.take(rec)

    for path in Workdir.of(workdir).moved_transcripts:   # the transcripts the session left; its last one below
        for rec in iter_records(path, select=may_hold_assistant):
            fold(rec)
    sha = hashed_fold(transcript, fold, select=may_hold_assistant)
    return sha, tuple(models), scripted[0]


def _closure(target: Target, plugins_root: Any, at_boot: Mapping[str, Any] | None) -> ClosureFacts:
    """The closure recorded at boot and the closure now. Raises ClosureError when it cannot be built now and none
    was recorded (fail closed: nothing to record then)."""
    from live_trial.closure.manifest import ClosureError
    from live_trial.closure.pinning import pin

    boot = None
    if at_boot:
        boot = ClosurePin(str(at_boot["digest"]), tuple(str(n) for n in at_boot["plugins"]),
                          int(at_boot["file_count"]))
    try:
        now = pin(target, plugins_root)
    except ClosureError as exc:
        if boot is None:
            raise
        return ClosureFacts(boot, None, exc.message)
    return ClosureFacts(boot, ClosurePin(now.digest, tuple(p.name for p in now.plugins), len(now.files), now.notes),
                        None)


def _environment(state: Mapping[str, Any], claude_version: str | None, tmux_version: str | None,
                 find_claude_version: bool) -> Environment:
    """The environment trial-state.json recorded at start, the given versions in place of its own; without a record,
    the versions known now (see :func:`gather_facts`)."""
    recorded = state.get("environment")
    if isinstance(recorded, Mapping):
        try:
            env = Environment.from_doc(recorded)
        except KeyError:
            env = None
        if env is not None:
            return Environment(claude_version or env.claude_version, tmux_version or env.tmux_version, env.python,
                               env.platform)
    version = claude_version or state.get("claude_version")
    if version is None and find_claude_version:
        try:
            from live_trial.session.claude_bin import find_claude

            version = find_claude().version
        except Exception:  # noqa: BLE001 - the version is recorded when known
            version = None
    return Environment.from_doc(environment(version, tmux_version))


def _evaluation(path: Path) -> EvaluationFacts:
    """``evaluation.json`` read once (tolerant for the checks and the fallback's problems; schema-checked for the
    judgement, as :func:`live_trial.jsonfile.read_json` would)."""
    if not path.is_file():
        return EvaluationFacts(False, None, (), None, None)
    try:
        doc = parse_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return EvaluationFacts(True, None, (), None, RefusedInput(
            f"cannot read: {exc.strerror or exc}", where=str(path), code="unreadable", fix="make the file readable"))
    except (ValueError, UnicodeDecodeError) as exc:
        return EvaluationFacts(True, None, (), None, RefusedInput(
            f"not valid JSON: {str(exc).splitlines()[0][:200]}", where=str(path), code="bad_json",
            fix="fix or remove the file"))
    checks = doc.get("checks") if isinstance(doc, dict) else None
    problem = None
    try:
        validate(doc, EVALUATION_SCHEMA, what=str(path))
    except LiveTrialError as exc:
        problem = exc
    judged = problem is None and doc.get("judged_by") in ("evaluator", "insufficient_evidence")
    from live_trial.judge.evaluator import unjudged_problem

    failed = unjudged_problem(doc) if problem is None else None
    return EvaluationFacts(True, tuple(checks) if isinstance(checks, list) else None, _could_not_judge(doc),
                           doc if judged else None, problem, failed)


def _could_not_judge(doc: Any) -> tuple[str, ...]:
    """The last attempt's problems (at most 3) of an evaluation that gave no valid answer (judged_by fallback)."""
    try:
        attempts = doc.get("attempts") or [] if doc.get("judged_by") == "fallback" else []
        return tuple(str(p) for p in (attempts[-1].get("problems") or [])[:3])
    except (AttributeError, IndexError, TypeError):
        return ()


def _previous_verdict(path: Path) -> dict[str, Any] | None:
    """``{overall, written_at}`` of the verdict.json in the workdir (None values when it cannot be read); None
    when there is none."""
    if not path.is_file():
        return None
    try:
        old = parse_json(path.read_text(encoding="utf-8"))
        return {"overall": str(old["overall"]["verdict"]), "written_at": old.get("written_at")}
    except (OSError, ValueError, KeyError, TypeError):
        return {"overall": None, "written_at": None}

