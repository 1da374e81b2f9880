"""The improvement loop's ledger, ``improvement.json`` in the first trial's workdir (seed 001 ``feedback_contract``:
``max_iterations`` 3; seed 002: only the missing part as a diff ticket, sent again, and how many rounds it took).

Round 0 is the first trial, its verdict completed by a fresh evaluator after the person's choice. Round n (1 ..
``max_rounds``) is opened by :func:`open_round` (a diff ticket from the last verdict; the skill folder's files and
their digests at that moment) and closed by :func:`close_round` (a new trial of the same case, judged by its own fresh
evaluator; the files that changed since the ticket). The depth is the person's choice: ``light`` one round (the
ticket's first blocker), ``standard`` all blockers and ``detailed`` blockers and unmet criteria, up to
``loop_bounds.improvement.max_iterations`` rounds. The loop stops at the first PASS; a round past the bound, after a
PASS, after a BLOCKED trial (not the skill's failure) or while one is open is refused (exit 2, nothing changed).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from live_trial.acceptance import delivery_state as ds
from live_trial.acceptance.verdict import read_verdict
from live_trial.clock import utc_now
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json, write_json
from live_trial.policy import improvement_max_iterations
from live_trial.workdir_files import EVALUATION, IMPROVEMENT, VERDICT

SCHEMA = "improvement.schema.json"
VERSION = "live-trial-improvement/1"
LIGHT = "light"


def max_rounds(choice: str) -> int:
    """Rounds the choice allows after round 0: light 1 (seed 002's single resend), standard and detailed the policy's
    ``max_iterations`` (seed 001: 3)."""
    return 1 if choice == LIGHT else improvement_max_iterations()


@dataclass(frozen=True)
class Ledger:
    """``improvement.json`` as read or about to be written: its path and document."""

    path: Path
    doc: Mapping[str, Any]

    @property
    def rounds(self) -> list[Mapping[str, Any]]:
        """Every round, round 0 first."""
        return list(self.doc["rounds"])

    @property
    def last(self) -> Mapping[str, Any]:
        """The last round."""
        return self.doc["rounds"][-1]

    @property
    def improvement_rounds(self) -> int:
        """Rounds run after round 0 (closed ones)."""
        return sum(1 for r in self.doc["rounds"] if r["n"] > 0 and r["trial"] is not None)

    def save(self) -> "Ledger":
        """Write the document (schema-checked, atomic)."""
        write_json(self.path, dict(self.doc), SCHEMA)
        return self


def load(workdir: Path) -> Ledger | None:
    """The ledger of the delivery in ``workdir`` (schema-checked), None before its first ticket."""
    path = Path(workdir) / IMPROVEMENT
    return Ledger(path, read_json(path, SCHEMA)) if path.is_file() else None


def file_digests(skill_dir: Path) -> list[dict[str, str]]:
    """``[{path, sha256}]`` of every file under ``skill_dir`` (paths relative to it, sorted; links not followed)."""
    root = Path(skill_dir)
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        out.append({"path": path.relative_to(root).as_posix(),
                    "sha256": "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()})
    return out


def changes(before: Sequence[Mapping[str, str]], after: Sequence[Mapping[str, str]]) -> list[dict[str, str | None]]:
    """The files added, changed or removed between two :func:`file_digests`, by path."""
    old = {f["path"]: f["sha256"] for f in before}
    new = {f["path"]: f["sha256"] for f in after}
    return [{"path": p, "before": old.get(p), "after": new.get(p)} for p in sorted(set(old) | set(new))
            if old.get(p) != new.get(p)]


def trial_entry(workdir: Path) -> dict[str, Any]:
    """The ledger's record of the judged trial in ``workdir``: its verdict's digest, overall, goal and reasons, and
    the evaluator's session id. Raises :class:`RefusedInput` when it has no verdict, or one whose goal no fresh
    evaluator judged (a goal not judged, or an ``--override``): a round is judged by its own evaluator."""
    workdir = Path(workdir)
    doc = read_verdict(workdir / VERDICT)
    blocked = doc["overall"]["verdict"] == "BLOCKED"
    if doc.get("override") or (doc.get("goal_result") is None and not blocked):
        raise RefusedInput("the trial's goal was not judged by a fresh evaluator" + (
            " (its verdict rests on --override)" if doc.get("override") else ""), where=str(workdir / VERDICT),
            code="not_judged", fix=f"run `live-trial evaluate --workdir {workdir}`, then the verdict")
    session = None
    if (workdir / EVALUATION).is_file():
        session = read_json(workdir / EVALUATION, "evaluation.schema.json").get("session_id")
    return {"workdir": str(workdir), "verdict_sha256": ds.sha256_of(workdir / VERDICT),
            "overall": doc["overall"]["verdict"], "goal_result": doc.get("goal_result"),
            "reasons": list(doc["overall"].get("reasons") or []), "evaluator_session": session}


def start(workdir: Path, *, target: str, skill_dir: Path, args: str, scenario: str | None, choice: str) -> Ledger:
    """A new ledger (not written) whose round 0 is the completed verdict of the first trial in ``workdir``."""
    now = utc_now()
    doc = {"version": VERSION, "target": target, "skill_dir": str(Path(skill_dir).resolve()),
           "case": {"args": args, "scenario": scenario}, "choice": choice, "max_rounds": max_rounds(choice),
           "rounds": [{"n": 0, "ticket": None, "files": None, "changed": None, "trial": trial_entry(workdir),
                       "opened_at": now, "closed_at": now}]}
    return Ledger(Path(workdir) / IMPROVEMENT, doc)


def check_can_open(ledger: Ledger) -> int:
    """The number of the round a new ticket opens. Raises :class:`RefusedInput` while a round is open, after a PASS,
    after a BLOCKED trial, and past ``max_rounds`` (seed 001 ``max_iterations``)."""
    last = ledger.last
    where = str(ledger.path)
    if last["trial"] is None:
        raise RefusedInput(f"round {last['n']} is open: its trial is not recorded yet", where=where, code="round_open",
                           fix=f"run the new trial of the same case, then `live-trial delivery round "
                               f"{ledger.path.parent} --trial <its workdir>`")
    if last["trial"]["overall"] == "PASS":
        raise RefusedInput(f"round {last['n']} passed: the loop stops at the first PASS", where=where,
                           code="converged", fix=f"record the end: `live-trial delivery record {ledger.path.parent} "
                                                 f"--event {ds.IMPROVEMENT_COMPLETE}`")
    if last["trial"]["overall"] == "BLOCKED":
        raise RefusedInput(f"round {last['n']}'s trial was BLOCKED: not the skill's failure, nothing to fix in it",
                           where=where, code="blocked", fix="record the end, or fix the environment and start anew")
    n = int(last["n"]) + 1
    if n > int(ledger.doc["max_rounds"]):
        raise RefusedInput(f"round {n} would pass the loop's bound: at most {ledger.doc['max_rounds']} round(s) for "
                           f"{ledger.doc['choice']} (seed 001 feedback_contract max_iterations)", where=where,
                           code="round_limit", fix=f"record the end: `live-trial delivery record "
                                                   f"{ledger.path.parent} --event {ds.IMPROVEMENT_COMPLETE}`")
    return n


def open_round(ledger: Ledger, n: int, ticket: Mapping[str, Any]) -> Ledger:
    """Append round ``n`` with its ``ticket`` (``{path, sha256, from_verdict, items}``) and the skill folder's files
    now; write the ledger."""
    entry = {"n": n, "ticket": dict(ticket), "files": file_digests(Path(ledger.doc["skill_dir"])), "changed": None,
             "trial": None, "opened_at": utc_now(), "closed_at": None}
    return Ledger(ledger.path, {**ledger.doc, "rounds": [*ledger.rounds, entry]}).save()


def close_round(ledger: Ledger, trial_workdir: Path, *, same_case: Mapping[str, Any]) -> Ledger:
    """Close the open round with the judged trial in ``trial_workdir``: the files changed since its ticket and the
    trial's verdict. ``same_case``: ``{target, args, scenario}`` of that trial, checked against the ledger's case.
    Raises :class:`RefusedInput` (nothing changed) when no round is open, the trial is another case, one the ledger
    has already, older than the ticket, or not judged by its own fresh evaluator."""
    last = ledger.last
    where = str(ledger.path)
    if last["trial"] is not None:
        raise RefusedInput("no round is open", where=where, code="no_round_open",
                           fix=f"write the next diff ticket first: `live-trial ticket {ledger.path.parent}`")
    case = ledger.doc["case"]
    wanted = {"target": ledger.doc["target"], "args": case["args"], "scenario": case["scenario"]}
    if dict(same_case) != wanted:
        differs = "; ".join(f"{k} {same_case.get(k)!r}, the loop's {v!r}" for k, v in wanted.items()
                            if same_case.get(k) != v)
        raise RefusedInput(f"the trial is not the same case ({differs})", where=str(trial_workdir),
                           code="other_case", fix="run a new trial of the same target, args and scenario")
    entry = trial_entry(trial_workdir)
    seen = {r["trial"]["workdir"] for r in ledger.rounds if r["trial"]}
    sessions = {r["trial"]["evaluator_session"] for r in ledger.rounds if r["trial"]} - {None}
    if entry["workdir"] in seen:
        raise RefusedInput("that trial is in the ledger already", where=str(trial_workdir), code="same_trial",
                           fix="run a new trial of the same case for this round")
    if entry["evaluator_session"] is not None and entry["evaluator_session"] in sessions:
        raise RefusedInput("the trial's evaluator is one an earlier round used", where=str(trial_workdir),
                           code="same_evaluator", fix="each round is judged by a fresh evaluator: run evaluate anew")
    written = read_verdict(Path(trial_workdir) / VERDICT).get("started_at") or ""
    if written and written < last["opened_at"]:
        raise RefusedInput(f"the trial started before round {last['n']}'s ticket ({written} < {last['opened_at']})",
                           where=str(trial_workdir), code="older_trial", fix="run a new trial after the change")
    closed = {**last, "changed": changes(last["files"] or [], file_digests(Path(ledger.doc["skill_dir"]))),
              "trial": entry, "closed_at": utc_now()}
    return Ledger(ledger.path, {**ledger.doc, "rounds": [*ledger.rounds[:-1], closed]}).save()
