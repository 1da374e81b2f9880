"""Where trials live in the eval root: ``<eval-root>/<plugin>/<skill>/live-trial/<run-id>/`` (seed 001 "準備"), and
the case runs over several of them: ``<eval-root>/<plugin>/<skill>/live-trial-cases/<case-run-id>/`` (references/
suite-format.md "Repeats"), and the activation runs, each holding the workdirs of its prompts' sessions:
``<eval-root>/<plugin>/<skill>/live-trial-activation/<run-id>/prompts/<session-run-id>/`` (README "Does it start by
itself?").

The one place that spells this layout: the runner creates workdirs there, plan looks for earlier verdicts there and
the notices find a trial's evaluation there. Pure path arithmetic; nothing here touches the disk.
"""
from __future__ import annotations

from pathlib import Path

NO_PLUGIN = "_plain"
#: The folder of a skill's case runs, beside its ``live-trial`` folder of trials.
CASES = "live-trial-cases"
#: The folder of a skill's activation runs.
ACTIVATIONS = "live-trial-activation"


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


def skill_cases_dir(eval_root: Path, plugin: str | None, skill: str) -> Path:
    """``<eval-root>/<plugin>/<skill>/live-trial-cases``: the folder holding every case run of one skill (a case with
    ``repeats`` above 1). Returns a path (not resolved); raises nothing."""
    return Path(eval_root) / (plugin or NO_PLUGIN) / skill / CASES


def case_run_path(eval_root: Path, plugin: str | None, skill: str, case_run_id: str) -> Path:
    """``<eval-root>/<plugin>/<skill>/live-trial-cases/<case-run-id>`` as an absolute path."""
    return (skill_cases_dir(eval_root, plugin, skill) / case_run_id).resolve()


def skill_activation_dir(eval_root: Path, plugin: str | None, skill: str) -> Path:
    """``<eval-root>/<plugin>/<skill>/live-trial-activation``: the folder holding every activation run of one skill.
    Returns a path (not resolved); raises nothing."""
    return Path(eval_root) / (plugin or NO_PLUGIN) / skill / ACTIVATIONS


def activation_run_path(eval_root: Path, plugin: str | None, skill: str, run_id: str) -> Path:
    """``<eval-root>/<plugin>/<skill>/live-trial-activation/<run-id>`` as an absolute path."""
    return (skill_activation_dir(eval_root, plugin, skill) / run_id).resolve()
