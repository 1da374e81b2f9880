"""The incremental planner: which skills need a live trial now, which can reuse evidence, which wait (seed 001
"事前計画"). It runs no model and no tmux; it reads frontmatter, the behaviour closures, old
verdicts and transcripts, and the watch ledger.

Per skill (``skills[].action``):

- ``not_live`` — the tier (:func:`derive_tier`) is fork or static: fork/static acceptance is enough, no trial.
- ``refused`` — denylisted target (run-skill-live-trial, run-skill-iter-improve) or a closure that cannot be
  built (a boot would end BOOT_FAIL): the reason says what to fix.
- ``watching`` — an open watch exists for it (seed 000 rule 2) and the behaviour closure is the one the watch's
  trial tested: neither reused as a clean PASS nor re-run (a re-run cannot confirm what only time shows). ``--proof``
  runs it anyway. The closure is compared first: a watch opened for other files (the skill was edited since) hides
  nothing; it is listed in ``superseded_watch_ids`` (the ``plan`` command closes it quietly, no notice) and the skill
  is planned as if it had no watch. A watch whose closure cannot be known (no ``closure`` and no readable verdict in
  its workdir) still means watching.
- ``reuse`` — profile incremental, not ``--proof``, and the newest verdict of the skill is reusable:
  schema-valid; its recorded ``scenario_origin`` agrees with the origin re-derived from its workdir
  (:func:`live_trial.acceptance.origin.workdir_origin`: trial-state.json ``rehearsal`` or a ``claude-config/`` folder
  make it rehearsal), and that origin is live (rehearsal verdicts are never reused); ``overall.verdict`` PASS; the
  same behaviour-closure digest (``skill_dir_tree_sha``) and ``scenario_id`` as now; ``transcript.jsonl`` in its
  workdir hashes to ``transcript_sha256`` (read once as a stream, then remembered by file identity until the file
  changes: :mod:`~live_trial.acceptance.transcript_cache`); :func:`~live_trial.acceptance.overall.derive_overall` over
  the verdict's own recorded inputs gives back its overall; it was judged under today's evidence rules
  (``live-trial-verdict/2``: a ``/1`` PASS could rest on the session's own words, so it runs again, and the row says
  so); a ``contractual`` (or ``mixed``) gate kind is still grounded in the (unchanged) frontmatter with the recorded
  evidence; the transcript holds exactly one human prompt (the task: a nudge would be a second one); it was not
  written with ``--override``; and a mostly-done PASS's watch is open and within its deadline, or confirmed
  (:mod:`~live_trial.acceptance.watch_reuse`: after a failed or expired watch the skill runs again).
- ``run`` — everything else, up to ``max_live_trials`` (exhaustive: every live skill), in ``live_batches`` of at
  most ``max_concurrency``, in plugin/skill order.
- ``defer`` — over the budget; the reason names it.

What reuse cannot detect (by design it trusts files it can only check for consistency): a consistent hand-edit of
the verdict's inputs *and* overall *and* its transcript *and* ``transcript_sha256`` together; a rescue gate
response edited away (``gate_response_count`` 1 → 0 and overall DEGRADED → PASS: answered dialogs are not
recounted from the transcript); an edited ``goal_result`` with a matching overall (the evaluator's answer in
``evaluation.json`` is not re-read); an edited ``actual_model`` of a non-proof verdict; a change outside the
behaviour closure that still changes behaviour (the user's installed plugins, MCP servers or settings, the CLI
version, the model's behaviour on the day).

A suite (``live-trials.yaml`` at a plugin's root, or ``--suite FILE``: :mod:`~live_trial.acceptance.suite`) gives a
skill named cases; each case is one row (``case``) with its own ``scenario_id`` (its args, scenario and answers:
:mod:`~live_trial.acceptance.case_plan`), decided against the newest verdict of the same ``scenario_id``. A skill
that asks a question and whose case gives no answer is ``needs_answer``: no trial is planned.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.acceptance.activation_reuse import decide_activation_reuse, plugin_skills
from live_trial.acceptance.case_plan import batch_entry, cannot_run, case_scenario_id, label
from live_trial.acceptance.case_reuse import case_verdicts, decide_repeated
from live_trial.acceptance.evallog import skill_activation_dir, skill_cases_dir, skill_trials_dir
from live_trial.acceptance.fair_plan import Candidate, choose
from live_trial.acceptance.plan_inputs import plan_suites, plugin_roots, scenario_of, watch_closure
from live_trial.acceptance.queue import Waiting, still_waiting
from live_trial.acceptance.suite import DEFAULT, Case, Suite, suite_sha
from live_trial.acceptance.tier import tier_and_reason
from live_trial.acceptance.transcript_cache import TranscriptCache
from live_trial.acceptance.verdict import recorded_cost, trial_duration_s
from live_trial.acceptance.verdict_reuse import VerdictReader
from live_trial.acceptance.watch_reuse import past_deadline
from live_trial.clock import utc_now
from live_trial.closure.index import PluginIndex, skills_of
from live_trial.closure.pinning import closure_digest, dependency_union
from live_trial.closure.target import resolve_target
from live_trial.errors import LiveTrialError, RefusedInput
from live_trial.session.rules import check_target_allowed

SCHEMA = "plan.schema.json"


SCHEMA_VERSION = "plan/1"


PROFILES = ("incremental", "exhaustive")


@dataclass
class _Skill:
    target: str
    plugin: str
    skill: str
    plugins_root: Path
    entry: dict[str, Any]
    case: Case = DEFAULT
    tried: str | None = None            #: the verdict of the case's newest trial (or case run); None: never tried
    last_trial: str | None = None       #: that trial's run id (the queue's ``last_trial``)


def _refused_plugin(folder: Path, error: LiveTrialError) -> list[_Skill]:
    """One refused row per skill of a plugin whose manifest cannot be used (named by its folder)."""
    rows = []
    for skill_name in skills_of(folder) or ["*"]:
        target = f"{folder.name}:{skill_name}"
        entry: dict[str, Any] = {"target": target, "plugin": folder.name, "skill": skill_name, "tier": None,
                                 "tier_reason": None, "action": "refused", "reason": f"{error.status}: {error.message}",
                                 "skill_dir_tree_sha": None, "scenario_id": None, "verdict": None, "watch_ids": []}
        rows.append(_Skill(target, folder.name, skill_name, folder.parent, entry))
    return rows


def plan(plugin_dirs: Iterable[Path], eval_root: Path, profile: str = "incremental", max_live_trials: int = 2,
         max_concurrency: int = 2, *, plugins_root: Path | None = None, proof: bool = False,
         reuse_rehearsal: bool = False, scenario_path: Path | None = None,
         watches: Iterable[Mapping[str, Any]], ledger: Iterable[Mapping[str, Any]] | None = None,
         now: datetime | None = None, suites: Mapping[Path, Suite] | None = None,
         queue: Mapping[tuple[str, str], Waiting] | None = None) -> dict[str, Any]:
    """Plan the live trials of every skill in ``plugin_dirs`` (plugin folders or folders of plugins).

    Returns the plan document (valid against ``schemas/plan.schema.json``): ``skills`` (one entry per skill with
    ``action`` reuse|run|defer|watching|not_live|refused and ``reason``), ``live_batches`` (lists of
    ``{"target", "plugins_root", "proof", "args"}``), ``deferred`` and ``counts``. ``plugins_root`` is where
    dependencies are looked up (default: each plugin's parent folder). ``watches`` are the open watches
    (``live_trial.notices.watch.open_watches``; plan reads no ledger itself but a rehearsal's own); ``ledger``: every
    watch of the eval root's ledger, open and closed (default ``watches``): a mostly-done PASS is reused only while its
    watch is open and within its deadline, or once it confirmed (:mod:`~live_trial.acceptance.watch_reuse`); an open
    watch past its deadline (``now``, default the time now) is no longer watching. ``reuse_rehearsal`` with
    ``scenario_path`` (``plan --rehearsal-reuse SCENARIO``, README "Planning many skills") lets a rehearsal PASS
    played from that scenario count as reusable, to try the reuse rules offline: the plan records
    ``reuse_rehearsal`` and ``rehearsal_scenario``, and ``run --plan`` refuses such a plan without ``--rehearsal``
    of the same scenario. ``suites``: the suite of each plugin root (:func:`plan_suites`; default each root's own
    ``live-trials.yaml``): one row per case. ``queue``: the eval root's defer queue
    (:func:`live_trial.acceptance.queue.load_queue`): the cases that still wait run first
    (:mod:`live_trial.acceptance.fair_plan`). Raises :class:`RefusedInput` for bad arguments (``reuse_rehearsal``
    without a scenario file, a bad suite file). Runs no model and no tmux.
    """
    _check_arguments(profile, max_live_trials, max_concurrency, reuse_rehearsal, scenario_path)
    eval_root = Path(eval_root).resolve()
    roots, broken = plugin_roots(plugin_dirs)
    suites = plan_suites(plugin_dirs) if suites is None else suites
    now = now or datetime.now(timezone.utc)
    watches = list(watches)
    watching: dict[str, list[Mapping[str, Any]]] = {}
    for w in watches:
        if w.get("target") and not past_deadline(w, now):    # a watch past its deadline waits for nothing
            watching.setdefault(str(w["target"]), []).append(w)
    cache = TranscriptCache(eval_root)
    reader = VerdictReader(cache, list(ledger) if ledger is not None else watches, now)
    ctx = _Planning(eval_root, profile, proof, reuse_rehearsal, scenario_path, watching, reader)
    indexes: dict[Path, PluginIndex] = {}
    skills: list[_Skill] = []
    refused = set(broken)
    for folder, error in broken.items():
        skills += _refused_plugin(folder, error)
    for root in roots:
        proot = Path(plugins_root).resolve() if plugins_root else root.parent
        index = indexes.get(proot) or indexes.setdefault(proot, PluginIndex(proot))
        name = next((n for n, r in index.plugins.items() if r == root), None)
        if name is None and root in index.broken:
            if root not in refused:
                refused.add(root)
                skills += _refused_plugin(root, index.broken[root])
            continue
        if name is None:
            raise RefusedInput(f"plugin {root} is not under the plugins root {proot}", code="plugins_root",
                               fix="pass --plugins-root <folder that holds it and its dependencies>")
        suite = suites.get(root)
        for skill_name in skills_of(root):
            for case in (suite.cases_for(name, skill_name) if suite else None) or (DEFAULT,):
                entry = _new_entry(name, skill_name, watching, case.name)
                skill = _Skill(f"{name}:{skill_name}", name, skill_name, proot, entry, case)
                skills.append(skill)
                _decide(skill, index, ctx)
    cache.save()
    for s in skills:
        if s.entry.get("superseded_watch_ids"):
            s.entry["reason"] += (f"; watch {', '.join(s.entry['superseded_watch_ids'])} superseded: the behaviour "
                                  "closure changed since it was opened")
    doc = _budget(skills, eval_root, profile, max_live_trials, max_concurrency, proof, reuse_rehearsal, utc_now(),
                  queue or {})
    files = sorted({str(s.path) for s in suites.values()})
    if files:
        doc["suites"] = [{"path": f, "sha256": suite_sha(Path(f))} for f in files]
    if reuse_rehearsal:
        assert scenario_path is not None        # _check_arguments refused --rehearsal-reuse without it
        doc["rehearsal_scenario"] = str(Path(scenario_path).resolve())
    return doc


def _check_arguments(profile: str, max_live_trials: Any, max_concurrency: Any, reuse_rehearsal: bool,
                     scenario_path: Path | None) -> None:
    """Refuse (:class:`RefusedInput`, nothing planned) an unknown profile, a budget or width that is not a whole
    number in range, and ``--rehearsal-reuse`` without its scenario file."""
    if profile not in PROFILES:
        raise RefusedInput(f"unknown profile {profile!r}", code="bad_value", fix="use incremental or exhaustive")
    for value, name in ((max_live_trials, "--max-live-trials"), (max_concurrency, "--max-concurrency")):
        if not isinstance(value, int) or value < (0 if name == "--max-live-trials" else 1):
            raise RefusedInput(f"{name} must be a whole number >= {0 if 'trials' in name else 1} (got {value!r})",
                               code="bad_value")
    if reuse_rehearsal and (scenario_path is None or not Path(scenario_path).is_file()):
        raise RefusedInput("--rehearsal-reuse needs the scenario file the rehearsal PASSes were played from",
                           where=f"--rehearsal-reuse {scenario_path}", code="scenario_not_found",
                           fix="pass the scenario YAML given to run --rehearsal")


@dataclass
class _Planning:
    """What every skill of one plan is decided against."""

    eval_root: Path                                   #: the resolved eval root the verdicts are read from
    profile: str                                      #: incremental | exhaustive
    proof: bool                                       #: ``--proof``: every live skill runs
    reuse_rehearsal: bool                             #: a rehearsal PASS of ``scenario_path`` may be reused
    scenario_path: Path | None                        #: the rehearsal scenario of ``--rehearsal-reuse``
    watching: dict[str, list[Mapping[str, Any]]]      #: the open watches by target
    reader: "VerdictReader"                          #: the earlier verdicts, read once per plan
    template_sha: str | None = None                   #: the task template's text (read once, for scenario_id)


def _new_entry(plugin: str, skill: str, watching: Mapping[str, list[Mapping[str, Any]]],
               case: str = DEFAULT.name) -> dict[str, Any]:
    """A skill's (one case's) plan entry before it is decided (``action`` None)."""
    target = f"{plugin}:{skill}"
    return {"target": target, "case": case, "plugin": plugin, "skill": skill, "tier": None, "tier_reason": None,
            "action": None,
            "reason": None, "skill_dir_tree_sha": None, "scenario_id": None, "verdict": None,
            "watch_ids": [str(w.get("id", "")) for w in watching.get(target, [])]}


def _decide(skill: _Skill, index: PluginIndex, ctx: _Planning) -> None:
    """Set ``skill.entry``'s ``action`` and ``reason`` (README "Planning many skills"): refused, not_live, run (proof,
    exhaustive, no verdict yet, or a verdict that cannot be reused), watching, or reuse."""
    entry, target = skill.entry, skill.target
    try:
        check_target_allowed(target)
        t = resolve_target(target, index)
        entry["tier"], entry["tier_reason"] = tier_and_reason(t.frontmatter)
    except LiveTrialError as exc:
        entry.update(action="refused", reason=exc.message)
        return
    if entry["tier"] != "live" and not skill.case.activation:     # an activation case measures the description
        entry.update(action="not_live", reason=f"tier {entry['tier']} ({entry['tier_reason']}): "
                                                "fork/static acceptance is enough")
        return
    try:
        entry["skill_dir_tree_sha"] = closure_digest(t, index)
    except LiveTrialError as exc:
        entry.update(action="refused", reason=f"{exc.status}: {exc.message}")
        return
    if ctx.template_sha is None:
        from live_trial.resources import read_reference
        ctx.template_sha = read_reference("task-template.md")
    entry["scenario_id"] = case_scenario_id(target, skill.case, ctx.scenario_path if ctx.reuse_rehearsal else None,
                                            ctx.template_sha)
    stale = [str(w.get("id", "")) for w in ctx.watching.get(target, [])
             if watch_closure(w) not in (None, entry["skill_dir_tree_sha"])]
    if stale:
        entry["watch_ids"] = [i for i in entry["watch_ids"] if i not in stale]
        entry["superseded_watch_ids"] = stale
    if skill.case.activation:
        _decide_activation(skill, t, index, ctx)
        return
    scen, digest = entry["scenario_id"], entry["skill_dir_tree_sha"]

    def check(path: Path) -> tuple[bool, str]:
        return ctx.reader.check(path, digest, scen, t.frontmatter, reuse_rehearsal=ctx.reuse_rehearsal)

    repeated = skill.case.repeats > 1
    if repeated:            # a case of k samples stands on a case verdict (references/suite-format.md "Repeats")
        cases = case_verdicts(skill_cases_dir(ctx.eval_root, skill.plugin, skill.skill), scen)
        last = cases[0] if cases and (cases[0][1] or {}).get("scenario_id") == scen else None
        skill.tried, skill.last_trial = (last[1]["verdict"], last[0].parent.name) if last and last[1] else (None, None)
        entry["last_duration_s"], entry["last_cost_usd"] = _last_of(last[0]) if last else (None, None)
    else:
        found = ctx.reader.verdicts(skill_trials_dir(ctx.eval_root, skill.plugin, skill.skill), scen)
        entry["last_duration_s"], entry["last_cost_usd"] = _last_of(found[0]) if found else (None, None)
        if found and scenario_of(found[0]) == scen:
            skill.tried, skill.last_trial = _overall_of(found[0]), found[0].parent.name
    if ctx.proof:
        entry.update(action="run", reason="--proof: proof trials always run")
    elif ctx.profile == "exhaustive":
        entry.update(action="run", reason="profile exhaustive re-runs every live skill" +
                     (", watched ones too" if entry["watch_ids"] else ""))
    elif entry["watch_ids"]:
        entry.update(action="watching", reason="an open watch is waiting for what only time can show: "
                                               "neither reused nor re-run")
    elif repeated:
        ok, why, path = decide_repeated(skill_cases_dir(ctx.eval_root, skill.plugin, skill.skill), scen,
                                        skill.case.repeats, check, ctx.eval_root)
        entry.update(action="reuse" if ok else "run", reason=why,
                     verdict=str(path.relative_to(ctx.eval_root)) if path else None)
    elif not found:
        entry.update(action="run", reason="no verdict yet")
    else:
        ok, why = check(found[0])
        entry.update(action="reuse" if ok else "run", reason=why, verdict=str(found[0].relative_to(ctx.eval_root)))
    held = cannot_run(skill.case, t.frontmatter) if entry["action"] == "run" else None
    if held:                # a trial that cannot go as written is never started (references/suite-format.md)
        entry.update(action=held[0], reason=f"{held[1]} (would run because: {entry['reason']})")


def _decide_activation(skill: _Skill, t: Any, index: PluginIndex, ctx: _Planning) -> None:
    """An activation case's row (README "Does it start by itself?"): reuse its last activation PASS only while the
    prompt set (``scenario_id``) and the skill listing of the loaded plugins are unchanged
    (:func:`~live_trial.acceptance.activation_reuse.decide_activation_reuse`); never from an acceptance verdict, and
    never as one. ``--proof`` and ``exhaustive`` run it again."""
    entry = skill.entry
    entry["kind"] = "activation"
    runs = skill_activation_dir(ctx.eval_root, skill.plugin, skill.skill)
    skills = plugin_skills([(p.name, p.root) for p in dependency_union(t, index)])
    ok, why, path, verdict = decide_activation_reuse(runs, skill.case.name, entry["scenario_id"], skills,
                                                     live=not ctx.reuse_rehearsal)
    skill.tried, skill.last_trial = (verdict, path.parent.name) if path is not None and verdict else (None, None)
    entry["verdict"] = str(path.relative_to(ctx.eval_root)) if path is not None else None
    entry["last_duration_s"], entry["last_cost_usd"] = (_activation_seconds(path) if path else None), None
    if ctx.proof:
        entry.update(action="run", reason="--proof: proof trials always run")
    elif ctx.profile == "exhaustive":
        entry.update(action="run", reason="profile exhaustive re-runs every live skill")
    else:
        entry.update(action="reuse" if ok else "run", reason=why)
    held = cannot_run(skill.case, t.frontmatter) if entry["action"] == "run" else None
    if held:
        entry.update(action=held[0], reason=f"{held[1]} (would run because: {entry['reason']})")


def _activation_seconds(path: Path) -> float | None:
    """Seconds the activation run behind ``path`` took (``started_at`` to ``written_at``), None when unreadable."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return trial_duration_s(doc)
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _budget(skills: list[_Skill], eval_root: Path, profile: str, max_live: int, width: int, proof: bool,
            reuse_rehearsal: bool, now: str, queue: Mapping[tuple[str, str], Waiting]) -> dict[str, Any]:
    """Apply the trial budget fairly (:mod:`live_trial.acceptance.fair_plan`: proof cases always, then the cases that
    waited, never tried, changed, failed) and cut the runs chosen into batches, in plan order. Each run or deferred
    row says why (``reason``, ``fairness``)."""
    runs = [s for s in skills if s.entry["action"] == "run"]
    candidates = [Candidate(i, s.case.trials(), proof or s.case.proof, s.tried, s.last_trial,
                            still_waiting(queue, s.target, s.case.name, s.last_trial)) for i, s in enumerate(runs)]
    for choice in choose(candidates, max_live, exhaustive=profile == "exhaustive"):
        s, waiting = runs[choice.candidate.index], choice.candidate.waiting
        s.entry["fairness"] = {"rank": choice.candidate.rank, "plans_waited": waiting.plans_waited if waiting else 0,
                               "waiting_since": waiting.waiting_since if waiting else None,
                               "last_trial": s.last_trial}
        if choice.run:
            s.entry["reason"] += f"; {choice.why}" if choice.why else ""
        else:
            s.entry.update(action="defer", reason=f"{choice.why}; would run because: {s.entry['reason']}")
    chosen = [s for s in runs if s.entry["action"] == "run"]       # the batches keep plan order
    batch_entries = [batch_entry(s.target, s.plugins_root, proof, s.case) for s in chosen]
    batches = [batch_entries[i:i + width] for i in range(0, len(batch_entries), width)]
    counts: dict[str, int] = {a: 0 for a in ("reuse", "run", "defer", "watching", "not_live", "refused",
                                             "needs_answer")}
    for s in skills:
        counts[s.entry["action"]] += 1
    return {"schema_version": SCHEMA_VERSION, "generated_at": now, "profile": profile, "proof": proof,
            "reuse_rehearsal": reuse_rehearsal, "eval_root": str(eval_root), "max_live_trials": max_live,
            "max_concurrency": width, "skills": [s.entry for s in skills], "live_batches": batches,
            "deferred": [label(s.target, s.case.name) for s in skills if s.entry["action"] == "defer"],
            "counts": counts,
            "estimated_cost_usd": round(sum(s.entry.get("last_cost_usd") or 0.0 for s in chosen), 6),
            "cost_unknown": [s.target for s in chosen if s.entry.get("last_cost_usd") is None]}


