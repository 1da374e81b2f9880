"""A suite case as a trial: ``run TARGET --case NAME [--suite FILE]`` runs one case with the options the suite gives
it (its args, answers, scenario, bounds, model, fixture folder, criteria, repeats), as ``run --plan`` runs each entry
of a plan (:func:`entry_request`, :func:`case_run`; README "Planning many skills", references/suite-format.md). The
pytest collector of ``live-trials.yaml`` runs each case this way.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from live_trial.errors import RefusedInput


def case_entry(args):
    """``(plan entry, case)`` of ``args.case`` of ``args.target``: from ``--suite FILE``, else the target plugin's
    ``live-trials.yaml``. Raises :class:`RefusedInput` (exit 2, nothing created) for an unknown target, no suite file,
    a bad one, a case it does not have (the message lists those it has), or a case that cannot run as written (a
    question with no answer, an ungrounded contractual answer)."""
    from live_trial.acceptance.case_plan import batch_entry, cannot_run
    from live_trial.acceptance.suite import SUITE_FILE, load_suite
    from live_trial.cli.targets import split_target
    from live_trial.closure.target import resolve_target

    target, plugins_root = split_target(args.target, args.plugins_root)
    found = resolve_target(target, plugins_root)
    path = Path(args.suite) if args.suite else (found.plugin_root or found.skill_dir) / SUITE_FILE
    if not path.is_file():
        raise RefusedInput("no suite file", where=f"--case {args.case}: {path}", code="bad_suite",
                           fix=f"write {SUITE_FILE} at the plugin's root, or pass --suite FILE "
                               "(references/suite-format.md)")
    suite = load_suite(path)
    cases = suite.cases_for(found.plugin_name or "", found.skill) or ()
    case = next((c for c in cases if c.name == args.case), None)
    if case is None and not cases:
        unknown = suite.unknown_keys([(found.plugin_name or "", found.skill)])
        named = f"; it names {', '.join(unknown)}, no skill here" if unknown else ""
        raise RefusedInput(f"the suite names no case of {found.qualified}{named}", where=str(path),
                           code="unknown_case", fix=f"add a case for {found.skill} to the suite, or fix the skill's "
                                                    "name in it (references/suite-format.md)")
    if case is None:
        names = ", ".join(c.name for c in cases)
        raise RefusedInput(f"the suite has no case {args.case!r} for {found.qualified} (its cases: {names})",
                           where=str(path), code="unknown_case", fix="pass --case with one of its names")
    held = cannot_run(case, found.frontmatter)
    if held is not None:
        raise RefusedInput(held[1], where=f"{path}: case {case.name}", code=held[0],
                           fix="write the case's answers in the suite (references/suite-format.md)")
    return batch_entry(found.qualified, plugins_root, bool(args.proof), case), case


def run_suite_case(args, policy, progress, stop) -> int:
    """Run ``args.case`` (:func:`case_entry`): a case run when it asks for ``repeats`` above 1 (``--repeat K``
    overrides), else one trial; with ``--live`` against the real model (the case's scenario left out). Print the
    outcome as ``run`` does and return its exit code."""
    from live_trial.cli.folder_args import folder_options
    from live_trial.cli.report_cmd import write_report_after_run
    from live_trial.trial.runner import Trial

    entry, case = case_entry(args)
    own = entry.get("replay") or entry.get("rehearsal")
    if own and args.rehearsal is not None and not args.live:
        # the case plays its own scenario or tape (its scenario_id holds it): another one given here would be dropped
        kind = "tape" if entry.get("replay") else "scenario"
        raise RefusedInput(f"the case {case.name!r} is played from its own {kind} ({own}), so --rehearsal would not "
                           "be used", where="run --case", code="bad_value",
                           fix="drop --rehearsal, or remove the case's scenario from the suite to play it from yours")
    if args.live:           # the real model: the case's scenario is for offline runs only
        entry.pop("rehearsal", None)
        if args.rehearsal is not None:
            raise RefusedInput("--live and --rehearsal contradict each other", where="run --case --live",
                               code="bad_value", fix="drop one of them")
    req = entry_request(entry, args, folder_options(args), args.eval_root or Path("eval-log"), policy)
    if case.activation:
        if args.repeat is not None:
            case = replace(case, repeats=args.repeat, prompts=tuple(replace(p, repeats=None) for p in case.prompts))
        outcome = activation_run(req, case, width=2 if args.max_concurrency is None else args.max_concurrency,
                                 json_mode=args.json, stop=stop)
        progress.final(outcome)
        return int(outcome.exit_code)
    repeats = args.repeat if args.repeat is not None else case.repeats
    if repeats > 1:
        args.repeat = repeats
        return run_repeated(req, args, progress, stop, case=case.name)
    outcome = Trial(req, on_event=progress.event, stop_event=stop).run()
    progress.close()
    outcome.report = write_report_after_run(outcome)
    progress.final(outcome)
    return int(outcome.exit_code)


def run_repeated(req, args, progress, stop, case: str = "default") -> int:
    """``run TARGET --repeat K`` (or a case asking for repeats): the case run (:func:`case_run`), then its one
    summary. Returns the case verdict's exit code (7 FLAKY)."""
    outcome = case_run(req, args.repeat, json_mode=args.json, stop=stop, case=case, prefix="attempt ")
    progress.final(outcome)
    return int(outcome.exit_code)


def case_run(req, repeats: int, *, json_mode: bool, stop, case: str, prefix: str):
    """A case run of ``repeats`` samples (references/suite-format.md "Repeats"): each attempt's lines carry
    ``[<prefix>n]``, each attempt's report.html is written as it ends, the case run's page and the attempts' pages
    again at the end. Returns its :class:`~live_trial.trial.repeats.CaseOutcome`. Shared by ``run`` and
    ``run --plan``."""
    from live_trial.cli.progress import Progress
    from live_trial.cli.report_cmd import keep_report, write_case_reports
    from live_trial.trial.repeats import run_case

    def sink(n: int):
        return Progress.side_by_side(json_mode=json_mode, prefix=f"[{prefix}{n}] ").event

    outcome = run_case(req, repeats, case=case, on_event=sink, stop_event=stop, after_attempt=keep_report)
    write_case_reports(outcome)
    return outcome


def activation_run(req, case, *, width: int, json_mode: bool, stop, prefix: str = ""):
    """An activation case (README "Does it start by itself?"): its prompts' sessions ``width`` at once, each
    session's lines carrying ``[<prefix>prompt n #r]``, then the run's page (and the acceptance trial's of
    ``then_acceptance``). Returns its :class:`~live_trial.trial.activation_runs.ActivationOutcome`. Shared by ``run
    --case`` and ``run --plan``."""
    from live_trial.cli.progress import Progress
    from live_trial.cli.report_cmd import keep_report, write_activation_report
    from live_trial.trial.activation_runs import run_activation

    if req.folder == "in_place":
        raise RefusedInput("an activation case runs a session per prompt, each in a folder of its own",
                           where="--in-place", code="in_place_with_concurrency",
                           fix="drop --in-place (a fresh folder each), or use --cwd DIR (a private copy each)")

    def sink(n: int, r: int):
        return Progress.side_by_side(json_mode=json_mode, prefix=f"[{prefix}prompt {n} #{r}] ").event

    outcome = run_activation(req, case, width=width, on_event=sink, stop_event=stop, after_acceptance=keep_report)
    write_activation_report(outcome)
    return outcome


def entry_request(entry: dict, args, folder: dict, eval_root: Path, policy):
    """The :class:`~live_trial.trial.facts.TrialRequest` of one plan entry (a suite case's options: the
    ``live_batches`` of schemas/plan.schema.json): the case's own args, model, scenario or tape, answers, bounds,
    criteria, stand-in MCP servers and fixture folder, else the command's (README "Planning many skills"). Shared by
    ``run --plan`` and ``run TARGET --case``."""
    from live_trial.trial.facts import TrialRequest

    answers = entry.get("answers") or []
    played = entry.get("replay") or entry.get("rehearsal")      # a case's tape, or its scenario
    return TrialRequest(target=entry["target"],
                        plugins_root=Path(entry.get("plugins_root") or args.plugins_root or "plugins"),
                        **case_folder(entry, folder), eval_root=eval_root, args=entry.get("args") or args.args,
                        model=entry.get("model") or args.model, proof=bool(entry.get("proof")) or args.proof,
                        rehearsal=Path(played) if played else args.rehearsal, replay=bool(entry.get("replay")),
                        gate_responses=[a["answer"] for a in answers], gate_response_kinds=[a["kind"] for a in answers],
                        expect_gate=bool(entry.get("expect_gate")), claude_bin=args.claude_bin, socket=args.socket,
                        lang=args.lang, policy=case_policy(policy, entry),
                        mcp_fixtures=list((entry.get("mcp_fixtures") or {}).items()),
                        criteria=[(str(c["id"]), str(c["text"])) for c in entry.get("criteria") or ()])


def case_folder(entry: dict, folder: dict) -> dict:
    """The trial's folder options: a private copy of the case's fixture folder (suite ``cwd``) when it names one,
    else those of ``run --plan`` (README "Planning many skills")."""
    return {"folder": "copy", "source": Path(entry["cwd"])} if entry.get("cwd") else folder


def case_policy(policy, entry: dict):
    """The trial's bounds: the case's ``stall_limit_s`` / ``hard_cap_s`` over the policy's, and its ``max_cost_usd``
    passed through as the trial's budget (never above the plan's share of its budget)."""
    own = entry.get("max_cost_usd")
    budget = own if policy.max_cost_usd is None or own is None else min(own, policy.max_cost_usd)
    return policy.with_overrides(stall_limit_s=entry.get("stall_limit_s"), hard_cap_s=entry.get("hard_cap_s"),
                                 max_cost_usd=budget)
