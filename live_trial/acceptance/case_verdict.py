"""The verdict over the trials of one case run (references/suite-format.md "Repeats"; README "Planning many skills").

One trial of a stochastic model is one sample. A case that asks for ``repeats: k`` (or ``run --repeat k``) is k
independent trials, each its own session, workdir, folder and fresh evaluator (its *attempts*), and one verdict over
them, ``case-verdict.json`` in a folder of its own, ``<eval-root>/<plugin>/<skill>/live-trial-cases/<case-run-id>/``:

- **PASS** only when all k samples passed (pass^k);
- **FLAKY** when some passed and some did not: a verdict of its own, never a PASS (``run`` exits 7);
- **FAIL** / **DEGRADED** when none passed (FAIL when one of them was a FAIL);
- **BLOCKED** when the run ended with fewer than k samples: a BLOCKED attempt (the environment or the harness) is no
  sample; it is retried up to ``repeats.blocked_retries_max`` of references/convergence-policy.json, and not at all
  when another attempt would meet the same cause (:func:`retry_helps`). Never a PASS on fewer than k samples.

Every attempt is kept (a failed one is never replaced) and listed with its workdir. Paths in the document are
relative to the eval root, so an eval-log merged from shards keeps its links. Pure but for :func:`read_case_verdict`
and :func:`write_case_verdict`, the one place the file is read and written (schema-checked, atomic).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from live_trial.jsonfile import read_json, write_json
from live_trial.stop_reasons import StopReason
from live_trial.workdir_files import CASE_VERDICT

SCHEMA = "case-verdict.schema.json"
SCHEMA_VERSION = "live-trial-case-verdict/1"
VERDICTS = ("PASS", "FLAKY", "FAIL", "DEGRADED", "BLOCKED")


@dataclass(frozen=True)
class CaseRun:
    """Which case run a trial is an attempt of; recorded in the attempt's trial-state.json (``case_run``)."""

    id: str                 #: the case run's id (its folder's name, a run id)
    folder: Path            #: ``<eval-root>/<plugin>/<skill>/live-trial-cases/<id>``, absolute
    case: str               #: the suite case (``default``: run --repeat, or a skill no suite names)
    attempt: int            #: 1-based, every trial the run started counted (a scenario's ``when: {attempt: n}``)
    repeats: int            #: k, the samples the case asks for

    def to_doc(self) -> dict[str, Any]:
        """The ``case_run`` object of trial-state.json."""
        return {"id": self.id, "folder": str(self.folder), "case": self.case, "attempt": self.attempt,
                "repeats": self.repeats}

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> "CaseRun | None":
        """The case run a trial-state.json records, None for a trial that is no attempt (or an unreadable record)."""
        if not isinstance(doc, Mapping):
            return None
        try:
            return cls(str(doc["id"]), Path(str(doc["folder"])), str(doc["case"]), int(doc["attempt"]),
                       int(doc["repeats"]))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Attempt:
    """One trial of a case run as its verdict tells it."""

    n: int                                  #: the attempt number
    verdict: str                            #: PASS | FAIL | DEGRADED | BLOCKED
    stop_reason: str | None                 #: the verdict's stop reason (or the error's code)
    summary: str                            #: the verdict's one sentence (or the error's line)
    workdir: Path | None = None             #: None: stopped before it had a workdir
    run_id: str | None = None
    report: Path | None = None              #: its report.html, when written
    reason: str | None = None               #: the first of ``overall.reasons``
    skill_dir_tree_sha: str | None = None
    scenario_id: str | None = None
    origin: str | None = None               #: live | rehearsal
    usage: Mapping[str, Any] | None = None  #: the verdict's ``usage``

    @property
    def sample(self) -> bool:
        """Counted in the pass rate: the skill was judged (a BLOCKED attempt says nothing about it)."""
        return self.verdict != "BLOCKED"


@dataclass(frozen=True)
class CaseDecision:
    """The verdict over the attempts and the pass rate it rests on."""

    verdict: str                            #: one of :data:`VERDICTS`
    passed: int                             #: samples that passed
    samples: int                            #: attempts judged
    repeats: int                            #: k asked for

    @property
    def rate(self) -> float | None:
        """The share of samples that passed (0 to 1), None with no sample."""
        return round(self.passed / self.samples, 4) if self.samples else None


def decide(attempts: Sequence[Attempt], repeats: int) -> CaseDecision:
    """The case verdict of ``attempts`` for a case that asks ``repeats`` samples (module docstring): PASS only with
    ``repeats`` samples all PASS, FLAKY with some PASS and some not, FAIL / DEGRADED with none, BLOCKED with fewer
    samples than ``repeats``. Pure."""
    samples = [a for a in attempts if a.sample]
    passed = sum(1 for a in samples if a.verdict == "PASS")
    if len(samples) < repeats:
        verdict = "BLOCKED"
    elif passed == len(samples):
        verdict = "PASS"
    elif passed:
        verdict = "FLAKY"
    else:
        verdict = "FAIL" if any(a.verdict == "FAIL" for a in samples) else "DEGRADED"
    return CaseDecision(verdict, passed, len(samples), repeats)


