"""What a person sees while ``run`` works: a live status line on a terminal, plain lines otherwise.

The trial core sends events (``workdir``, ``ready``, ``tick``, ``decision``); this module renders them.
On a TTY a rich live line shows state, elapsed time, time since the transcript last grew, the STALL
and HARD_CAP countdowns, the tool in progress, nudges and gate responses. Without a TTY only the
decisions and a tick line every 15 s are printed. With ``--json`` nothing is printed until the end, and rich is never
imported (a script running trials pays nothing for a terminal UI it does not show).
"""
from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:       # types only: rich is imported on first use
    from rich.console import Console
    from rich.live import Live

PLAIN_TICK_EVERY_S = 15.0
_COLOURS = {"PASS": "green", "DEGRADED": "yellow", "FAIL": "red", "BLOCKED": "magenta", "FLAKY": "yellow"}


def _fmt_s(value) -> str:
    if value is None:
        return "-"
    value = max(0, int(value))
    return f"{value // 60}m{value % 60:02d}s" if value >= 60 else f"{value}s"


def tick_line(data: dict) -> str:
    """One line describing a poll tick: state, elapsed, since growth, countdowns, tool, counts."""
    parts = [f"state {data.get('state') or 'starting'}",
             f"elapsed {_fmt_s(data.get('elapsed_s'))}",
             f"last growth {_fmt_s(data.get('since_progress_s'))} ago",
             f"STALL in {_fmt_s(data.get('stall_in_s'))}",
             f"HARD_CAP in {_fmt_s(data.get('hard_cap_in_s'))}"]
    if data.get("pending_tool"):
        parts.append(f"tool {data['pending_tool']}")
    if data.get("background"):
        parts.append(f"background {data['background']} running")
    parts.append(f"nudges {data.get('nudges', 0)}")
    parts.append(f"gate answers {data.get('gate_responses', 0)}")
    return " · ".join(parts)


