"""Find the ``claude`` binary a trial uses, and its version.

Order (README "Troubleshooting"): ``--claude-bin``, then env ``LIVE_TRIAL_CLAUDE_BIN``, then ``claude`` on
PATH, then the project-local pinned install ``claude-pin/node_modules/.bin/claude`` (made by
``make setup``; the newest verified release). Nothing global is installed by the harness.

The harness is verified on a range of releases, ``OLDEST_CLAUDE_VERSION`` to ``NEWEST_VERIFIED_CLAUDE_VERSION``
(README "Set-up"): a CLI outside it is still used, with one warning in the verdict that names the range and the
``live-trial doctor --cli`` check of every assumption the harness makes.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Mapping, overload

from live_trial import NEWEST_VERIFIED_CLAUDE_VERSION, OLDEST_CLAUDE_VERSION, PINNED_CLAUDE_VERSION
from live_trial.errors import Blocked
from live_trial.resources import repo_root
from live_trial.stop_reasons import StopReason

PIN_DIR_NAME = "claude-pin"
VERSION_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class ClaudeBinary:
    """A found ``claude``: absolute ``path``, ``version`` ("2.1.197" or "unknown"), where it came from."""

    path: str
    version: str
    source: str  # flag | env | path | pinned

    @property
    def matches_pin(self) -> bool:
        """True when the version equals the default pinned one (``PINNED_CLAUDE_VERSION``)."""
        return self.version == PINNED_CLAUDE_VERSION

    @property
    def in_verified_range(self) -> bool:
        """True when the version lies in the verified range, both ends included (README "Set-up")."""
        found = version_key(self.version)
        oldest, newest = version_key(OLDEST_CLAUDE_VERSION), version_key(NEWEST_VERIFIED_CLAUDE_VERSION)
        return found is not None and oldest is not None and newest is not None and oldest <= found <= newest

    def warning(self) -> str | None:
        """One line when the version is outside the verified range (or unknown), naming the range; else None."""
        if self.in_verified_range:
            return None
        return (f"claude {self.version} at {self.path} is outside the verified range {VERIFIED_RANGE}: screen markers "
                f"and transcript rules were checked on those releases only; run `live-trial doctor --cli "
                f"{self.path}` to see which assumptions hold")


#: The verified range as a person reads it.
VERIFIED_RANGE = f"{OLDEST_CLAUDE_VERSION}–{NEWEST_VERIFIED_CLAUDE_VERSION}"


def version_key(version: str) -> tuple[int, int, int] | None:
    """``"2.1.332"`` -> ``(2, 1, 332)``; None for anything that is not three dot-separated numbers."""
    parts = version.split(".") if isinstance(version, str) else []
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def pinned_install_candidates(start: Path | None = None) -> list[Path]:
    """Where the project-local pinned install may be: next to the cwd (and its parents) and the source checkout."""
    out: list[Path] = []
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        out.append(folder / PIN_DIR_NAME / "node_modules" / ".bin" / "claude")
    out.append(repo_root() / PIN_DIR_NAME / "node_modules" / ".bin" / "claude")
    return out


def claude_version(path: str) -> str:
    """Run ``<path> --version`` and return "X.Y.Z", or "unknown" when it prints no version."""
    return _version_started(path)()


def _version_started(path: str) -> Callable[[], str]:
    """Start ``<path> --version``; return a function that waits for it and returns "X.Y.Z" or "unknown"."""
    try:
        proc = subprocess.Popen([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, text=True,
                                env={**os.environ, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    except OSError:
        return lambda: "unknown"

    def finish() -> str:
        try:
            out, _ = proc.communicate(timeout=VERSION_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return "unknown"
        match = re.search(r"\b(\d+\.\d+\.\d+)\b", out or "")
        return str(match.group(1)) if match else "unknown"
    return finish


#: What :func:`find_claude` returns with ``version_later``: the binary, its version not known yet, and the function
#: that waits for the version and returns the binary with it.
FoundLater = tuple[ClaudeBinary, Callable[[], ClaudeBinary]]


@overload
def find_claude(explicit: str | None = None, env: Mapping[str, str] | None = None, *,
                version_later: Literal[False] = False, flag: str = "--claude-bin") -> ClaudeBinary: ...


@overload
def find_claude(explicit: str | None = None, env: Mapping[str, str] | None = None, *, version_later: Literal[True],
                flag: str = "--claude-bin") -> FoundLater: ...


def find_claude(explicit: str | None = None, env: Mapping[str, str] | None = None, *, version_later: bool = False,
                flag: str = "--claude-bin") -> ClaudeBinary | FoundLater:
    """Return the ``claude`` to use, in the documented order.

    With ``version_later``: ``(binary, finish)`` where ``binary.version`` is not known yet and ``finish()`` returns
    the binary with it: ``<claude> --version`` (about 0.2 s) runs meanwhile in its own process, e.g. while the CLI
    boots. Raises :class:`Blocked` (exit 3) when none is found or the named one is not executable; ``flag`` is the
    option ``explicit`` came from, named in that message (``--claude-bin``; the doctor's ``--cli``).
    """
    env = os.environ if env is None else env
    if explicit:
        return _checked(explicit, "flag", version_later, flag)
    if env.get("LIVE_TRIAL_CLAUDE_BIN"):
        return _checked(env["LIVE_TRIAL_CLAUDE_BIN"], "env", version_later)
    on_path = shutil.which("claude", path=env.get("PATH"))
    if on_path:
        return _checked(on_path, "path", version_later)
    for cand in pinned_install_candidates():
        if cand.exists():
            return _checked(str(cand), "pinned", version_later)
    raise Blocked("claude binary not found", where="--claude-bin, LIVE_TRIAL_CLAUDE_BIN, PATH, ./claude-pin",
                  fix=f"run `make setup` to install the pinned @anthropic-ai/claude-code@{PINNED_CLAUDE_VERSION} "
                      "into ./claude-pin, or pass --claude-bin PATH", code=StopReason.CLAUDE_MISSING)


def _checked(path: str, source: str, version_later: bool = False,
             flag: str = "--claude-bin") -> ClaudeBinary | FoundLater:
    resolved = shutil.which(path) or path
    if not (os.path.isfile(resolved) and os.access(resolved, os.X_OK)):
        given = flag if source == "flag" else "LIVE_TRIAL_CLAUDE_BIN" if source == "env" else "PATH"
        what = "is not an executable file" if os.path.exists(resolved) else "does not exist"
        raise Blocked(f"claude binary named by {given} {what}", where=path,
                      fix=f"point {given} at the claude executable (e.g. ./claude-pin/node_modules/.bin/claude), or "
                          "run `make setup`", code=StopReason.CLAUDE_MISSING)
    finish = _version_started(resolved)
    if not version_later:
        return ClaudeBinary(path=os.path.abspath(resolved), version=finish(), source=source)
    found = ClaudeBinary(path=os.path.abspath(resolved), version="unknown", source=source)
    return found, lambda: ClaudeBinary(path=found.path, version=finish(), source=source)
