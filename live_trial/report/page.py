"""``report.html``: one trial as one self-contained page a person can read in any browser, offline.

What it shows (README "Reading a trial"): the verdict with its one-sentence summary, reasons and next step; the
timeline (:mod:`live_trial.report.timeline`); the evidence with links to the cited files and transcript records; what
the loaded plugins' hooks and MCP servers did ("Plugin activity", :mod:`live_trial.report.activity`); the criteria
and the answered questions when the verdict has them; the transcript as a conversation
(:mod:`live_trial.report.conversation`); the last screen; the workdir's files.

Rendered with Jinja2 (``page.html.j2`` beside this module) with autoescaping on: every value from the trial (a
transcript holding ``</script>``, a question, a file name) is escaped by the template engine, not by hand, and the
page carries a Content-Security-Policy that forbids loading anything, so viewing it never touches the network.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from live_trial import workdir_files as wf
from live_trial.clock import utc_now
from live_trial.errors import PollExit
from live_trial.jsonfile import parse_json, write_text_atomic
from live_trial.report import conversation as conv_mod
from live_trial.report import timeline as tl_mod
from live_trial.report.activity import activity_href, activity_rows
from live_trial.report.cases import case_link
from live_trial.report.cost import cost_table
from live_trial.report.trials import TrialInfo, duration_text, next_step_line, read_trial, require_trial, when_text
from live_trial.workdir_files import NOTIFICATIONS_FILE

#: A person reads the report, and may serve or share it: readable by all, unlike the harness's own records.
REPORT_MODE = 0o644
PANE_LINES = 200
#: The workdir's files worth a link, with what each holds.
FILES = ((wf.VERDICT, "the verdict"), (wf.EVALUATION, "the evaluator's request and answers"),
         (wf.TRIAL_LOG, "every decision of the harness"), (wf.TRANSCRIPT, "the session's transcript"),
         (wf.PANE, "the last screen with scrollback"), (wf.TASK, "what was pasted"),
         (wf.SIDE_EFFECTS_LIST_PATH, "what changed in the trial's folder"), (wf.POLL_STATE, "the poll's state"),
         (wf.TRIAL_STATE, "the harness's state"), (wf.MARKER_PATH, "the completion marker"))


def _href(workdir: Path, source: str) -> str | None:
    """A relative link to ``source`` when it is a file inside ``workdir``; None otherwise (never a link out)."""
    if not source or "://" in source or source.startswith(("/", "\\")):
        return None
    path = (workdir / source).resolve()
    root = workdir.resolve()
    if path != root and root in path.parents and path.is_file():
        return quote(path.relative_to(root).as_posix(), safe="/")
    return None


def _evidence(doc: dict, workdir: Path, uuids: set[str]) -> list[dict]:
    out = []
    for item in doc.get("evidence") or []:
        source = str(item.get("source") or "")
        href = f"#rec-{quote(source.lower())}" if source.lower() in uuids else \
            activity_href(source) or _href(workdir, source)
        out.append({"claim": item.get("claim"), "observed": item.get("observed"), "quote": item.get("quote"),
                    "source": source, "href": href})
    return out


def _gate_answers(doc: dict, workdir: Path) -> list[dict]:
    """The verdict's ``gate_answers`` when it has them, else the answers trial-log.jsonl recorded."""
    if isinstance(doc.get("gate_answers"), list):
        return doc["gate_answers"]
    records, _ = tl_mod.read_log(workdir)
    return [{"n": i, "question": r.get("question"), "options": r.get("options") or [], "answer": r.get("answered"),
             "kind": r.get("gate_kind") or "rescue"}
            for i, r in enumerate((r for r in records if r.get("step") == "poll" and r.get("decision") == PollExit.GATE
                                   and r.get("answered")), start=1)]


def _pane(workdir: Path) -> dict | None:
    try:
        lines = (workdir / wf.PANE).read_text(encoding="utf-8", errors="replace").rstrip("\n").splitlines()
    except OSError:
        return None
    shown = lines[-PANE_LINES:]
    return {"text": "\n".join(shown), "cut": len(lines) > len(shown), "shown": len(shown), "total": len(lines),
            "file": wf.PANE}


