"""``self-test``: every offline check at once (no tmux, no claude, no network).

Runs the backend's name/denylist checks, the status classifier's synthetic cases, and checks that
every shipped schema is a valid draft 2020-12 schema and every reference file loads.
"""
from __future__ import annotations

import argparse
import json

from live_trial.errors import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``self-test`` subcommand."""
    p = sub.add_parser("self-test", help="run every offline self-check (exit 0 all passed, 1 a check failed)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_self_test)


def shipped_file_problems() -> list[str]:
    """What is wrong with the files the package ships: each schema (a valid JSON Schema), the references and
    catalogues (readable), the convergence policy (loads); one line per problem, empty when all hold."""
    from jsonschema import Draft202012Validator

    from live_trial.notices.catalogue import DEFAULT_LANG, LANGS
    from live_trial.policy import load_policy
    from live_trial.resources import load_schema, read_reference, resource_path

    problems = []
    folder = resource_path("schemas", "live-trial-verdict.schema.json").parent
    for path in sorted(folder.glob("*.schema.json")):
        try:
            Draft202012Validator.check_schema(load_schema(path.name))
        except Exception as exc:  # noqa: BLE001 - report every broken schema
            problems.append(f"schema {path.name}: {exc}".splitlines()[0])
    catalogues = [f"notifications.{lang}.json" for lang in dict.fromkeys((DEFAULT_LANG, *LANGS))]
    for name in ("task-template.md", "transcript-jsonl.md", "convergence-policy.json", *catalogues):
        try:
            read_reference(name)
        except FileNotFoundError as exc:
            problems.append(str(exc))
    try:
        load_policy({})
    except Exception as exc:  # noqa: BLE001
        problems.append(f"convergence policy: {exc}")
    return problems


def cmd_self_test(args) -> int:
    """``self-test``: every offline check (names, denylist, classifier cases, schemas); exit 0 all passed,
    1 a check failed."""
    import contextlib
    import io

    from live_trial.cli.boot_cmd import self_test as backend_self_test
    from live_trial.transcript.cases import self_test as status_self_test

    results = {}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        results["backend"] = backend_self_test() == 0
    status_failed = [name for name, problems in status_self_test() if problems]
    results["status"] = not status_failed
    resource_problems = shipped_file_problems()
    results["schemas_and_references"] = not resource_problems
    ok = all(results.values())
    if args.json:
        print(json.dumps({"status": "OK" if ok else "FAIL", "checks": results,
                          "status_failed": status_failed, "resource_problems": resource_problems}))
    else:
        print(f"SELF_TEST: {'OK' if ok else 'FAIL'} ({sum(results.values())}/{len(results)} groups)")
        for name, passed in results.items():
            print(f"  {name}: {'ok' if passed else 'FAILED'}")
        if not results["backend"]:
            print(buf.getvalue().rstrip())
        for item in status_failed + resource_problems:
            print(f"  - {item}")
    return ExitCode.OK if ok else ExitCode.FAIL
