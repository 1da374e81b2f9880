"""``live-trial rehearsal serve|check|new|from-tape``: play a scenario to a claude you run by hand, validate a scenario,
write one for a skill, or write one from a tape of ``run --record``.

``serve`` prints ``SERVING: <url>``, the environment to export and a sample ``claude`` command, one line
per request received, and serves until Ctrl-C (exit 0). ``check`` prints ``OK: ...``, what it checked and a
``WARNING: ...`` line per first request no rule can answer (:mod:`live_trial.rehearsal.coverage`; exit 0), or the
one-line error of a malformed scenario (exit 2, via ``cli.main``). ``new PLUGIN:SKILL`` writes a scenario that plays
the skill (:mod:`live_trial.rehearsal.scaffold`) to ``-o FILE`` or stdout (exit 0; 2 refused: unknown skill, FILE
exists). ``from-tape TAPE`` writes the scenario of a tape (:mod:`live_trial.tape.scenario`) the same way.
"""
from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
import tempfile
import time
from pathlib import Path

from live_trial.errors import ExitCode


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``rehearsal`` command group (``serve``, ``check``, ``new``, ``from-tape``) to the top-level parser."""
    p = subparsers.add_parser("rehearsal", help="serve a scripted model (rehearsal scenario) by hand, or check one",
                              description="Rehearsal model server: a scripted Anthropic Messages API on 127.0.0.1.")
    sub = p.add_subparsers(dest="rehearsal_command", metavar="SUBCOMMAND", parser_class=type(p))
    serve = sub.add_parser("serve", help="serve <scenario.yaml> until Ctrl-C and print the env to export")
    serve.add_argument("scenario", type=Path, help="scenario YAML (see examples/scenarios/)")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: an ephemeral one)")
    serve.add_argument("--cwd", type=Path, default=None,
                       help="folder the CLI will run in (trusted in the config; default: .)")
    serve.add_argument("--config-dir", type=Path, default=None,
                       help="CLAUDE_CONFIG_DIR to seed (default: a new temporary folder)")
    serve.add_argument("--log", type=Path, default=None, help="write the request log (JSON lines) here at exit")
    serve.add_argument("--attempt", type=int, default=1, metavar="N",
                       help="play attempt N of a case run (rules with when: {attempt: N}; default 1)")
    serve.add_argument("--json", action="store_true", help="print one JSON object {url, env} instead of text")
    serve.set_defaults(func=cmd_serve)
    check = sub.add_parser("check", help="validate a scenario file (exit 2 with a one-line error when malformed) "
                                         "and say whether a rule can answer a trial's first request and its "
                                         "evaluator's")
    check.add_argument("scenario", type=Path)
    check.add_argument("--json", action="store_true")
    check.set_defaults(func=cmd_check)
    new = sub.add_parser("new", help="write a scenario that plays PLUGIN:SKILL: its Skill call, a Write of what its "
                                     "description promises, the marker, DONE, and an evaluator PASS citing the file",
                         description="Write a rehearsal scenario for a skill: the Skill call by the name the CLI "
                                     "needs, a Write of the file the description promises (a placeholder to edit), "
                                     "the completion marker, DONE, and an evaluator rule answering PASS with evidence "
                                     "citing the written file's copy. As written it runs to PASS with `run "
                                     "--rehearsal`. Exit 0 written, 2 refused.")
    new.add_argument("target", help="plugin:skill (plugin by its plugin.json name) or PLUGIN_DIR:skill")
    new.add_argument("--plugins-root", type=Path, default=None, help="folder holding the plugins (default ./plugins)")
    new.add_argument("--gate", action="store_true",
                     help="stop at a question (AskUserQuestion) first; run it with --gate-response \"Go on\"")
    new.add_argument("--no-marker", action="store_true", help="report DONE without writing the completion marker")
    new.add_argument("--activation", action="store_true",
                     help="an activation case instead (README \"Does it start by itself?\"): two prompts that should "
                          "start the skill and two that should not, each pasted alone, and a scenario answering them; "
                          "with --suite and --case the case is appended to the suite")
    new.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (refused when it exists; "
                                                                          "default: print it)")
    new.add_argument("--suite", type=Path, metavar="FILE",
                     help="also append a case playing the scenario to this suite file (live-trials.yaml; made when "
                          "missing; the rest of the file is kept as it is): needs --case")
    new.add_argument("--case", metavar="NAME", help="with --suite: the new case's name (refused when the skill has one "
                                                    "of that name); the scenario goes to -o FILE, else "
                                                    "scenarios/<skill>-<case>.yaml beside the suite")
    new.set_defaults(func=cmd_new)
    tape = sub.add_parser("from-tape", help="write a scenario from a tape of run --record: one rule per model turn",
                          description="Write a rehearsal scenario from a tape (the model-tape.jsonl of run --record): "
                                      "one rule per recorded model turn, answering as the recorded model did, so it "
                                      "plays to the same verdict with run --rehearsal. Exit 0 written, 2 refused.")
    tape.add_argument("tape", type=Path, help="a model-tape.jsonl written by run --record")
    tape.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (refused when it exists; "
                                                                           "default: print it)")
    tape.set_defaults(func=cmd_from_tape)
    p.set_defaults(func=lambda args: (p.print_help(), ExitCode.USAGE)[1])


def cmd_check(args: argparse.Namespace) -> int:
    """Load the scenario; print ``OK: <name>: N rules (...)``, ``checked: ...`` and a ``WARNING: ...`` line for each
    first request no rule can answer (``--json``: ``checked`` and ``warnings``). Malformed -> RefusedInput (exit
    2)."""
    from live_trial.rehearsal.coverage import CHECKED, gaps
    from live_trial.rehearsal.scenario import load_scenario

    scenario = load_scenario(args.scenario)
    warnings = gaps(scenario)
    if args.json:
        print(json.dumps({"status": "OK", "name": scenario.name, "rules": [r.id for r in scenario.rules],
                          "checked": CHECKED, "warnings": warnings}))
    else:
        print(f"OK: {scenario.name}: {len(scenario.rules)} rules ({', '.join(r.id for r in scenario.rules)})")
        print(f"checked: {CHECKED}")
        for warning in warnings:
            print(f"WARNING: {warning}")
    return ExitCode.OK


def cmd_new(args: argparse.Namespace) -> int:
    """Write (or print) the scenario of ``args.target``; checked by loading it before it is written."""
    from live_trial.cli.targets import split_target
    from live_trial.closure.target import resolve_target
    from live_trial.errors import RefusedInput
    from live_trial.jsonfile import write_text_atomic
    from live_trial.judge.answer import split_criteria
    from live_trial.rehearsal.scaffold import scenario_text
    from live_trial.rehearsal.scenario import load_scenario

    target, plugins_root = split_target(args.target, args.plugins_root)
    found = resolve_target(target, plugins_root)
    front = found.frontmatter or {}
    judged, _ = split_criteria(front)
    if args.activation and (args.gate or args.no_marker):
        raise RefusedInput("--activation writes prompts pasted alone: no task, so no question and no marker",
                           where="rehearsal new --activation", code="bad_value", fix="drop --gate / --no-marker")
    if args.activation:
        from live_trial.rehearsal.scaffold import activation_scenario_text

        text = activation_scenario_text(found.qualified, str(front.get("description") or ""))
    else:
        text = scenario_text(found.qualified, str(front.get("description") or ""), [c["id"] for c in judged],
                             gate=args.gate, no_marker=args.no_marker)
    load_scenario(yaml_doc(text))          # the scaffold always loads; a failure here is a harness bug
    if (args.suite is None) != (args.case is None):
        raise RefusedInput("--suite and --case go together", where="rehearsal new", code="bad_value",
                           fix="pass both: --suite live-trials.yaml --case NAME")
    if args.suite is not None:
        return _new_case(args, found, text)
    if args.output is None:
        sys.stdout.write(text)
        return ExitCode.OK
    if args.output.exists():
        raise RefusedInput("the scenario file exists", where=str(args.output), code="file_exists",
                           fix="pass another -o FILE, or remove it first")
    write_text_atomic(args.output, text)
    if args.activation:
        print(f"WRITTEN: {args.output} (plays an activation case of {found.qualified}: give it a case in the suite "
              "with these prompts, or write both with --suite FILE --case NAME)", file=sys.stderr)
        return ExitCode.OK
    answer = ' --gate-response "Go on"' if args.gate else ""
    root = f" --plugins-root {args.plugins_root}" if args.plugins_root is not None else ""     # the command as run
    print(f"WRITTEN: {args.output} (plays {found.qualified}; run it with live-trial run {found.qualified}{root} "
          f"--rehearsal {args.output}{answer})", file=sys.stderr)
    return ExitCode.OK


def cmd_from_tape(args: argparse.Namespace) -> int:
    """Write (or print) the scenario of a tape; checked by loading it before it is written (README "Replaying a real
    trial offline"). A bad tape or an existing FILE is refused (exit 2, nothing written)."""
    from live_trial.errors import RefusedInput
    from live_trial.jsonfile import write_text_atomic
    from live_trial.rehearsal.scenario import load_scenario
    from live_trial.tape.file import read_tape
    from live_trial.tape.scenario import scenario_text

    if args.output is not None and args.output.exists():
        raise RefusedInput("the scenario file exists", where=str(args.output), code="file_exists",
                           fix="pass another -o FILE, or remove it first")
    entries = read_tape(args.tape)
    text = scenario_text(entries, args.tape.parent.name or "from-tape", str(args.tape))
    scenario = load_scenario(yaml_doc(text))      # what it wrote always loads; a failure here is a harness bug
    if args.output is None:
        sys.stdout.write(text)
        return ExitCode.OK
    write_text_atomic(args.output, text)
    print(f"WRITTEN: {args.output} ({len(scenario.rules)} rules from {args.tape}; run it with live-trial run "
          f"<plugin:skill> --rehearsal {args.output})", file=sys.stderr)
    return ExitCode.OK


def _new_case(args: argparse.Namespace, found, text: str) -> int:
    """``rehearsal new --suite FILE --case NAME``: write the scenario (``-o``, else ``scenarios/<skill>-<case>.yaml``
    beside the suite) and append a case playing it to the suite (:func:`live_trial.acceptance.suite_edit.append_case`);
    refused with nothing written when the case name exists, the scenario file exists, or the suite would not load."""
    import os

    from live_trial.acceptance.suite_edit import append_case, appended
    from live_trial.acceptance.tier import contract_evidence
    from live_trial.errors import LiveTrialError, RefusedInput
    from live_trial.jsonfile import write_text_atomic

    suite = Path(args.suite)
    own = found.plugin_root is not None and suite.resolve().parent == Path(found.plugin_root).resolve()
    key = found.skill if own else found.qualified           # a plugin's own file names its skills bare
    output = args.output or suite.parent / "scenarios" / f"{found.skill}-{args.case}.yaml"
    case: dict = {"name": args.case, "scenario": Path(os.path.relpath(output.resolve(), suite.resolve().parent))
                  .as_posix()}
    if args.activation:
        from live_trial.rehearsal.scaffold import ACTIVATION_PROMPTS

        case = {"name": args.case, "kind": "activation",
                "prompts": [{"prompt": p, "should_trigger": s} for p, s in ACTIVATION_PROMPTS],
                "stop_after_trigger": True, "scenario": case["scenario"]}
    if args.gate:
        try:
            contract_evidence(found.frontmatter)
            kind = "contractual"
        except LiveTrialError:
            kind = "rescue"             # the skill does not declare its question: answering is a rescue
        case["answers"] = [{"answer": "Go on", "kind": kind}]
    appended(suite.read_text(encoding="utf-8") if suite.exists() else "", key, case, where=str(suite))  # name taken?
    if output.exists():
        raise RefusedInput("the scenario file exists", where=str(output), code="file_exists",
                           fix="pass another -o FILE or --case NAME, or remove it first")
    write_text_atomic(output, text)
    try:
        append_case(suite, key, case)
    except BaseException:
        output.unlink()                 # nothing written when the case is refused
        raise
    print(f"WRITTEN: {output} and the case {args.case} of {key} in {suite} (run it with live-trial run "
          f"{found.qualified} --case {args.case} --suite {suite})", file=sys.stderr)
    return ExitCode.OK


def yaml_doc(text: str) -> dict:
    """``text`` parsed as YAML (safe loader)."""
    import yaml

    return yaml.safe_load(text)


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C. Exit 0; a malformed scenario raises RefusedInput before anything is created."""
    from live_trial.errors import RefusedInput
    from live_trial.rehearsal.config import rehearsal_env, seed_config
    from live_trial.rehearsal.scenario import load_scenario
    from live_trial.rehearsal.server import RehearsalServer

    if args.attempt < 1:
        raise RefusedInput(f"--attempt must be 1 or more (got {args.attempt})", code="bad_value",
                           fix="the first trial of a case run is attempt 1")
    scenario = load_scenario(args.scenario)
    cwd = (args.cwd or Path.cwd()).resolve()
    config_dir = args.config_dir or Path(tempfile.mkdtemp(prefix="live-trial-rehearsal-config-"))
    if not (config_dir / ".claude.json").exists():      # a prepared trial's config is seeded already: keep it
        seed_config(config_dir, [cwd])
    server = RehearsalServer(scenario, port=args.port, attempt=args.attempt).start()

    def _on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _on_term)
    env = rehearsal_env(server.url, config_dir)
    try:
        if args.json:
            print(json.dumps({"status": "SERVING", "url": server.url, "env": env, "cwd": str(cwd)}), flush=True)
        else:
            print(f"SERVING: {server.url} scenario {scenario.name} ({len(scenario.rules)} rules); Ctrl-C stops")
            print("# paste into the shell that will run claude:")
            for key, value in env.items():
                print(f"export {key}={shlex.quote(value)}")
            print(f"# then, in {cwd}:")
            print("claude --setting-sources local --dangerously-skip-permissions --session-id $(python3 -c "
                  "'import uuid; print(uuid.uuid4())')  [--plugin-dir <plugin>]", flush=True)
        seen = 0
        while True:
            time.sleep(0.3)
            records = server.requests
            for r in records[seen:]:
                if not args.json:
                    kind = "side" if r["side_query"] else f"conv {r['conversation']} step {r['step']}"
                    rule = r["rule"] or ("-" if r["side_query"] else "NO RULE MATCHED")
                    print(f"{r['time']} {kind} tools={len(r['tools'])} msgs={r['message_count']} -> {rule}", flush=True)
            seen = len(records)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        if args.log:
            server.write_log(args.log)
    missed = sum(1 for r in server.requests if r["rule_missed"])
    # the config serve made holds the sessions' transcripts: kept for reading, and said so (never left unnamed)
    kept = f"; the config it made (the sessions' transcripts) is kept: {config_dir} (delete it when done)" \
        if args.config_dir is None else ""
    print(f"STOPPED: {len(server.requests)} requests, {missed} with no rule matched{kept}", file=sys.stderr)
    return ExitCode.OK
