"""The lock a ``run --in-place DIR`` trial holds on DIR for its whole life (README "Running a real trial"): two trials
never run side by side in one folder, so neither is credited with the other's files.

The lock lives in one machine-wide place, keyed by DIR's real path, never inside DIR (a file there would be a side
effect of the trial): ``$XDG_RUNTIME_DIR/live-trial-locks/`` when that folder exists, else
``/tmp/live-trial-locks-<uid>/``. It is an ``fcntl.flock`` on ``<sha256 of the real path>.lock``, a file that also
holds its holder as JSON (``pid``, ``workdir``, ``folder``, ``since``) so a second trial is refused at once naming
it. The kernel drops a flock when its process dies, even by SIGKILL: a killed harness never leaves a folder locked.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from live_trial.clock import utc_now
from live_trial.errors import RefusedInput
from live_trial.jsonfile import parse_json


def lock_dir(env: Mapping[str, str] | None = None) -> Path:
    """The machine-wide folder of in-place locks for this user (see the module docstring)."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "live-trial-locks"
    return Path(tempfile.gettempdir()) / f"live-trial-locks-{os.getuid()}"


def lock_path(folder: Path, base: Path) -> Path:
    """The lock file of ``folder`` (by its real path) in the lock folder ``base``."""
    key = hashlib.sha256(os.fsencode(str(Path(folder).resolve()))).hexdigest()[:40]
    return Path(base) / f"{key}.lock"


@dataclass
class FolderLock:
    """A held lock: the lock file, its open descriptor, the folder (real path)."""

    path: Path
    fd: int
    folder: Path

    def release(self) -> None:
        """Give the folder back (safe to call twice): the lock file is removed while still held, then closed."""
        if self.fd < 0:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = -1


def _holder(path: Path) -> dict[str, Any]:
    try:
        doc = parse_json(path.read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def acquire(folder: Path, workdir: Path, *, base: Path | None = None, pid: int | None = None) -> FolderLock:
    """Take the exclusive lock on ``folder`` for the trial whose workdir is ``workdir``; write the holder in it.

    Raises :class:`RefusedInput` (``folder_in_use``, exit 2) at once when another live process holds it, naming the
    holder's pid and workdir; nothing is created then. ``base`` defaults to :func:`lock_dir`."""
    real = Path(folder).resolve()
    base = Path(base) if base is not None else lock_dir()
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    if base.stat().st_uid != os.getuid():
        raise RefusedInput("the lock folder belongs to another user", where=str(base), code="lock_folder_foreign",
                           fix="remove it, or set XDG_RUNTIME_DIR to a folder of your own")
    path = lock_path(real, base)
    for _ in range(10):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _holder(path)
            who = (f"trial {holder.get('workdir')} (harness pid {holder.get('pid')})" if holder
                   else "another trial")
            raise RefusedInput(f"the folder is in use by {who}", where=f"--in-place {real}", code="folder_in_use",
                               details={"holder": holder},
                               fix="wait for that trial to end or stop it; two trials never run in one folder "
                                   "(--cwd DIR runs in a private copy)") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if not same:                     # the previous holder removed the file between our open and our lock
            os.close(fd)
            continue
        doc = {"pid": pid or os.getpid(), "workdir": str(workdir), "folder": str(real), "since": utc_now()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(doc) + "\n").encode(), 0)
        os.fsync(fd)
        return FolderLock(path=path, fd=fd, folder=real)
    raise RefusedInput("the folder lock kept changing hands", where=f"--in-place {real}", code="folder_in_use",
                       fix="try again")
