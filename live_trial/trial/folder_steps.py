"""The steps of a trial that make, record and give back its own folder (README "Running a real trial", "What a trial
leaves behind"): :func:`prepare` before boot, :func:`folder_changes` and :func:`side_effects_recorded` around
collect, :func:`release` after the session is gone (every exit path of ``run`` and ``run --resume``), :func:`reclaim`
when a resume takes a trial over, :func:`reap_copy` when ``reap`` removes a session whose harness is gone.

Works on a trial (:class:`~live_trial.trial.runner.Trial`) through its request, state and journal only; the folder
rules themselves are in :mod:`live_trial.trial.folder` and :mod:`live_trial.trial.changes`.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from live_trial.errors import Blocked
from live_trial.jsonfile import read_json, write_json
from live_trial.session.rules import pid_alive
from live_trial.trial import changes, folder, folder_lock, gitrepo
from live_trial.trial.context import TrialContext
from live_trial.trial.state import STATE_SCHEMA
from live_trial.workdir_files import Workdir


def _record(trial: TrialContext) -> dict[str, Any] | None:
    assert trial.state is not None
    rec = trial.state.folder
    return dict(rec) if isinstance(rec, dict) else None


def prepare(trial: TrialContext) -> None:
    """Make the trial's folder (:func:`live_trial.trial.folder.make_folder`) unless it exists (a resume), then record
    its state at start: the content snapshot (``cwd-snapshot.json``) and, in a git work tree, its git tree (trial-state
    ``folder.baseline``). Raises :class:`~live_trial.errors.Blocked` when git or the disk fails (an environment
    failure: the verdict is BLOCKED with its cause, never a FAIL of the skill)."""
    rec = _record(trial)
    assert rec is not None and trial.wd is not None     # recorded by start.create
    own = Path(rec["path"])
    if rec["form"] != folder.IN_PLACE and not own.exists():
        assert trial.folder_plan is not None            # planned by the input checks
        try:
            folder.make_folder(trial.folder_plan, trial.wd.root)
        except OSError as exc:
            raise Blocked(f"could not make the trial's folder: {exc}", where=str(own), code="folder_failed",
                          fix="free disk space or fix the permissions named, then run again") from None
    exclude = [trial.req.eval_root, trial.wd.root]
    snap = changes.snapshot_cwd(own, exclude=exclude)
    path = trial.wd.cwd_snapshot
    digest = changes.save_snapshot(path, snap)
    if rec["git"]:
        rec["baseline_head"] = gitrepo.head_commit(own)
        rec["baseline"] = changes.record_baseline(trial.wd.root, own, exclude=exclude)
    trial.journal.save(cwd_snapshot=str(path), cwd_snapshot_sha256=digest, folder=rec)
    trial.journal.log("folder", rec["form"], path=rec["path"], cwd=rec["cwd"], source=rec["source"],
                      files=len(snap), copied_files=rec["files"], copied_bytes=rec["bytes"], git=rec["git"])


def folder_changes(trial: TrialContext) -> dict[str, Any]:
    """The keywords of :func:`live_trial.trial.collect.collect` for the trial's folder: ``cwd`` (the trial's own
    folder; None once its side effects were recorded, when it is gone, or when its start was never recorded (the
    harness was killed while making it): a second collect keeps the first one's, and nothing the session did not do
    is ever recorded), ``before`` (the snapshot at start), ``by_content``, ``baseline``, ``baseline_head`` and
    ``exclude``."""
    assert trial.state is not None and trial.wd is not None
    return changes_since_start(trial.state.to_doc(), trial.wd.root, trial.req.eval_root, trial.req.cwd)


def changes_since_start(state: dict[str, Any], workdir: Path, eval_root: Path, cwd: Path, *,
                        again: bool = False) -> dict[str, Any]:
    """:func:`folder_changes` for a trial known by its ``state`` (trial-state.json) and ``workdir``. ``again``: measure
    the folder again even when its side effects were recorded before (``collect`` by hand while the session still
    runs in the folder). A snapshot whose digest is no longer the one recorded when it was written
    (``cwd_snapshot_sha256``: something changed the file since, and the session could write there) is never measured
    against: ``before`` and ``cwd`` are None and :func:`snapshot_problem` says why (README "What a trial leaves
    behind")."""
    rec = dict(state["folder"]) if isinstance(state.get("folder"), dict) else None
    own = Path(rec["path"]) if rec else Path(cwd)
    kw = {"cwd": own, "before": None, "exclude": [Path(eval_root), Path(workdir)], "by_content": True,
          "baseline": (rec or {}).get("baseline"), "baseline_head": (rec or {}).get("baseline_head")}
    held = snapshot_problem(state) is None
    if state.get("cwd_snapshot") and Path(state["cwd_snapshot"]).is_file() and held:
        kw["before"], kw["by_content"] = changes.load_snapshot(Path(state["cwd_snapshot"]))
    if not held or (rec and ((rec.get("recorded") and not again) or rec.get("removed") or not own.is_dir()
                             or kw["before"] is None)):
        kw["cwd"] = None
    return kw


def snapshot_problem(state: dict[str, Any]) -> str | None:
    """Why the trial's snapshot at start (``cwd_snapshot``) cannot be measured against: its digest is not the one
    ``state`` recorded when it was written (``cwd_snapshot_sha256``), or it was removed; None when it holds, or when the
    state recorded no digest (a trial of an older harness)."""
    path, recorded = state.get("cwd_snapshot"), state.get("cwd_snapshot_sha256")
    if not path or not recorded:
        return None
    try:
        now = changes.snapshot_digest(Path(path))
    except OSError:
        now = "removed"
    if now == recorded:
        return None
    return (f"the trial's records were changed after they were written: {Path(path).name} (the trial folder at start) "
            f"is not the file written then ({recorded[:19]}…, now {now[:19]}…): the side effects were not measured "
            "against it")


def side_effects_recorded(trial: TrialContext) -> None:
    """Mark in trial-state ``folder.recorded`` that the side effects are in the workdir (the session is dead by now)."""
    rec = _record(trial)
    if rec is not None and not rec.get("recorded"):
        trial.journal.save(folder={**rec, "recorded": True})


def release(trial: TrialContext) -> None:
    """After the session is killed and its side effects recorded: remove the trial's copy (exactly the folder the
    state records as harness-made, never anything else; kept with ``--keep-cwd``), drop the private git store of
    the folder's states, and give back an in-place folder's lock. Never raises: a failure is logged."""
    try:
        if trial.wd is not None:
            rec = _record(trial)
            copy = folder.harness_copy(rec, trial.wd.root)
            if copy is not None:
                assert rec is not None          # harness_copy found the copy in it
                if copy.exists():
                    folder.remove_tree(copy)
                trial.journal.save(folder={**rec, "removed": True})
                trial.journal.log("cleanup", "folder_removed", path=str(copy))
            shutil.rmtree(trial.wd.cwd_baseline, ignore_errors=True)
    except Exception as exc:  # noqa: BLE001 - cleanup must go on
        trial.journal.log("cleanup", "error",
                          problem=f"could not remove the trial's folder: {type(exc).__name__}: {exc}")
    finally:
        if trial.folder_lock is not None:
            trial.folder_lock.release()
            trial.folder_lock = None


def reclaim(trial: TrialContext) -> None:
    """``run --resume`` of an in-place trial: take its folder's lock again. Raises
    :class:`~live_trial.errors.RefusedInput` (nothing changed) when another trial holds it now."""
    rec = _record(trial)
    if rec is not None and rec.get("form") == folder.IN_PLACE:
        assert trial.wd is not None
        trial.folder_lock = folder_lock.acquire(Path(rec["path"]), trial.wd.root)


def reap_copy(session: str, cwd: str | None) -> Path | None:
    """For ``reap``, after it removed ``session`` (whose harness is gone): remove that trial's copy when its
    trial-state.json names this session, records the folder as a copy the harness made and still holds, and its owner
    harness is dead; mark it removed there. Returns the folder removed, or None (nothing touched)."""
    found = folder.copy_of_session(cwd, session)
    if found is None:
        return None
    workdir, copy = found
    state_file = Workdir.of(workdir).trial_state
    state = read_json(state_file, STATE_SCHEMA)
    if isinstance(state.get("owner_pid"), int) and pid_alive(state["owner_pid"]):
        return None
    folder.remove_tree(copy)
    state["folder"] = {**state["folder"], "removed": True}
    write_json(state_file, state, STATE_SCHEMA)
    shutil.rmtree(Workdir.of(workdir).cwd_baseline, ignore_errors=True)
    return copy


def trusted_at_boot(plan: folder.FolderPlan | None, cwd: Path | None, *, live: bool) -> Path | None:
    """The folder whose folder-trust question boot may answer (:attr:`live_trial.session.boot.BootRequest.
    trusted_folder`): a real trial's session folder when the harness made it (fresh, or a ``--cwd`` copy) under the
    eval root, which the input checks found trusted in the person's config; None for a rehearsal (its config trusts
    the folder) and for ``--in-place DIR`` (the person's own folder: their own answer is asked for). 2.1.332 asks
    about a git work tree under a trusted folder all the same (references/transcript-jsonl.md "Folder trust");
    2.1.197 does not ask."""
    if not live or plan is None or cwd is None or plan.form == folder.IN_PLACE:
        return None
    return Path(cwd)


def trust_note(answered: Path, eval_root: Path | None) -> str:
    """The verdict's note when boot answered the CLI's folder-trust question for the trial's own folder."""
    above = f" under {eval_root}," if eval_root is not None else ""
    return (f"folder trust: the CLI asked whether to trust the trial's folder {answered} (made by the harness"
            f"{above} which this Claude Code config trusts; this CLI does not carry a parent folder's trust into a "
            "git work tree): boot answered \"Yes, I trust this folder\" for it (README \"Running a real trial\")")
