"""``live-trial merge EVAL_LOG... --into DIR``: the eval-logs of a plan's shards (README "Sharding a plan over CI
machines") combined into one, without losing or duplicating anything, or refused whole.

- Trial workdirs (``<plugin>/<skill>/live-trial/<run-id>/...``) and every other file are merged by relative path:
  a file found in several eval-logs with the same bytes is kept once; with different bytes it is a conflict.
- ``watches.json`` is merged by watch id: the same watch seen twice is kept once, in its later state when one
  history continues the other (a shard that started from the restored eval-log checked it again); two histories
  that part ways are a conflict. ``lastMaintenanceDate`` is the latest one.
- ``notifications.jsonl`` is the union of the lines, each line once, in time order (``at``).
- ``queue.json`` (the plan's defer queue) is merged per case: the entry that waited more plans is kept
  (:func:`live_trial.acceptance.queue.merge_queues`); never a conflict.
- Lock files (``.watches.lock``) are not data and are not copied.

``DIR`` may exist (the merged eval-log of the last run, restored): it is one of the inputs and only gains files.
Every conflict is found before anything is written; a merge with a conflict writes nothing. Files are written
through a temp file and a rename, the ledger and the notifications last (validated, atomic).
"""
from __future__ import annotations

import filecmp
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from live_trial.acceptance.queue import SCHEMA as QUEUE_SCHEMA
from live_trial.acceptance.queue import merge_queues
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json, write_json, write_text_atomic
from live_trial.notices.watch import LOCK_FILE
from live_trial.notices.watch import SCHEMA as LEDGER_SCHEMA
from live_trial.workdir_files import LEDGER_FILE, NOTIFICATIONS_FILE, QUEUE_FILE, TASK

SPECIAL = {LEDGER_FILE, NOTIFICATIONS_FILE, QUEUE_FILE}
SKIPPED = {LOCK_FILE}


@dataclass
class MergeResult:
    """What a merge did: ``trials`` (workdirs with a task.md in the result), ``copied`` (files written into DIR),
    ``watches`` and ``notifications`` (entries in the merged ledger and log), ``into``."""

    into: Path
    trials: int = 0
    copied: int = 0
    watches: int = 0
    notifications: int = 0
    conflicts: list[str] = field(default_factory=list)


def _files(root: Path, dirs: set[str]) -> Iterable[tuple[str, Path]]:
    """(relative path, path) of every file and symlink under ``root`` (symlinks are not followed); every real folder's
    relative path is added to ``dirs`` (an empty folder is part of a trial too, e.g. a fresh ``cwd/``)."""
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for name in dirnames:
            if (base / name).is_symlink():
                filenames.append(name)
            else:
                dirs.add(str((base / name).relative_to(root)))
        for name in filenames:
            path = base / name
            yield str(path.relative_to(root)), path


def _same(a: Path, b: Path) -> bool:
    if a.is_symlink() or b.is_symlink():
        return a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b)
    return filecmp.cmp(a, b, shallow=False)


def _merge_watches(ledgers: list[tuple[Path, dict]], conflicts: list[str]) -> dict | None:
    if not ledgers:
        return None
    by_id: dict[str, tuple[Path, dict]] = {}
    order: list[str] = []
    dates = []
    for source, ledger in ledgers:
        if ledger.get("lastMaintenanceDate"):
            dates.append(ledger["lastMaintenanceDate"])
        for w in ledger["watches"]:
            seen = by_id.get(w["id"])
            if seen is None:
                by_id[w["id"]] = (source, w)
                order.append(w["id"])
                continue
            old = seen[1]
            if old == w:
                continue
            short, long_ = sorted((old, w), key=lambda x: len(x["history"]))
            if (len(short["history"]) < len(long_["history"])
                    and long_["history"][:len(short["history"])] == short["history"]):
                by_id[w["id"]] = (source if long_ is w else seen[0], long_)
            else:
                conflicts.append(f"watch {w['id']} differs in {seen[0]} and {source} (neither history continues the "
                                 "other)")
    return {"version": 1, "lastMaintenanceDate": max(dates) if dates else None,
            "watches": [by_id[i][1] for i in order]}


def _merge_notifications(logs: list[Path]) -> list[str]:
    lines: dict[str, int] = {}
    for path in logs:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and line not in lines:
                lines[line] = len(lines)

    def when(line: str) -> tuple[str, int]:
        try:
            at = json.loads(line).get("at")
        except (ValueError, AttributeError):
            at = None
        return (at if isinstance(at, str) else "", lines[line])
    return sorted(lines, key=when)