def retry_helps(stop_reason: str | None) -> bool:
    """Whether another attempt can get past a BLOCKED attempt stopped for ``stop_reason``: only when its cause may
    pass with time, i.e. the stop reason's next step is to run again (``retry``, ``later``: the model's service, tmux,
    the evaluator, ...) or it is no row of the table (an error a step raised). A missing tool, a login, a usage limit,
    the hard cap, the budget or a person stopping the harness meet the next attempt too (live_trial/stop_reasons.py)."""
    row = StopReason.of(stop_reason)
    if row is None:
        return True
    if row in (StopReason.HARNESS_INTERRUPTED, StopReason.HARNESS_TERMINATED):
        return False
    return row.step in ("retry", "later")


def _rel(path: Path | None, eval_root: Path) -> str | None:
    if path is None:
        return None
    try:
        return Path(os.path.relpath(Path(path).resolve(), Path(eval_root).resolve())).as_posix()
    except ValueError:
        return str(path)


def reasons(attempts: Sequence[Attempt], decision: CaseDecision, stopped: str | None) -> list[str]:
    """One line per attempt that did not pass (``attempt 2 of 3: DEGRADED: <why>``; a BLOCKED one says it is no
    sample), then why the run stopped early."""
    out = []
    for a in attempts:
        if a.verdict == "PASS":
            continue
        why = a.reason or a.summary or a.stop_reason or "-"
        if a.sample:
            out.append(f"attempt {a.n}: {a.verdict}: {why}")
        else:
            out.append(f"attempt {a.n}: BLOCKED ({a.stop_reason or 'blocked'}), not a sample: {why}")
    if stopped:
        out.append(stopped)
    return out


def case_doc(run: CaseRun, *, target: str, plugin: str | None, skill: str, attempts: Sequence[Attempt],
             retries_used: int, retries_max: int, stopped: str | None, summary: str, eval_root: Path, proof: bool,
             started_at: str, written_at: str) -> dict[str, Any]:
    """The case-verdict.json document of a finished case run (schemas/case-verdict.schema.json). ``summary``: the one
    sentence in the message language (notices compose it); ``stopped``: why the run ended before it had k samples
    (None when it did not). Pure."""
    decision = decide(attempts, run.repeats)
    closures = {a.skill_dir_tree_sha for a in attempts if a.sample}
    origins = {a.origin for a in attempts if a.origin}
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "case_run_id": run.id, "target": target, "plugin": plugin, "skill": skill,
        "case": run.case, "repeats": run.repeats, "verdict": decision.verdict, "summary": summary,
        "reasons": reasons(attempts, decision, stopped),
        "pass_rate": {"passed": decision.passed, "samples": decision.samples, "rate": decision.rate},
        "attempts": [{"n": a.n, "run_id": a.run_id, "workdir": _rel(a.workdir, eval_root), "verdict": a.verdict,
                      "sample": a.sample, "stop_reason": a.stop_reason, "summary": a.summary,
                      "report": _rel(a.report, eval_root), "skill_dir_tree_sha": a.skill_dir_tree_sha}
                     for a in attempts],
        "blocked_retries": {"used": retries_used, "max": retries_max}, "stopped": stopped,
        "scenario_origin": "rehearsal" if "rehearsal" in origins else "live",
        "scenario_id": next((a.scenario_id for a in attempts if a.scenario_id), None),
        "skill_dir_tree_sha": closures.pop() if len(closures) == 1 else None,
        "proof": proof, "started_at": started_at, "written_at": written_at}
    usage = summed_usage(a.usage for a in attempts)
    if usage is not None:
        doc["usage"] = usage
    return doc


def summed_usage(usages: Iterable[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """The attempts' ``usage`` added up: ``cost_usd``, ``estimate_usd``, ``billed`` (any attempt billed) and the
    models without a price; None when no attempt recorded any (README "What a trial costs")."""
    found = [u for u in usages if isinstance(u, Mapping)]
    if not found:
        return None
    unpriced = sorted({str(m) for u in found for m in (u.get("unpriced_models") or [])})
    out: dict[str, Any] = {"cost_usd": round(sum(float(u.get("cost_usd") or 0) for u in found), 6),
                           "estimate_usd": round(sum(float(u.get("estimate_usd") or 0) for u in found), 6),
                           "billed": any(bool(u.get("billed")) for u in found)}
    if unpriced:
        out["unpriced_models"] = unpriced
    return out


def write_case_verdict(folder: Path, doc: Mapping[str, Any]) -> Path:
    """Write ``<folder>/case-verdict.json`` (schema-checked, atomic; the folder is made) and return its path. Raises
    SchemaInvalid (nothing written) and OSError."""
    Path(folder).mkdir(parents=True, exist_ok=True, mode=0o700)
    path = Path(folder) / CASE_VERDICT
    write_json(path, dict(doc), SCHEMA)
    return path


def read_case_verdict(path: Path) -> dict[str, Any]:
    """A case-verdict.json, schema-checked. Raises what :func:`live_trial.jsonfile.read_json` raises (RefusedInput,
    SchemaInvalid: one line)."""
    doc: dict[str, Any] = read_json(Path(path), SCHEMA)
    return doc


def attempt_workdirs(doc: Mapping[str, Any], eval_root: Path) -> list[Path | None]:
    """The absolute workdir of each attempt of a case verdict, in order (None for one that had none)."""
    return [Path(eval_root) / str(a["workdir"]) if a.get("workdir") else None for a in doc.get("attempts") or []]
