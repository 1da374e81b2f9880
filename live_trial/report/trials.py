"""Past trials as a person looks them up: one trial's facts read from its workdir (:func:`read_trial`), every trial
under an eval root newest first (:func:`list_trials`), and the next step in the words of the command line
(:func:`next_step_line`).

A workdir is read, never changed. Its verdict is schema-checked (:func:`live_trial.acceptance.verdict.read_verdict`);
an old or broken workdir (no verdict yet, a verdict that does not fit its schema, unreadable JSON) is still listed,
with one line saying what is wrong (``problem``), and never raises.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from live_trial.acceptance.verdict import read_verdict
from live_trial.clock import epoch_or_none, iso_z, parse_run_id_time
from live_trial.errors import LiveTrialError, RefusedInput
from live_trial.notices import outcome
from live_trial.report.timeline import read_json_dict
from live_trial.workdir_files import TRIAL_STATE, VERDICT

RUN_ID_TIME = re.compile(r"^(\d{8}T\d{6})")

#: The next step in the words of the command line (``show``, the report): the keys of
#: :func:`live_trial.notices.outcome.next_step`; ``_question`` and ``_plain`` forms are used when a value is unknown.
CLI_STEPS = {
    "none": "nothing: it passed",
    "live": "run it live: the same command without --rehearsal (a proof also needs --proof --model <full id>)",
    "live_replay": "its model's answers came from a tape: record a live run again (the same command with --record in "
                   "place of --replay TAPE), or run it live without --replay",
    "live_scripted": "it ran live, yet a scripted model answered (the rehearsal server's message ids in the "
                     "transcript): point ANTHROPIC_BASE_URL at the model's service (or unset it), then run it again",
    "gate_answer": "add --gate-response '{option}' (the question: {question})",
    "gate_answer_question": "add --gate-response '<option label>' (or 'text:<answer>') for the question: {question}",
    "gate_answer_plain": "add --gate-response '<option label>' (or 'text:<answer>') once per question it asks",
    "gate_option": "give --gate-response one of the options the question showed ({options}) instead of '{answer}' "
                   "(the question: {question})",
    "gate_option_plain": "give --gate-response one of the options the question shows (an option label, or "
                         "'text:<answer>')",
    "stall_limit": "raise STALL_LIMIT above {seconds} s (it was silent that long), or make the silent step print "
                   "progress",
    "stall_limit_plain": "raise STALL_LIMIT (seconds) above the silent step's duration, or make it print progress",
    "hard_cap": "if it was still progressing, raise --hard-cap (run) or env HARD_CAP (poll) above {seconds} s",
    "hard_cap_plain": "if it was still progressing, raise --hard-cap (run) or env HARD_CAP (poll), in seconds",
    "budget": "if it needed more, raise --max-cost-usd above {usd} (README \"Budgets\")",
    "budget_plain": "if it needed more, raise --max-cost-usd (README \"Budgets\")",
    "install": "install {tool}: make setup (README \"Set-up\"), then run again",
    "setup": "start the pinned claude once by hand in the trial folder and finish what it shows (login, trust, "
             "onboarding), then run again (README \"Troubleshooting\")",
    "retry": "not the skill's fault: remove the cause in the reasons, then run the trial again",
    "error": "read the error in pane.txt (the last screen) and the reasons, remove its cause, run again",
    "marker": "make the skill write the completion marker named in task.md",
    "launch": "the session never called the skill: check its name and description (the transcript shows what ran)",
    "hidden": "the skill's frontmatter sets disable-model-invocation: true, so no Skill call can start it: remove it "
              "if the model should call the skill, or try it by typing /<plugin>:<skill> yourself",
    "plugin": "fix the plugin named in the reasons (its plugin.json, its dependencies; `claude plugin validate "
              "<plugin dir>` checks it), then run again",
    "expected_gate": "the skill went ahead without asking: make it stop at AskUserQuestion or ExitPlanMode first",
    "goal": "fix what the evaluator found (the reasons), then run again",
    "mcp_fixture": "start the stand-in's command by hand to see why it does not start, fix it or its --mcp-fixture / "
                   "mcp_fixtures command, then run again",
    "plugin_activity": "a hook or an MCP server of the plugin the skill depends on failed (the notes and the report's "
                       "\"Plugin activity\" name it and what it said): fix it, then run again",
    "records": "something the session started rewrote the trial's records after collect (the notes say which): "
               "make it end its processes and write only in its own folder",
    "gate_in_skill": "declare the question (external_mutation_guard, or AskUserQuestion/ExitPlanMode in "
                     "allowed-tools) and pass --gate-kind contractual, or make the skill go on without asking",
    "self_driven": "make the skill run to the end without stopping to ask (it needed nudges)",
    "proof": "a proof allows no gate answer, no nudge and no other model: see the reasons",
    "later": "not the skill's fault: the model's service was unavailable (the CLI gave up after its retries); run "
             "again later",
    "usage_limit": "not the skill's fault: the account's usage limit was reached; run again once it resets (or raise "
                   "it)",
    "login": "not the skill's fault: the model's service refused the credentials; log in again (claude /login) or "
             "check ANTHROPIC_API_KEY, then run again",
    "model": "check --model {model}: the model's service does not know it",
    "model_plain": "check --model: the model's service does not know the model asked for",
    "model_setup": "not the skill's fault: the model's service never answered the task (the notes quote its error); "
                   "check --model and the CLI's settings against what the service accepts, then run again",
    "look": "read the reasons and the report, fix the cause, run again",
    "replay": "the tape does not cover this run (replay-log.jsonl names the turn and the first difference): if the "
              "skill was meant to change, record it again with run --record, then replay the new tape",
    "marker_guard": "a hook of the plugin refused the completion marker's Write: let it allow the path the session's "
                    "LIVE_TRIAL_MARKER names, then run again",
    "scenario": "the rehearsal scenario has no rule for the request the notes name: add one that answers it "
                "(references/scenario-format.md), then run again; `live-trial rehearsal check FILE` says whether a "
                "rule can answer a trial's first request and its evaluator's",
}


@dataclass
class TrialInfo:
    """One trial as ``ls`` and ``show`` present it. ``verdict``: the schema-valid verdict, or None with ``problem``
    saying what is wrong; ``when``: UTC ISO start; ``duration_s``: start to verdict; ``origin``: live or rehearsal."""

    workdir: Path
    plugin: str | None
    skill: str
    run_id: str
    verdict: dict | None = None
    problem: str | None = None
    state: dict = field(default_factory=dict)
    when: str | None = None
    duration_s: float | None = None
    origin: str | None = None

    @property
    def target(self) -> str:
        """``plugin:skill`` (the verdict's, else from the folder names)."""
        if self.verdict:
            return str(self.verdict.get("target"))
        return str(self.state.get("target") or (f"{self.plugin}:{self.skill}" if self.plugin else self.skill))

    @property
    def overall(self) -> str | None:
        """PASS, FAIL, DEGRADED or BLOCKED; None without a valid verdict."""
        return (self.verdict or {}).get("overall", {}).get("verdict") if self.verdict else None

    @property
    def reason(self) -> str:
        """The short why of a row: the stop reason, else the first reason of the verdict, else ``-``."""
        doc = self.verdict or {}
        reasons = (doc.get("overall") or {}).get("reasons") or []
        return str(doc.get("stop_reason") or (reasons[0] if reasons else "-"))

    def summary(self, lang: str | None = None) -> str:
        """The verdict's one-sentence summary; for a verdict written before summaries were kept, made now in
        ``lang`` (else LIVE_TRIAL_LANG, else ja); the problem for a trial without a valid verdict."""
        if not self.verdict:
            return self.problem or ""
        return str(self.verdict.get("summary") or outcome.summariser(lang)(self.verdict))

    def sort_key(self) -> tuple[float, str]:
        """``(start in epoch seconds, run id)``: the order of the trial list; a row without a readable start counts as
        0.0."""
        return (epoch_or_none(self.when) or 0.0, self.run_id)


def _run_id_time(run_id: str) -> str | None:
    m = RUN_ID_TIME.match(run_id)
    if not m:
        return None
    return iso_z(parse_run_id_time(m.group(1)), timespec="seconds")


def require_trial(workdir: Path) -> Path:
    """``workdir`` resolved when it is a trial's workdir (it holds a verdict or a trial state: a trial still running or
    killed has no verdict yet); else :class:`RefusedInput` (``bad_workdir``, exit 2) naming what to pass instead (an
    eval root, a skill's folder or any other folder is not a trial: ``show`` and ``report`` refuse it)."""
    workdir = Path(workdir).resolve()
    if not workdir.is_dir() or not any((workdir / n).is_file() for n in (VERDICT, TRIAL_STATE)):
        raise RefusedInput(f"not a trial's workdir (no {VERDICT} and no {TRIAL_STATE})", where=str(workdir),
                           code="bad_workdir",
                           fix="pass eval-log/<plugin>/<skill>/live-trial/<run-id> (see `live-trial ls`), or `latest`")
    return workdir


def read_trial(workdir: Path) -> TrialInfo:
    """The :class:`TrialInfo` of ``workdir`` (``<eval-root>/<plugin>/<skill>/live-trial/<run-id>``). Never raises:
    a missing verdict names the phase the trial reached (trial-state.json), a bad one says why it was refused."""
    workdir = Path(workdir)
    plugin = workdir.parents[2].name if len(workdir.parents) >= 3 else None
    skill = workdir.parents[1].name if len(workdir.parents) >= 2 else workdir.name
    info = TrialInfo(workdir=workdir, plugin=None if plugin == "_plain" else plugin, skill=skill, run_id=workdir.name)
    info.state = read_json_dict(workdir / TRIAL_STATE) or {}
    path = workdir / VERDICT
    if path.is_file():
        try:
            info.verdict = read_verdict(path)
        except LiveTrialError as exc:
            info.problem = f"{VERDICT} was refused: {exc.problem.replace(str(path), VERDICT)}"
        except OSError as exc:
            info.problem = f"{VERDICT} cannot be read: {exc}"
    elif info.state:
        phase = info.state.get("phase") or "unknown"
        info.problem = (f"no {VERDICT} yet: the trial stopped or is still running (phase {phase}); "
                        f"`live-trial run --resume {workdir}` finishes it")
    else:
        info.problem = f"no {VERDICT} and no {TRIAL_STATE}: not a finished trial"
    doc = info.verdict or {}
    info.when = doc.get("started_at") or info.state.get("started_at") or _run_id_time(info.run_id)
    start, end = epoch_or_none(info.when), epoch_or_none(doc.get("written_at"))
    info.duration_s = round(end - start, 1) if start is not None and end is not None else None
    info.origin = doc.get("scenario_origin") or (("rehearsal" if info.state.get("rehearsal") else "live")
                                                 if info.state else None)
    return info


def trial_dirs(eval_root: Path) -> list[Path]:
    """Every workdir under ``eval_root`` (``<plugin>/<skill>/live-trial/<run-id>/``), in no particular order."""
    return [p for p in Path(eval_root).glob("*/*/live-trial/*") if p.is_dir()]


def list_trials(eval_root: Path, *, skill: str | None = None, verdict: str | None = None) -> list[TrialInfo]:
    """The trials under ``eval_root``, newest first. ``skill``: keep those whose skill or ``plugin:skill`` is it;
    ``verdict``: keep those with that overall verdict (case-insensitive; ``none`` keeps those without a valid
    verdict). Raises :class:`RefusedInput` when ``eval_root`` is not a folder."""
    root = Path(eval_root)
    if not root.is_dir():
        raise RefusedInput("the eval root is not a folder", where=str(root), code="not_found",
                           fix="pass --eval-root the folder trials were written to (default ./eval-log)")
    rows = [read_trial(p) for p in trial_dirs(root)]
    if skill:
        rows = [r for r in rows if skill in (r.skill, r.target)]
    if verdict:
        wanted = verdict.upper()
        rows = [r for r in rows if (r.overall or "NONE") == wanted]
    return sorted(rows, key=TrialInfo.sort_key, reverse=True)


def next_step_line(info: TrialInfo) -> str:
    """The next step for ``info`` in the words of the command line (flags and settings; :data:`CLI_STEPS`)."""
    if not info.verdict:
        return "finish or look at the trial: " + (info.problem or "")
    step = outcome.next_step(info.verdict, outcome.seen_in_workdir(info.workdir))
    values = {k: v for k, v in step.params.items() if v not in (None, "")}
    for key in (step.key, step.key + "_question", step.key + "_plain"):
        template = CLI_STEPS.get(key)
        if template and set(re.findall(r"{(\w+)}", template)) <= set(values):
            return template.format(**values)
    return CLI_STEPS["look"]


def duration_text(seconds: float | None) -> str:
    """``4m05s`` / ``12.3s`` / ``-``."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, sec = divmod(int(round(seconds)), 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m{sec:02d}s"


def when_text(iso: str | None) -> str:
    """``2026-12-01 09:42:37Z`` from a UTC ISO time; ``-`` when unknown."""
    return iso[:19].replace("T", " ") + "Z" if iso else "-"