def merge_eval_logs(sources: Iterable[Path], into: Path) -> MergeResult:
    """Merge the eval-logs ``sources`` (and ``into`` when it exists) into ``into``; return a :class:`MergeResult`.

    Raises :class:`RefusedInput` (nothing written) when a source is not a folder, a ledger does not fit its schema,
    or the inputs conflict (the message names the first conflict and how many there are). Raises OSError when a
    file cannot be read or written.
    """
    into = Path(into)
    if into.exists() and not into.is_dir():
        raise RefusedInput("--into is not a folder", where=str(into), code="bad_merge_target",
                           fix="name a folder (it is created when missing)")
    roots: list[Path] = [into.resolve()] if into.is_dir() else []
    for src in sources:
        src = Path(src)
        if not src.is_dir():
            raise RefusedInput("an eval-log to merge is not a folder", where=str(src), code="bad_eval_log",
                               fix="pass the eval-log folders of the shards (e.g. downloaded artifacts)")
        if src.resolve() not in roots:
            roots.append(src.resolve())
    if not roots:
        raise RefusedInput("no eval-log to merge", code="bad_eval_log", fix="pass at least one EVAL_LOG folder")
    result = MergeResult(into=into)
    files: dict[str, Path] = {}
    dirs: set[str] = set()
    ledgers: list[tuple[Path, dict]] = []
    logs: list[Path] = []
    queues: list[dict] = []
    for root in roots:
        for rel, path in _files(root, dirs):
            if rel in SPECIAL and path.is_file() and not path.is_symlink():
                if rel == LEDGER_FILE:
                    ledgers.append((root, read_json(path, LEDGER_SCHEMA)))
                elif rel == QUEUE_FILE:
                    queues.append(read_json(path, QUEUE_SCHEMA))
                else:
                    logs.append(path)
                continue
            if Path(rel).name in SKIPPED:
                continue
            first = files.get(rel)
            if first is None:
                files[rel] = path
            elif not _same(first, path):
                result.conflicts.append(f"{rel} differs in {_root_of(first, rel)} and {root}")
    result.conflicts += [f"{rel} is a folder in one eval-log and a file in another"
                         for rel in sorted(dirs & set(files))]
    ledger = _merge_watches(ledgers, result.conflicts)
    if result.conflicts:
        more = f" ({len(result.conflicts)} conflicts in all)" if len(result.conflicts) > 1 else ""
        raise RefusedInput(f"the eval-logs disagree: {result.conflicts[0]}{more}; nothing was merged",
                           code="merge_conflict", details={"conflicts": result.conflicts},
                           fix="merge only the eval-logs of one plan's shards, each trial in one of them")
    notifications = _merge_notifications(logs)
    into.mkdir(parents=True, exist_ok=True)
    target_root = into.resolve()
    for rel in sorted(dirs):
        (target_root / rel).mkdir(parents=True, exist_ok=True)
    for rel, path in sorted(files.items()):
        dest = target_root / rel
        if path == dest or dest.exists() or dest.is_symlink():
            continue
        _copy_atomic(path, dest)
        result.copied += 1
    if ledger is not None:
        write_json(target_root / LEDGER_FILE, ledger, LEDGER_SCHEMA)
        result.watches = len(ledger["watches"])
    queue = merge_queues(queues)
    if queue is not None:
        write_json(target_root / QUEUE_FILE, queue, QUEUE_SCHEMA)
    if notifications:
        write_text_atomic(target_root / NOTIFICATIONS_FILE, "\n".join(notifications) + "\n")
        result.notifications = len(notifications)
    result.trials = sum(1 for rel in files if Path(rel).name == TASK and len(Path(rel).parts) == 5)
    return result


def _root_of(path: Path, rel: str) -> Path:
    """The eval-log folder ``path`` was found in (``rel`` is its path relative to that folder)."""
    return Path(str(path)[: -len(rel)].rstrip(os.sep) or os.sep)


def _copy_atomic(src: Path, dest: Path) -> None:
    """Copy one file (or symlink) to ``dest`` through a temp name in the same folder and a rename."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    try:
        if src.is_symlink():
            os.unlink(tmp)
            os.symlink(os.readlink(src), tmp)
        else:
            shutil.copy2(src, tmp)
        os.replace(tmp, dest)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