def _timeline(workdir: Path, doc: dict) -> dict:
    tl = tl_mod.build(workdir, doc)
    total = tl.total_s or 1.0

    def pct(x: float) -> float:
        return round(max(0.0, min(100.0, x / total * 100.0)), 3)

    lanes = []
    for name in tl.lanes:
        bars = [{"kind": b.kind, "label": b.label, "title": b.title, "duration": duration_text(b.duration_s),
                 "left": pct(b.start_s), "width": max(0.25, pct(b.duration_s))} for b in tl.bars if b.lane == name]
        marks = [{"kind": m.kind, "label": m.label, "left": pct(m.at_s), "at": duration_text(m.at_s)}
                 for m in tl.marks] if name == "session" else []
        lanes.append({"name": name, "bars": bars, "marks": marks})
    rows = [{"at": duration_text(b.start_s), "duration": duration_text(b.duration_s), "lane": b.lane,
             "label": b.title, "kind": b.kind, "start": b.start_s} for b in tl.bars]
    rows += [{"at": duration_text(m.at_s), "duration": "", "lane": "moment", "label": m.label, "kind": m.kind,
              "start": m.at_s} for m in tl.marks]
    return {"lanes": lanes, "rows": sorted(rows, key=lambda r: r["start"]), "notes": tl.notes,
            "started_at": tl.started_at, "total": duration_text(tl.total_s),
            "totals": [(k, duration_text(v)) for k, v in tl.state_totals.items()]}


def _message(workdir: Path, info: TrialInfo) -> str | None:
    """The text of the notification this trial sent (``<eval-root>/notifications.jsonl``), when it is found."""
    path = workdir.parents[3] / NOTIFICATIONS_FILE if len(workdir.parents) >= 4 else None
    if path is None or not path.is_file():
        return None
    found = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = parse_json(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and (rec.get("refs") or {}).get("run_id") == info.run_id:
            found = found or rec.get("text")
    return found


def context(workdir: Path, lang: str | None = None) -> dict:
    """Everything the page shows, as plain data (the template's context). Raises :class:`RefusedInput` when
    ``workdir`` is not a trial's workdir (neither a verdict nor a trial state)."""
    workdir = require_trial(workdir)
    info = read_trial(workdir)
    doc = info.verdict or {}
    conversation = conv_mod.build(workdir)
    files = [{"name": n, "href": _href(workdir, n), "what": what} for n, what in FILES if _href(workdir, n)]
    try:
        changes = parse_json((workdir / wf.SIDE_EFFECTS_LIST_PATH).read_text(encoding="utf-8"))
        copied = changes.get("copied") or []
    except (OSError, ValueError, AttributeError):
        copied = []
    for rel in copied[:200]:
        href = _href(workdir, f"{wf.SIDE_EFFECTS_COPIES_PATH}/{rel}")
        if href:
            files.append({"name": f"{wf.SIDE_EFFECTS_COPIES_PATH}/{rel}", "href": href,
                          "what": "a copy of a file it made or changed"})
    return {
        "title": f"{info.overall or 'NO VERDICT'} · {info.target} · {info.run_id}",
        "overall": info.overall, "target": info.target, "run_id": info.run_id, "when": when_text(info.when),
        "duration": duration_text(info.duration_s), "origin": info.origin, "proof": bool(doc.get("proof")),
        "problem": info.problem, "summary": info.summary(lang) if info.verdict else None,
        "reasons": (doc.get("overall") or {}).get("reasons") or [], "next_step": next_step_line(info),
        "notes": doc.get("notes") or [], "warnings": doc.get("warnings") or [], "message": _message(workdir, info),
        "timeline": _timeline(workdir, doc), "evidence": _evidence(doc, workdir, conversation.uuids),
        "blockers": doc.get("goal_blockers") or [], "criteria": doc.get("criteria") or [],
        "gate_answers": _gate_answers(doc, workdir), "conversation": conversation, "pane": _pane(workdir),
        "files": files, "generated_at": utc_now(), "cost": cost_table(doc), "activity": activity_rows(doc),
        "case_run": case_link(workdir),
    }


@lru_cache(maxsize=1)
def _template():
    """``page.html.j2``, compiled once per process; its compiled form is kept in the harness's cache folder
    (``session.plugin_check.cache_dir``, jinja2's own bytecode cache, keyed by the template's source and the Python
    version), so a ``live-trial run`` process loads it instead of compiling it. No cache when that folder cannot be
    made: the page is the same, only compiled again."""
    import jinja2

    from live_trial.session.plugin_check import cache_dir

    folder = cache_dir(os.environ) / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        bytecode = jinja2.FileSystemBytecodeCache(str(folder)) if os.access(folder, os.W_OK) else None
    except OSError:
        bytecode = None
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             bytecode_cache=bytecode)
    return env.get_template("page.html.j2")


def render(workdir: Path, lang: str | None = None) -> str:
    """The page of the trial in ``workdir`` as HTML text (see :func:`context` for what raises)."""
    return _template().render(**context(workdir, lang))


def write_report(workdir: Path, lang: str | None = None) -> Path:
    """Write ``<workdir>/report.html`` (atomically, mode 0644) and return its path. Raises :class:`RefusedInput`
    when ``workdir`` is not a trial's workdir, OSError when it cannot be written."""
    html = render(workdir, lang)
    path = Path(workdir).resolve() / wf.REPORT
    write_text_atomic(path, html)
    os.chmod(path, REPORT_MODE)
    return path
