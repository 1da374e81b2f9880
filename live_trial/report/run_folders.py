"""What ``ls``, ``show`` and ``report`` read of a run that has a folder and a result file of its own beside its
trials' workdirs (README "Reading a trial"): a case run (``live-trial-cases/<id>/case-verdict.json``,
:mod:`live_trial.report.cases`) and an activation run (``live-trial-activation/<id>/activation.json``,
:mod:`live_trial.report.activation`). One folder is read, never changed (:func:`read_run`); a result that does not fit
its schema, or a run stopped before it, is still listed with one line saying what is wrong (``problem``); the runs
under an eval root are filtered and ordered as ``ls`` shows them (:func:`listed`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from live_trial.clock import epoch_or_none
from live_trial.errors import LiveTrialError


@dataclass
class RunFolder:
    """One run's folder (``<eval-root>/<plugin>/<skill>/<kind>/<id>``): ``doc`` its schema-valid result, or None with
    ``problem`` saying what is wrong."""

    folder: Path
    doc: dict | None = None
    problem: str | None = None

    @property
    def eval_root(self) -> Path:
        """The eval root the run's folder lies in."""
        return self.folder.parents[3]

    @property
    def target(self) -> str:
        """``plugin:skill``: the result's, else the folder's."""
        return str((self.doc or {}).get("target") or f"{self.folder.parents[2].name}:{self.folder.parents[1].name}")

    @property
    def label(self) -> str:
        """How ``ls`` names the run (the target; a kind adds its case)."""
        return self.target

    def sort_key(self) -> tuple[float, str]:
        """``(start in epoch seconds, folder name)``, the order of the list."""
        return (epoch_or_none((self.doc or {}).get("started_at")) or 0.0, self.folder.name)


R = TypeVar("R", bound=RunFolder)


def read_run(kind: type[R], folder: Path, result: str, read: Callable[[Path], dict[str, Any]], unfinished: str) -> R:
    """The ``kind`` of ``folder``, its ``result`` file read by ``read`` (schema-checked); ``unfinished`` says why a run
    has none yet. Never raises."""
    folder = Path(folder)
    path = folder / result
    if not path.is_file():
        return kind(folder, problem=f"no {result}: {unfinished}")
    try:
        return kind(folder, doc=read(path))
    except LiveTrialError as exc:
        return kind(folder, problem=f"{result} was refused: {exc.problem.replace(str(path), result)}")
    except OSError as exc:
        return kind(folder, problem=f"{result} cannot be read: {exc}")


def listed(rows: list[R], *, skill: str | None, verdict: str | None) -> list[R]:
    """``rows`` newest first, those of ``skill`` (its name, ``plugin:skill`` or the label) with ``verdict`` (``none``:
    without a valid result) when given."""
    if skill:
        rows = [r for r in rows if skill in (r.folder.parents[1].name, r.label.split(" ")[0], r.label)]
    if verdict:
        rows = [r for r in rows if str((r.doc or {}).get("verdict") or "NONE") == verdict.upper()]
    return sorted(rows, key=lambda r: r.sort_key(), reverse=True)
