"""Past case runs as a person looks them up (references/suite-format.md "Repeats"; README "Reading a trial"): one case
run's verdict read from its folder (:func:`read_case_run`), every case run under an eval root newest first
(:func:`list_case_runs`), which case run a trial was an attempt of (:func:`case_of`), and the case run's own page
``report.html`` (:func:`write_case_report`), which links every attempt's.

A folder is read, never changed; a case verdict that does not fit its schema, or a case run stopped before its
verdict, is still listed with one line saying what is wrong (``problem``), and never raises.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from live_trial.acceptance.case_verdict import CaseRun, read_case_verdict
from live_trial.acceptance.evallog import CASES
from live_trial.clock import utc_now
from live_trial.errors import RefusedInput
from live_trial.jsonfile import write_text_atomic
from live_trial.report.run_folders import RunFolder, listed, read_run
from live_trial.report.timeline import read_json_dict
from live_trial.workdir_files import CASE_VERDICT, REPORT, TRIAL_STATE

#: A person reads the page, and may serve or share it (as a trial's report.html).
REPORT_MODE = 0o644


@dataclass
class CaseInfo(RunFolder):
    """One case run as ``ls`` and ``show`` present it (:class:`~live_trial.report.run_folders.RunFolder`: its case
    verdict, or what is wrong with it)."""

    @property
    def label(self) -> str:
        """``plugin:skill [case]`` (``plugin:skill`` for the default case)."""
        case = str((self.doc or {}).get("case") or "default")
        return self.target if case == "default" else f"{self.target} [{case}]"

    @property
    def rate_text(self) -> str:
        """``2/3 passed`` (the pass rate over the samples), ``-`` without a verdict."""
        rate = (self.doc or {}).get("pass_rate")
        return f"{rate['passed']}/{rate['samples']} passed" if rate else "-"

    def attempts(self) -> list[dict]:
        """Each attempt with its absolute ``workdir`` and ``report`` (None when it had none)."""
        root = self.eval_root
        return [{**a, "workdir": str(root / a["workdir"]) if a.get("workdir") else None,
                 "report": str(root / a["report"]) if a.get("report") else None}
                for a in (self.doc or {}).get("attempts") or []]


def read_case_run(folder: Path) -> CaseInfo:
    """The :class:`CaseInfo` of a case run's folder. Never raises."""
    return read_run(CaseInfo, folder, CASE_VERDICT, read_case_verdict,
                    "the case run stopped before its verdict, or still runs")


def list_case_runs(eval_root: Path, *, skill: str | None = None, verdict: str | None = None) -> list[CaseInfo]:
    """The case runs under ``eval_root``, newest first; ``skill`` and ``verdict`` filter as ``ls`` does (``none``:
    without a valid case verdict). Raises :class:`RefusedInput` when ``eval_root`` is not a folder."""
    root = Path(eval_root)
    if not root.is_dir():
        raise RefusedInput("the eval root is not a folder", where=str(root), code="not_found",
                           fix="pass --eval-root the folder trials were written to (default ./eval-log)")
    return listed([read_case_run(p) for p in root.glob(f"*/*/{CASES}/*") if p.is_dir()], skill=skill,
                  verdict=verdict)


def case_of(workdir: Path) -> tuple[CaseRun, CaseInfo | None] | None:
    """The case run the trial in ``workdir`` was an attempt of (its trial-state.json ``case_run``) and that run's
    :class:`CaseInfo` (None when its folder is not there); None for a trial run on its own."""
    run = CaseRun.from_doc((read_json_dict(Path(workdir) / TRIAL_STATE) or {}).get("case_run"))
    if run is None:
        return None
    return run, read_case_run(run.folder) if run.folder.is_dir() else None


def case_line(workdir: Path) -> str | None:
    """``attempt 2 of the case run <folder> (case ada, 3 asked): FLAKY, 2/3 passed`` for an attempt; None for a
    trial run on its own."""
    found = case_of(workdir)
    if found is None:
        return None
    run, info = found
    head = f"attempt {run.attempt} of the case run {run.folder} (case {run.case}, {run.repeats} asked)"
    if info is None or info.doc is None:
        return head + (f": {info.problem}" if info else ": no case verdict (the case run was stopped, or still runs)")
    return f"{head}: {info.doc['verdict']}, {info.rate_text}"


def _href(path: str | None, start: Path) -> str | None:
    """A relative link from the folder ``start`` to ``path`` (None when there is none)."""
    if not path:
        return None
    return quote(Path(os.path.relpath(path, start)).as_posix(), safe="/.")


def case_context(folder: Path) -> dict:
    """Everything the case run's page shows, as plain data. Raises :class:`RefusedInput` when ``folder`` holds no
    readable case verdict."""
    info = read_case_run(folder)
    if info.doc is None:
        raise RefusedInput(f"not a case run's folder: {info.problem}", where=str(folder), code="bad_workdir",
                           fix="pass eval-log/<plugin>/<skill>/live-trial-cases/<case-run-id>")
    doc = info.doc
    attempts = [{**a, "href": _href(a["report"] or a["workdir"], info.folder)} for a in info.attempts()]
    return {"title": f"{doc['verdict']} · {info.label} · {info.rate_text}", "verdict": doc["verdict"],
            "label": info.label, "summary": doc["summary"], "rate": info.rate_text, "repeats": doc["repeats"],
            "reasons": doc["reasons"], "attempts": attempts, "retries": doc["blocked_retries"],
            "origin": doc["scenario_origin"], "started_at": doc["started_at"], "case_run_id": doc["case_run_id"],
            "verdict_file": CASE_VERDICT, "generated_at": utc_now()}


def case_link(workdir: Path) -> dict | None:
    """For an attempt's own page: ``{"text", "href"}`` naming its case run and linking the case run's page; None for
    a trial run on its own."""
    found = case_of(workdir)
    if found is None:
        return None
    run = found[0]
    return {"text": case_line(workdir) or "", "href": _href(str(run.folder / REPORT), Path(workdir))}


def write_case_report(folder: Path) -> Path:
    """Write ``<folder>/report.html``, the case run's page (Jinja2, autoescaped, loading nothing; mode 0644), and
    return its path. Raises :class:`RefusedInput` (no case verdict) and OSError."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    html = env.get_template("case.html.j2").render(**case_context(Path(folder)))
    path = Path(folder).resolve() / REPORT
    write_text_atomic(path, html)
    os.chmod(path, REPORT_MODE)
    return path
