"""Where trials live in the eval root: ``<eval-root>/<plugin>/<skill>/live-trial/<run-id>/`` (seed 001 "準備").

The one place that spells this layout: the runner creates workdirs there, plan looks for earlier verdicts there and
the notices find a trial's evaluation there. Pure path arithmetic; nothing here touches the disk.
"""
from __future__ import annotations

from pathlib import Path

NO_PLUGIN = "_plain"


def workdir_path(eval_root: Path, plugin: str | None, skill: str, run_id: str) -> Path:
    """``<eval-root>/<plugin>/<skill>/live-trial/<run-id>`` as an absolute path (plain skills use ``_plain``)."""
    return (Path(eval_root) / (plugin or NO_PLUGIN) / skill / "live-trial" / run_id).resolve()


def skill_trials_dir(eval_root: Path, plugin: str | None, skill: str) -> Path:
    """``<eval-root>/<plugin>/<skill>/live-trial``: the folder holding every trial of one skill (plain skills use
    ``_plain``). Returns a path (not resolved); raises nothing."""
    return Path(eval_root) / (plugin or NO_PLUGIN) / skill / "live-trial"


def eval_root_of(workdir: Path) -> Path | None:
    """The eval root a workdir ``<eval-root>/<plugin>/<skill>/live-trial/<run-id>`` lies in; None when ``workdir``
    is not laid out so."""
    workdir = Path(workdir)
    if workdir.parent.name == "live-trial" and len(workdir.parents) >= 4:
        return workdir.parents[3]
    return None
