"""The result of an activation case: does the skill start by itself (README "Does it start by itself?";
references/suite-format.md "Activation cases").

Each prompt of the case is pasted alone into sessions of its own (its repeats); each session is one
:class:`PromptSample`: the transcript says whether the model invoked the skill (``triggered``), did not by the end of
its turn (``not_triggered``), or the session was stopped by the environment or the harness (``blocked``: no sample,
tried again as a case run's BLOCKED attempt is). Over the set:

- per prompt the share of its samples that triggered;
- the confusion counts over every sample (true positive: should trigger and did; false negative: should and did not;
  false positive: should not and did; true negative: should not and did not), precision ``tp / (tp + fp)`` and recall
  ``tp / (tp + fn)`` (None when their denominator is 0);
- the verdict: **BLOCKED** when a prompt has fewer samples than it asked for; **FAIL** when the CLI did not load the
  skill, or a prompt went wrong in every sample; **FLAKY** when a prompt's samples disagree; **PASS** when every
  should-trigger prompt triggered and no should-not did, in every sample.

An activation result is never an acceptance PASS: its document is ``activation.json`` (schemas/activation.schema.json),
not a verdict.json, and ``plan`` never reuses it as one. Pure but for :func:`write_activation` and
:func:`read_activation`, the one place the file is written and read (schema-checked, atomic).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from live_trial.jsonfile import read_json, write_json
from live_trial.workdir_files import ACTIVATION

SCHEMA = "activation.schema.json"
SCHEMA_VERSION = "live-trial-activation/1"
VERDICTS = ("PASS", "FLAKY", "FAIL", "BLOCKED")
TRIGGERED, NOT_TRIGGERED, BLOCKED = "triggered", "not_triggered", "blocked"
#: How a prompt's session ended: its turn ended, a question (GATE) ended it, it was ended right after the skill was
#: invoked (``stop_after_trigger``), it stopped progressing (STALL), claude exited, the CLI did not load the skill,
#: or the environment or the harness stopped it.
ENDINGS = ("turn_end", "gate", "stopped_after_trigger", "stall", "crash", "not_loaded", "blocked")
#: A prompt's status over its samples, in the order the document lists them (the prompts that went wrong first).
STATUS_ORDER = ("wrong", "mixed", "blocked", "right")


@dataclass(frozen=True)
class ActivationSession:
    """Which prompt of which activation run a session is (recorded in its trial-state.json as ``activation``)."""

    id: str                         #: the activation run's id (its folder's name, a run id)
    folder: Path                    #: ``<eval-root>/<plugin>/<skill>/live-trial-activation/<id>``, absolute
    case: str                       #: the suite case
    prompt: int                     #: the prompt's 1-based place in the case
    repeat: int                     #: the session of that prompt, 1-based (a scenario's ``when: {attempt: n}``)
    should_trigger: bool
    stop_after_trigger: bool = False

    def to_doc(self) -> dict[str, Any]:
        """The ``activation`` object of trial-state.json."""
        return {"id": self.id, "folder": str(self.folder), "case": self.case, "prompt": self.prompt,
                "repeat": self.repeat, "should_trigger": self.should_trigger,
                "stop_after_trigger": self.stop_after_trigger}

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> "ActivationSession | None":
        """The session a trial-state.json records, None for a trial that is none (or an unreadable record)."""
        if not isinstance(doc, Mapping):
            return None
        try:
            return cls(str(doc["id"]), Path(str(doc["folder"])), str(doc["case"]), int(doc["prompt"]),
                       int(doc["repeat"]), bool(doc["should_trigger"]), bool(doc.get("stop_after_trigger")))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class PromptSample:
    """One session of one prompt."""

    prompt: int                             #: the prompt's 1-based place in the case
    repeat: int                             #: the 1-based session of that prompt (a retried BLOCKED one counted)
    outcome: str                            #: triggered | not_triggered | blocked
    ended: str                              #: one of :data:`ENDINGS`
    via: str | None = None                  #: skill_call | slash_command, when triggered
    step: int | None = None                 #: the assistant step of the call (0-based), when triggered
    after_tools: tuple[str, ...] = ()       #: the tools used before it
    others: tuple[str, ...] = ()            #: other skills invoked (a sibling chosen instead), by name
    stop_reason: str | None = None          #: the stop reason of a session that did not end with its turn
    note: str | None = None                 #: the question of a gate, the cause of a stop
    workdir: Path | None = None             #: the session's workdir (None: stopped before it had one)
    seconds: float | None = None            #: from the start of the session to its end
    #: what the session used and cost (verdict.json's ``usage`` form; None: no transcript): summed into the run's
    usage: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def sample(self) -> bool:
        """Counted in the result: the model was given the prompt (a BLOCKED session says nothing about it)."""
        return self.outcome != BLOCKED


@dataclass(frozen=True)
class PromptResult:
    """One prompt over its samples."""

    n: int                      #: the prompt's 1-based place in the case
    text: str
    should_trigger: bool
    asked: int                  #: sessions the prompt asks for
    samples: int                #: sessions that are samples
    triggered: int              #: samples in which the skill was invoked

    @property
    def share(self) -> float | None:
        """The share of samples that triggered (0 to 1), None with no sample."""
        return round(self.triggered / self.samples, 4) if self.samples else None

    @property
    def status(self) -> str:
        """``right`` (as it should in every sample), ``wrong`` (the other way in every sample), ``mixed`` (samples
        disagree) or ``blocked`` (fewer samples than asked)."""
        if self.samples < self.asked:
            return "blocked"
        wanted = self.samples if self.should_trigger else 0
        if self.triggered == wanted:
            return "right"
        return "wrong" if self.triggered == self.samples - wanted else "mixed"


@dataclass(frozen=True)
class Confusion:
    """The confusion counts over every sample, precision and recall."""

    true_positive: int = 0
    false_negative: int = 0
    false_positive: int = 0
    true_negative: int = 0

    @property
    def precision(self) -> float | None:
        """``tp / (tp + fp)``: of the sessions that invoked the skill, the share that should have; None with none."""
        total = self.true_positive + self.false_positive
        return round(self.true_positive / total, 4) if total else None

    @property
    def recall(self) -> float | None:
        """``tp / (tp + fn)``: of the sessions that should have invoked the skill, the share that did; None with
        none."""
        total = self.true_positive + self.false_negative
        return round(self.true_positive / total, 4) if total else None


@dataclass(frozen=True)
class ActivationDecision:
    """The verdict of an activation case and what it rests on."""

    verdict: str                                    #: one of :data:`VERDICTS`
    prompts: tuple[PromptResult, ...]               #: in file order
    confusion: Confusion
    not_loaded: bool = False                        #: a session's CLI did not load the skill
    reasons: tuple[str, ...] = field(default=())    #: the prompts that went wrong first, then why the run stopped


def decide(prompts: Sequence[tuple[str, bool, int]], samples: Sequence[PromptSample],
           stopped: str | None = None) -> ActivationDecision:
    """The verdict (module docstring) of an activation case whose prompts are ``(text, should_trigger, sessions
    asked)`` in file order and whose sessions gave ``samples``; ``stopped``: why the run ended early. Pure."""
    results = []
    counts = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    for n, (text, should, asked) in enumerate(prompts, start=1):
        mine = [s for s in samples if s.prompt == n and s.sample]
        hit = sum(1 for s in mine if s.outcome == TRIGGERED)
        results.append(PromptResult(n, text, should, asked, len(mine), hit))
        counts["tp" if should else "fp"] += hit
        counts["fn" if should else "tn"] += len(mine) - hit
    confusion = Confusion(counts["tp"], counts["fn"], counts["fp"], counts["tn"])
    not_loaded = any(s.ended == "not_loaded" for s in samples)
    statuses = {r.status for r in results}
    if "blocked" in statuses:
        verdict = "BLOCKED"
    elif not_loaded or "wrong" in statuses:
        verdict = "FAIL"
    elif "mixed" in statuses:
        verdict = "FLAKY"
    else:
        verdict = "PASS"
    return ActivationDecision(verdict, tuple(results), confusion, not_loaded,
                              tuple(reasons(results, samples, not_loaded, stopped)))


def _quoted(text: str, limit: int = 80) -> str:
    one = " ".join(text.split())
    return json.dumps(one if len(one) <= limit else one[:limit - 1] + "…", ensure_ascii=False)


def reasons(results: Sequence[PromptResult], samples: Sequence[PromptSample], not_loaded: bool,
            stopped: str | None) -> list[str]:
    """One line per prompt that did not go as it should, the ones wrong in every sample first, then those whose
    samples disagree, then those short of samples; then why the run stopped early. A prompt's line names it, says how
    many of its sessions invoked the skill and what was invoked instead."""
    out = []
    if not_loaded:
        cause = next((s.note for s in samples if s.ended == "not_loaded" and s.note), None)
        out.append("the CLI did not load the skill, so no prompt could start it" + (f": {cause}" if cause else ""))
    for status in ("wrong", "mixed", "blocked"):
        for r in (r for r in results if r.status == status):
            mine = [s for s in samples if s.prompt == r.n]
            want = "should start the skill" if r.should_trigger else "should not start the skill"
            line = f"prompt {r.n} {_quoted(r.text)} {want}: it did in {r.triggered} of {r.samples} sessions"
            others = sorted({o for s in mine for o in s.others})
            if r.should_trigger and others:
                line += f" ({', '.join(others)} invoked instead)"
            steps = sorted({s.step for s in mine if s.outcome == TRIGGERED and s.step is not None})
            if not r.should_trigger and steps:
                line += f" (invoked at step {', '.join(map(str, steps))})"
            if status == "blocked":
                cause = next((s.note or s.stop_reason for s in reversed(mine) if not s.sample), None)
                line += f"; {r.asked - r.samples} of its {r.asked} sessions were stopped by a cause that is not the " \
                        f"skill's (the environment, the harness or the input it was given)" \
                        + (f": {cause}" if cause else "")
            out.append(line)
    if stopped:
        out.append(stopped)
    return out


def prompt_set_digest(target: str, prompts: Sequence[tuple[str, bool, int]], scenario_sha: str | None) -> str:
    """``sha256:<hex>`` of what an activation result answers: the target, each prompt's text, whether it should
    trigger and its sessions, and for a rehearsal the scenario's bytes (a result of other prompts, or of another
    script, is never reused for these)."""
    raw = json.dumps({"target": target, "prompts": [list(p) for p in prompts], "scenario": scenario_sha},
                     ensure_ascii=False, sort_keys=True)
    return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _rel(path: Path | None, eval_root: Path) -> str | None:
    if path is None:
        return None
    try:
        return Path(os.path.relpath(Path(path).resolve(), Path(eval_root).resolve())).as_posix()
    except ValueError:
        return str(path)


def _sample_doc(s: PromptSample, eval_root: Path) -> dict[str, Any]:
    return {"repeat": s.repeat, "outcome": s.outcome, "ended": s.ended, "via": s.via, "step": s.step,
            "after_tools": list(s.after_tools), "others": list(s.others), "stop_reason": s.stop_reason,
            "note": s.note, "workdir": _rel(s.workdir, eval_root), "seconds": s.seconds}


def activation_doc(decision: ActivationDecision, samples: Sequence[PromptSample], *, run_id: str, target: str,
                   plugin: str | None, skill: str, case: str, eval_root: Path, summary: str,
                   listing: Mapping[str, Any] | None, prompt_set: str, skills_digest: str | None,
                   stop_after_trigger: bool, retries: tuple[int, int], stopped: str | None, origin: str,
                   scenario: str | None, claude_version: str | None, started_at: str, written_at: str,
                   acceptance: Mapping[str, Any] | None = None,
                   usage: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``activation.json`` document (schemas/activation.schema.json): the verdict, precision, recall and the
    confusion counts, then every prompt, the ones that went wrong first (:data:`STATUS_ORDER`), each with the share of
    its sessions that triggered and each session's outcome, step, tools before it and workdir (relative to the eval
    root). ``listing``: the skill listing the sessions were shown (``digest``, ``names``, ``entries`` of the loaded
    plugins' skills); ``skills_digest``: the loaded plugins' skills' names and descriptions when the run started
    (reuse: :mod:`live_trial.acceptance.activation_reuse`); ``acceptance``: the trial of ``then_acceptance``;
    ``usage``: what every session and that trial cost, added up (README "What a trial costs"). Pure."""
    c = decision.confusion
    prompts = sorted(decision.prompts, key=lambda r: (STATUS_ORDER.index(r.status), r.n))
    return {
        "schema_version": SCHEMA_VERSION, "activation_run_id": run_id, "target": target, "plugin": plugin,
        "skill": skill, "case": case, "verdict": decision.verdict, "summary": summary,
        "reasons": list(decision.reasons), "precision": c.precision, "recall": c.recall,
        "confusion": {"true_positive": c.true_positive, "false_negative": c.false_negative,
                      "false_positive": c.false_positive, "true_negative": c.true_negative},
        "prompts": [{"n": r.n, "prompt": r.text, "should_trigger": r.should_trigger, "sessions": r.asked,
                     "samples": r.samples, "triggered": r.triggered, "share": r.share, "status": r.status,
                     "runs": [_sample_doc(s, eval_root) for s in samples if s.prompt == r.n]} for r in prompts],
        "stop_after_trigger": stop_after_trigger, "listing": dict(listing) if listing else None,
        "prompt_set": prompt_set, "skills_digest": skills_digest,
        "blocked_retries": {"used": retries[0], "max": retries[1]}, "stopped": stopped,
        "scenario_origin": origin, "scenario": scenario, "claude_version": claude_version,
        "acceptance": dict(acceptance) if acceptance else None, "started_at": started_at, "written_at": written_at,
        **({"usage": dict(usage)} if usage else {})}


def write_activation(folder: Path, doc: Mapping[str, Any]) -> Path:
    """Write ``<folder>/activation.json`` (schema-checked, atomic; the folder is made) and return its path. Raises
    SchemaInvalid (nothing written) and OSError."""
    Path(folder).mkdir(parents=True, exist_ok=True, mode=0o700)
    path = Path(folder) / ACTIVATION
    write_json(path, dict(doc), SCHEMA)
    return path


def read_activation(path: Path) -> dict[str, Any]:
    """An activation.json, schema-checked. Raises what :func:`live_trial.jsonfile.read_json` raises (RefusedInput,
    SchemaInvalid: one line)."""
    doc: dict[str, Any] = read_json(Path(path), SCHEMA)
    return doc
