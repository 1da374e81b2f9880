"""GitHub Actions outputs of ``run --plan`` (README "CI: JUnit, job summary, annotations"): a Markdown table of the
trials appended to the job summary (``$GITHUB_STEP_SUMMARY``), and one workflow-command annotation per skill that
failed.

Rows are those of :mod:`live_trial.report.junit`. Annotations follow GitHub's rules for workflow commands
(``::error file=...::message``): in the message ``%``, CR and LF are written ``%25``, ``%0D``, ``%0A``; in a
property value ``:`` and ``,`` are also escaped (``%3A``, ``%2C``), so a summary or a path can never end the
command early or inject another one. FAIL and DEGRADED are ``::error`` (the skill's failure); BLOCKED is a
``::warning`` (the environment or the harness stopped it, not the skill: README "Whose failure it is").
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.report.cost import cost_cell, suite_cost, suite_line

_MARK = {"PASS": "✅ PASS", "DEGRADED": "🟡 DEGRADED", "FAIL": "❌ FAIL", "BLOCKED": "⛔ BLOCKED", "FLAKY": "🔁 FLAKY"}


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does (``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped as GitHub's toolkit does (``%``, CR, LF, ``:``, ``,``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _repo_path(path: str, cwd: Path) -> str:
    """``path`` relative to ``cwd`` (the checkout, where GitHub resolves ``file=``) when it lies under it."""
    try:
        return str(Path(path).resolve().relative_to(cwd.resolve()))
    except ValueError:
        return path


# the name is also bound by ``from __future__ import annotations``, which only a type checker notices
def annotations(rows: Iterable[Mapping[str, Any]], cwd: Path | None = None) -> list[str]:  # type: ignore[no-redef]
    """One ``::error file=<SKILL.md>::<summary>`` line per FAIL, DEGRADED or FLAKY row, ``::warning`` per BLOCKED one
    (``title`` is the target and the verdict). Nothing for PASS or skipped skills."""
    here = Path(cwd or Path.cwd())
    lines = []
    for row in rows:
        status = row["status"]
        if status not in ("FAIL", "DEGRADED", "BLOCKED", "FLAKY"):
            continue
        level = "warning" if status == "BLOCKED" else "error"
        props = []
        if row.get("skill_md"):
            props.append(f"file={escape_property(_repo_path(str(row['skill_md']), here))}")
        title = f"{row['target']} {status}"
        props.append(f"title={escape_property(title)}")
        lines.append(f"::{level} {','.join(props)}::{escape_data(row.get('summary') or status)}")
    return lines


def _cell(text: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def step_summary(rows: Iterable[Mapping[str, Any]], title: str = "live trials") -> str:
    """The Markdown table of the trials: skill, verdict, what happened, report (a row per skill), with counts."""
    rows = list(rows)
    counts: dict[str, int] = {}
    for row in rows:
        key = row.get("action") or row["status"]
        counts[key] = counts.get(key, 0) + 1
    out = [f"### {title}", "", ", ".join(f"{k}: {v}" for k, v in counts.items()) or "no skill in this run", "",
           "| skill | verdict | cost | what happened | report |", "|---|---|---|---|---|"]
    for row in rows:
        verdict = _MARK.get(row["status"], row["status"]) if row["status"] != "SKIPPED" else f"⏭ {row['action']}"
        if row.get("pass_rate"):        # a case run: its pass rate beside its verdict
            verdict += f" {row['pass_rate']}"
        if row.get("measure"):          # an activation run: its precision and recall
            verdict += f" {row['measure']}"
        out.append(f"| {_cell(row['target'])} | {_cell(verdict)} | {_cell(cost_cell({'usage': row.get('usage')}))} | "
                   f"{_cell(row.get('summary'))} | {_cell(row.get('report') or '-')} |")
    total = suite_cost([{"usage": row.get("usage")} for row in rows])
    if total["trials"]:
        out += ["", suite_line(total)]
    return "\n".join(out) + "\n"


def append_step_summary(rows: Iterable[Mapping[str, Any]], env: Mapping[str, str] | None = None,
                        title: str = "live trials") -> Path | None:
    """Append :func:`step_summary` to the file named by ``GITHUB_STEP_SUMMARY`` (GitHub reads it after the step);
    return its path, or None when the variable is not set. Raises OSError when the file cannot be written."""
    target = (env if env is not None else os.environ).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(step_summary(rows, title) + "\n")
    return Path(target)