class Progress:
    """Renders trial events. Call :meth:`event` for each, :meth:`close` when polling ends, :meth:`final` last."""

    def __init__(self, *, json_mode: bool = False, stream=None, prefix: str = "") -> None:
        self.json_mode = json_mode
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty() and not json_mode
        self.prefix = prefix
        self.live: Live | None = None
        self._console: Console | None = None
        self._last_plain = 0.0

    @classmethod
    def side_by_side(cls, *, json_mode: bool, prefix: str) -> "Progress":
        """One of several runs that print at once (a plan's trials, a case run's attempts, an activation run's
        sessions): plain lines carrying ``prefix``, never the live line a terminal would get."""
        one = cls(json_mode=json_mode, prefix=prefix)
        one.tty = False
        return one

    @property
    def console(self):
        """The rich console on :attr:`stream`, made (and rich imported) on first use."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False)
        return self._console

    @console.setter
    def console(self, value) -> None:
        self._console = value

    def _print(self, text: str) -> None:
        if self.json_mode:
            return
        if self.live is not None:
            self.live.console.print(self.prefix + text, markup=False)
        else:
            print(self.prefix + text, file=self.stream, flush=True)

    def event(self, kind: str, data: dict) -> None:
        """Render one event from the trial core."""
        if kind == "workdir":
            self._print(f"workdir: {data['path']}  session: {data['session']}")
        elif kind == "ready":
            self._print(f"READY: {data['session']} ({data['elapsed_s']:.1f}s)")
        elif kind == "decision":
            if data.get("decision") == "WARN":
                self._print(data.get("message", "WARN"))
            elif (data.get("step") in ("poll", "stall", "send", "nudge", "boot", "tools", "harness", "evaluate",
                                       "rehearsal", "cleanup", "watches", "launch", "folder")
                  or data.get("decision") in ("WARN",)):
                extra = {k: v for k, v in data.items() if k not in ("at", "step", "decision", "tail")}
                self._print(f"{data['step']}: {data['decision']} {json.dumps(extra, ensure_ascii=False)}"
                            if extra else f"{data['step']}: {data['decision']}")
        elif kind == "tick":
            line = tick_line(data)
            if self.tty:
                from rich.live import Live
                from rich.text import Text

                if self.live is None:
                    self.live = Live(Text(line), console=self.console, refresh_per_second=4, transient=True)
                    self.live.start()
                self.live.update(Text(line))
            elif not self.json_mode and time.monotonic() - self._last_plain >= PLAIN_TICK_EVERY_S:
                self._last_plain = time.monotonic()
                self._print(line)

    def close(self) -> None:
        """Stop the live line (safe to call twice)."""
        if self.live is not None:
            self.live.stop()
            self.live = None

    def final(self, outcome) -> None:
        """Print the outcome: one JSON object with --json, else a short panel in plain words."""
        if self.json_mode:
            print(json.dumps(outcome_json(outcome), ensure_ascii=False), file=self.stream)
            return
        from rich.panel import Panel
        from rich.text import Text

        colour = _COLOURS.get(outcome.overall, "white")
        body = Text()
        body.append(f"{outcome.overall}\n", style=f"bold {colour}")
        body.append(outcome.summary + "\n")
        for line in case_lines(outcome):        # a case run: its pass rate and every attempt's workdir
            body.append(line + "\n")
        if outcome.verdict_path:
            body.append(f"verdict: {outcome.verdict_path}\n")
        if getattr(outcome, "report", None):
            body.append(f"report: {outcome.report}\n")
        from live_trial.report.cost import usage_lines

        for line in ([] if hasattr(outcome, "attempts") or hasattr(outcome, "samples")
                     else usage_lines(outcome.verdict)):
            body.append(line + "\n")        # what it used and cost (README "What a trial costs")
        for warning in ((outcome.verdict or {}).get("warnings") or [])[:5]:
            body.append(f"WARN: {warning}\n", style="yellow")
        if outcome.notification:
            where = {"sent": "message sent", "failed": "message (webhook failed; sent again later)"}.get(
                getattr(outcome, "notification_delivery", None) or "",
                "message (kept in notifications.jsonl; no webhook set)")
            body.append(f"{where}: {outcome.notification}")
        self.console.print(Panel(body, title="live trial", expand=False))
        print(f"{outcome.overall}: {outcome.verdict_path or outcome.workdir}", file=self.stream, flush=True)


def case_lines(outcome) -> list[str]:
    """A case run's lines (references/suite-format.md "Repeats"): the pass rate, then one line per attempt with its
    verdict and workdir (a BLOCKED one marked as no sample); an activation run's: its measures and every prompt with
    each session (README "Does it start by itself?"); nothing for one trial."""
    if hasattr(outcome, "samples"):
        from live_trial.report.activation import ActivationInfo, activation_lines

        return activation_lines(ActivationInfo(outcome.folder, outcome.doc))[1:]
    doc = outcome.verdict if hasattr(outcome, "attempts") else None
    if not doc:
        return []
    rate = doc["pass_rate"]
    out = [f"pass rate: {rate['passed']} of {rate['samples']} samples passed ({doc['repeats']} asked; "
           f"{doc['blocked_retries']['used']} BLOCKED attempt(s) tried again)"]
    root = outcome.folder.parents[3] if len(outcome.folder.parents) >= 4 else None
    for a in doc["attempts"]:
        where = str(root / a["workdir"]) if root is not None and a["workdir"] else "(no workdir)"
        out.append(f"  attempt {a['n']}: {a['verdict']}{'' if a['sample'] else ' (not a sample)'}  {where}")
    return out


def outcome_json(outcome) -> dict:
    """The final ``--json`` object of ``run``; a case run's (``run --repeat``) adds ``pass_rate``, ``repeats`` and
    its ``attempts`` (``n``, ``verdict``, ``sample``, absolute ``workdir`` and ``report``); an activation run's adds
    ``kind`` (``activation``), ``precision``, ``recall``, ``confusion``, ``prompts`` (each with its ``runs``, their
    workdirs absolute) and ``acceptance``."""
    if hasattr(outcome, "samples"):
        from live_trial.report.activation import ActivationInfo

        root, doc = ActivationInfo(outcome.folder).eval_root, outcome.doc
        prompts = [{**p, "runs": [{**r, "workdir": str(root / r["workdir"]) if r["workdir"] else None}
                                  for r in p["runs"]]} for p in doc["prompts"]]
        return {"status": outcome.overall, "exit_code": outcome.exit_code, "workdir": str(outcome.folder),
                "verdict_path": str(outcome.path), "scenario_origin": outcome.scenario_origin, "stop_reason": None,
                "summary": outcome.summary, "notification": outcome.notification,
                "notification_delivery": outcome.notification_delivery,
                "report": str(outcome.report) if outcome.report else None, "usage": doc.get("usage"),
                "kind": "activation",
                "case": doc["case"], "precision": doc["precision"], "recall": doc["recall"],
                "confusion": doc["confusion"], "reasons": doc["reasons"], "prompts": prompts,
                "acceptance": doc.get("acceptance")}
    if hasattr(outcome, "attempts"):
        root = outcome.folder.parents[3]
        doc = outcome.verdict
        return {"status": outcome.overall, "exit_code": outcome.exit_code, "workdir": str(outcome.folder),
                "verdict_path": str(outcome.verdict_path), "scenario_origin": outcome.scenario_origin,
                "stop_reason": None, "summary": outcome.summary, "notification": outcome.notification,
                "notification_delivery": outcome.notification_delivery,
                "report": str(outcome.report) if outcome.report else None, "usage": doc.get("usage"),
                "case": doc["case"], "repeats": doc["repeats"], "pass_rate": doc["pass_rate"],
                "attempts": [{"n": a["n"], "verdict": a["verdict"], "sample": a["sample"],
                              "stop_reason": a["stop_reason"],
                              "workdir": str(root / a["workdir"]) if a["workdir"] else None,
                              "report": str(root / a["report"]) if a["report"] else None}
                             for a in doc["attempts"]]}
    return {"status": outcome.overall, "exit_code": outcome.exit_code,
            "workdir": str(outcome.workdir) if outcome.workdir else None,
            "verdict_path": str(outcome.verdict_path) if outcome.verdict_path else None,
            "scenario_origin": outcome.scenario_origin, "stop_reason": outcome.stop_reason,
            "summary": outcome.summary, "notification": outcome.notification,
            "notification_delivery": getattr(outcome, "notification_delivery", None),
            "report": str(outcome.report) if getattr(outcome, "report", None) else None,
            "usage": (getattr(outcome, "verdict", None) or {}).get("usage")}
