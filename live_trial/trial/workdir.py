"""One trial's folder made or opened, and the names derived from its run (seed 001 "準備").

Layout: :func:`live_trial.acceptance.evallog.workdir_path`; what it holds is :mod:`live_trial.workdir_files`
(:class:`~live_trial.workdir_files.Workdir`). Session names are ``lt-<run-id>-<slug>``: unique per run, so parallel
trials never kill each other's session (seed 001).
"""
from __future__ import annotations

import re
import secrets
from datetime import datetime
from pathlib import Path

from live_trial.acceptance.evallog import workdir_path
from live_trial.clock import run_id_time
from live_trial.errors import RefusedInput
from live_trial.jsonfile import make_private_dirs
from live_trial.workdir_files import TASK, Workdir

RUN_ID_RE = re.compile(r"^[0-9]{8}T[0-9]{6}-[0-9a-f]{4}$")


SLUG_MAX = 40


def new_run_id(now: datetime | None = None) -> str:
    """A run id ``YYYYMMDDTHHMMSS-xxxx`` (UTC time + 4 random hex digits), unique across parallel runs."""
    return f"{run_id_time(now)}-{secrets.token_hex(2)}"


def skill_slug(skill: str) -> str:
    """A tmux-safe slug of a skill name: lower case ``[a-z0-9-]``, at most 40 characters, never empty."""
    slug = re.sub(r"[^a-z0-9]+", "-", skill.lower()).strip("-")[:SLUG_MAX].strip("-")
    return slug or "skill"


def session_name(run_id: str, skill: str) -> str:
    """``lt-<run-id>-<slug>`` for a run (seed 001: unique session name per trial)."""
    if not RUN_ID_RE.match(run_id):
        raise RefusedInput(f"bad run id {run_id!r}", fix="run ids look like 20261130T101500-a1b2")
    return f"lt-{run_id}-{skill_slug(skill)}"


def create_workdir(eval_root: Path, plugin: str | None, skill: str, run_id: str | None = None, *,
                   parent: Path | None = None) -> Workdir:
    """Create the workdir with ``out/`` (in ``parent`` when given: a session of an activation run, README "Does it start
    by itself?"); refuse (exit 2) when it already exists. Returns the :class:`Workdir`."""
    run_id = run_id or new_run_id()
    root = (Path(parent) / run_id).resolve() if parent is not None else workdir_path(eval_root, plugin, skill, run_id)
    if root.exists():
        raise RefusedInput("workdir already exists", where=str(root), fix="use a new run id")
    wd = Workdir(root=root, run_id=run_id)
    make_private_dirs(wd.out)                # 0700: the workdir holds the screen's and the transcript's text
    return wd


def open_workdir(path: Path) -> Workdir:
    """An existing workdir (for ``--resume`` and the step subcommands); refuse when it is not one."""
    wd = Workdir.of(Path(path).resolve())
    if not wd.task.is_file():
        raise RefusedInput(f"not a trial workdir (no {TASK})", where=str(wd.root),
                           fix="pass the folder eval-log/<plugin>/<skill>/live-trial/<run-id>")
    return wd
