"""Whether an earlier verdict of a skill can stand for a new trial (README "Planning many skills"; the rules are in
:mod:`live_trial.acceptance.plan`'s docstring, ``reuse``). One reader per plan: one schema validator, the plan's
transcript cache and the watch ledger.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

from live_trial.acceptance.case_reuse import attempt_standing
from live_trial.acceptance.origin import workdir_origin
from live_trial.acceptance.overall import VerdictInputs, derive_overall
from live_trial.acceptance.plan_inputs import inline_refs, scenario_of
from live_trial.acceptance.tier import contract_evidence
from live_trial.acceptance.transcript_cache import TranscriptCache
from live_trial.acceptance.verdict_doc import OLDER_SCHEMA_VERSIONS
from live_trial.acceptance.verdict_doc import SCHEMA as VERDICT_SCHEMA
from live_trial.acceptance.watch_reuse import rehearsal_ledger, watch_standing
from live_trial.errors import LiveTrialError
from live_trial.jsonfile import parse_json
from live_trial.workdir_files import TRANSCRIPT, VERDICT


class VerdictReader:
    """Reads old verdicts with one schema validator, and transcripts through the plan's transcript cache; ``check``
    gives ``(reusable, reason)`` for one verdict file."""

    def __init__(self, cache: TranscriptCache, ledger: list[Mapping[str, Any]], now: datetime) -> None:
        self.cache = cache
        self.ledger = ledger        #: the eval root's watches, open and closed (a mostly-done PASS's watch is there)
        self.now = now
        from jsonschema import Draft202012Validator

        from live_trial.resources import load_schema

        schema = load_schema(VERDICT_SCHEMA)
        # The same schema with its local $refs inlined: identical results, about twice as fast to check.
        self.validator = Draft202012Validator(inline_refs(schema, schema.get("$defs", {})))

    def verdicts(self, folder: Path, scen: str | None = None) -> list[Path]:
        """verdict.json files of one skill, newest run first (run ids sort by time); with ``scen``, those recording
        that ``scenario_id`` (one case of a suite) first, so another case's newer trial hides nothing."""
        if not folder.is_dir():
            return []
        found = sorted((p for p in folder.glob(f"*/{VERDICT}")), key=lambda p: p.parent.name, reverse=True)
        return found if scen is None else sorted(found, key=lambda p: scenario_of(p) != scen)

    def check(self, path: Path, digest: str, scen: str, frontmatter: Mapping[str, Any], *,
              reuse_rehearsal: bool) -> tuple[bool, str]:
        """(reusable, reason) for one verdict file."""
        run = path.parent.name
        try:
            doc = parse_json(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return False, f"last verdict is not readable JSON (run {run})"
        if next(self.validator.iter_errors(doc), None) is not None:
            return False, f"last verdict does not fit the verdict schema (run {run})"
        try:
            found = workdir_origin(path.parent, scripted=self.cache.scripted)
        except LiveTrialError as exc:
            return False, f"cannot tell the origin of its workdir ({exc.problem}) (run {run})"
        except OSError as exc:
            return False, f"the transcript cannot be read ({exc.strerror or exc}) (run {run})"
        if doc["scenario_origin"] != found.origin:
            why = found.why or "no rehearsal trace in trial-state.json, no claude-config/"
            return False, (f"last verdict says scenario_origin {doc['scenario_origin']} but its workdir is "
                           f"{found.origin} ({why}): never reused (run {run})")
        if doc["scenario_origin"] != "live" and not reuse_rehearsal:
            return False, f"rehearsal verdicts are never reused (run {run})"
        overall = doc["overall"]["verdict"]
        try:
            derived = derive_overall(VerdictInputs.from_doc(doc))
        except (KeyError, TypeError):  # pragma: no cover - the schema requires these fields
            derived = None
        if derived != overall:
            return False, (f"last verdict's overall {overall} does not follow from its inputs ({derived}): "
                           f"edited (run {run})")
        if overall != "PASS":
            return False, f"last verdict is {overall} (run {run})"
        override = doc.get("override")
        if isinstance(override, dict):
            said = override.get("evaluation_goal_result")
            how = f"overrode the evaluator's {said}" if said not in (None, doc["goal_result"]) else (
                "was written with --override" + ("" if said else ", its goal not judged by the evaluator"))
            return False, f"last PASS {how} ({override.get('why')}): never reused (run {run})"
        if doc["schema_version"] in OLDER_SCHEMA_VERSIONS:
            return False, (f"last PASS was judged under the older evidence rules ({doc['schema_version']}: the "
                           f"session's own words could count and quotes were not checked): run again (run {run})")
        if doc["skill_dir_tree_sha"] != digest:
            return False, "behaviour closure changed since the last PASS"
        if doc["scenario_id"] != scen:
            return False, "task contract (scenario_id) changed since the last PASS"
        transcript = path.parent / TRANSCRIPT
        if not doc.get("transcript_sha256") or not transcript.is_file():
            return False, f"the last PASS has no transcript (run {run})"
        try:
            facts = self.cache.facts(transcript)
        except OSError as exc:
            return False, f"the transcript cannot be read ({exc.strerror or exc}) (run {run})"
        if facts.sha256 != doc["transcript_sha256"]:
            return False, f"transcript does not match transcript_sha256: edited (run {run})"
        if doc["gate_kind"] in ("contractual", "mixed"):
            try:
                grounded = contract_evidence(frontmatter)
            except LiveTrialError:
                grounded = []
            if grounded != doc["gate_contract_evidence"]:
                return False, f"gate kind contractual is not grounded in the skill's frontmatter: edited (run {run})"
        if facts.human_prompts != 1:
            return False, (f"the transcript holds {facts.human_prompts} human prompts, a PASS has exactly one "
                           f"(the task): nudges were not counted, edited (run {run})")
        alone = attempt_standing(path.parent)
        if alone is not None:
            return False, f"the last PASS is {alone} (run {run})"
        watches = rehearsal_ledger(path.parent) if doc["scenario_origin"] != "live" else self.ledger
        watch_ok, watch_why = watch_standing(doc, watches, self.now)
        if not watch_ok:
            return False, f"{watch_why} (run {run})"
        if watch_why:
            return True, (f"mostly-done PASS with the same behaviour closure, scenario and transcript; {watch_why} "
                          f"(run {run})")
        if doc["scenario_origin"] != "live":
            return True, (f"rehearsal PASS with the same behaviour closure, scenario and transcript (run {run}): "
                          "reused only because of --rehearsal-reuse")
        return True, f"PASS with the same behaviour closure, scenario and transcript (run {run})"