def queue_rows(doc: Mapping[str, Any]) -> list[tuple[str, str, str, str | None]]:
    """``(target, case, action, last_trial)`` of each row of a plan document, for
    :func:`live_trial.acceptance.queue.next_queue` (:func:`record_deferrals` updates queue.json with them)."""
    return [(str(s["target"]), str(s.get("case") or DEFAULT.name), str(s["action"]),
             (s.get("fairness") or {}).get("last_trial")) for s in doc.get("skills") or []]


def record_deferrals(eval_root: Path, doc: Mapping[str, Any]) -> None:
    """Record the deferred cases of the plan ``doc`` that is about to run in ``<eval_root>/queue.json`` (README "A
    fair plan: the defer queue"; seed 001 事前計画: deferred -> queue): they go first in the next plan. Once per plan
    (its ``generated_at``), so a plan run again or by its shards counts once; nothing is written when no case waits
    and none did. Raises RefusedInput / SchemaInvalid for a queue.json that is not valid (nothing written), OSError."""
    from live_trial.acceptance.queue import load_queue, next_queue, save_queue, to_doc

    queue = load_queue(eval_root)
    waiting = next_queue(queue, queue_rows(doc), str(doc["generated_at"]))
    if waiting != queue:
        Path(eval_root).mkdir(parents=True, exist_ok=True)
        save_queue(eval_root, to_doc(waiting, str(doc["generated_at"])))


def _overall_of(verdict_path: Path) -> str | None:
    """The overall verdict a verdict file records (None when it cannot be read): was the last trial a failure."""
    try:
        doc = json.loads(verdict_path.read_text(encoding="utf-8"))
        overall = doc["overall"]
        return str(overall["verdict"] if isinstance(overall, dict) else overall)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None


def _last_of(verdict_path: Path) -> tuple[float | None, float | None]:
    """Seconds the trial behind ``verdict_path`` took (``run --plan --shard`` balances shards by it: README "Sharding a
    plan over CI machines") and the cost it recorded (README "Budgets"); None for what cannot be read."""
    try:
        doc = json.loads(verdict_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None, None
    return trial_duration_s(doc), recorded_cost(doc)
