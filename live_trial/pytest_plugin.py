"""pytest fixtures of live_trial, loaded by the ``pytest11`` entry point (``live_trial = live_trial.pytest_plugin``).

For skill authors (README "Testing a skill with pytest"): ``live_trial_run`` runs a whole trial of a skill and
returns its verdict, failing the test with the verdict's summary and the report's path; ``@pytest.mark.live_trial``
does the same before a test body. A trial is a rehearsal (scripted model) unless ``--live-trial-live`` (or
``LIVE_TRIAL_LIVE=1``) is given. For lower-level tests: a rehearsal server, an isolated claude configuration and a
synthetic transcript builder. Fixtures here hold no production logic: a trial is the real ``live-trial run``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

LIVE_OPTION = "--live-trial-live"
LIVE_ENV = "LIVE_TRIAL_LIVE"

# ---------------------------------------------------------------- a whole trial as a test


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--live-trial-live``: trials of ``live_trial_run`` and ``@pytest.mark.live_trial`` talk to the real model
    (rehearsal otherwise); ``--live-trial-eval-root DIR``: keep their workdirs there (default: the test's tmp_path)."""
    group = parser.getgroup("live_trial")
    group.addoption(LIVE_OPTION, action="store_true", default=False,
                    help="run live_trial trials against the real model (default: rehearsal with the given scenario)")
    group.addoption("--live-trial-eval-root", default=None, metavar="DIR",
                    help="where live_trial trials of the tests keep their workdirs (default: each test's tmp_path)")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``live_trial`` marker, so ``--strict-markers`` accepts it and ``pytest --markers`` lists it."""
    config.addinivalue_line("markers", "live_trial(target, scenario=None, args='', plugins_root=None, expect='PASS', "
                                       "**options): run a trial of target before the test (see live_trial_run); "
                                       "the result is the live_trial_verdict fixture")


@dataclass
class TrialVerdict:
    """What one trial of ``live_trial_run`` gave: ``overall`` (PASS|FAIL|DEGRADED|BLOCKED), ``summary`` (one
    sentence), ``reasons`` (``overall.reasons``), ``report`` (report.html), ``workdir``, ``verdict_path``,
    ``exit_code`` of ``live-trial run``, ``live`` (False for a rehearsal) and ``doc`` (the whole verdict.json)."""

    target: str
    overall: str
    summary: str
    reasons: list[str] = field(default_factory=list)
    report: Path | None = None
    workdir: Path | None = None
    verdict_path: Path | None = None
    exit_code: int = 0
    live: bool = False
    doc: dict[str, Any] = field(default_factory=dict)

    def explain(self) -> str:
        """The failure text of a test: the verdict, its summary, its reasons and where the report is."""
        lines = [f"live trial of {self.target}: {self.overall}: {self.summary}"]
        lines += [f"  reason: {r}" for r in self.reasons]
        lines.append(f"  report: {self.report or self.workdir}")
        return "\n".join(lines)


def _worker_socket() -> str:
    """A tmux socket per test process (``LIVE_TRIAL_SOCKET`` when set): xdist workers never share a server."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return os.environ.get("LIVE_TRIAL_SOCKET") or f"lt-pytest-{worker}-{os.getpid()}"


def _trial_argv(target: str, *, live: bool, scenario: Path | None, args: str, plugins_root: Path | None,
                eval_root: Path, cwd: Path | None, stall_limit: float | None, hard_cap: float | None,
                model: str | None, extra: tuple[str, ...], repeats: int | None = None) -> list[str]:
    argv = [sys.executable, "-m", "live_trial", "run", target, "--json", "--eval-root", str(eval_root),
            "--socket", _worker_socket(), "--args", args]
    for flag, value in (("--plugins-root", plugins_root), ("--cwd", cwd), ("--stall-limit", stall_limit),
                        ("--hard-cap", hard_cap), ("--model", model), ("--repeat", repeats)):
        if value is not None:
            argv += [flag, str(value)]
    if not live:
        argv += ["--rehearsal", str(scenario)]
    return argv + list(extra)


@pytest.fixture
def live_trial_run(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., TrialVerdict]:
    """Factory fixture: ``live_trial_run(target, scenario=None, args="", plugins_root=None, cwd=None,
    expect="PASS", stall_limit=None, hard_cap=None, model=None, extra=(), repeats=None) -> TrialVerdict``.

    Runs ``live-trial run TARGET --json`` (the real command: real claude, real tmux) and returns the verdict. A
    rehearsal plays ``scenario`` (a YAML path); with ``--live-trial-live`` (or ``LIVE_TRIAL_LIVE=1``) the trial is
    live and ``scenario`` is ignored; without either a call with no scenario is skipped. The test fails (with the
    verdict's summary, reasons and the report's path) when the verdict is not ``expect`` (``expect=None``: never),
    or when the trial was refused before it started. Each call gets its own workdir under the eval root (the test's
    ``tmp_path/eval-log`` unless ``--live-trial-eval-root``) and every test process its own tmux socket, so it is
    safe under pytest-xdist. The report path is recorded as the test's ``live_trial_report`` property (pytest's
    ``--junitxml`` writes it). Relative paths are taken from the test file's folder. Durations in seconds.
    ``repeats``: a case run of that many trials (``run --repeat``): the verdict is the case verdict (PASS only when
    all passed, FLAKY when some did not), its ``reasons`` one per attempt that did not pass, ``doc`` its
    case-verdict.json (``pass_rate``, ``attempts``).
    """
    config = request.config
    live = bool(config.getoption(LIVE_OPTION, default=False)) or os.environ.get(LIVE_ENV) == "1"
    root = config.getoption("--live-trial-eval-root", default=None)
    eval_root = Path(root).resolve() if root else tmp_path / "eval-log"
    here = Path(str(request.path)).parent

    def place(p: Any) -> Path | None:
        return None if p is None else (Path(p) if Path(p).is_absolute() else (here / p).resolve())

    def run(target: str, *, scenario: Any = None, args: str = "", plugins_root: Any = None, cwd: Any = None,
            expect: str | None = "PASS", stall_limit: float | None = None, hard_cap: float | None = None,
            model: str | None = None, extra: tuple[str, ...] = (), repeats: int | None = None) -> TrialVerdict:
        if not live and scenario is None:
            pytest.skip(f"a live trial of {target} runs only with {LIVE_OPTION} (or {LIVE_ENV}=1); "
                        "give scenario= to rehearse it")
        argv = _trial_argv(target, live=live, scenario=place(scenario), args=args, plugins_root=place(plugins_root),
                           eval_root=eval_root, cwd=place(cwd), stall_limit=stall_limit, hard_cap=hard_cap,
                           model=model, extra=tuple(extra), repeats=repeats)
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=here)
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip().startswith("{")]
        try:
            out = json.loads(lines[-1])
        except (IndexError, ValueError):
            pytest.fail(f"live trial of {target} gave no result (exit {proc.returncode}): "
                        f"{(proc.stderr or proc.stdout).strip()[-800:]}", pytrace=False)
        if not out.get("verdict_path"):
            pytest.fail(f"live trial of {target} did not run: {out.get('status')}: "
                        f"{out.get('message') or out.get('summary')}", pytrace=False)
        doc = json.loads(Path(out["verdict_path"]).read_text(encoding="utf-8"))
        case = "pass_rate" in doc          # a case run's case-verdict.json
        verdict = TrialVerdict(target=target, overall=doc["verdict"] if case else doc["overall"]["verdict"],
                               summary=out.get("summary") or "",
                               reasons=list(doc["reasons"] if case else doc["overall"].get("reasons") or []),
                               report=Path(out["report"]) if out.get("report") else None,
                               workdir=Path(out["workdir"]) if out.get("workdir") else None,
                               verdict_path=Path(out["verdict_path"]), exit_code=proc.returncode, live=live, doc=doc)
        request.node.user_properties.append(("live_trial_report", str(verdict.report or verdict.workdir)))
        request.node.user_properties.append(("live_trial_verdict", verdict.overall))
        if expect is not None and verdict.overall != expect:
            pytest.fail(verdict.explain() + f"\n  expected: {expect}", pytrace=False)
        return verdict

    return run


@pytest.fixture(autouse=True)
def _live_trial_marker(request: pytest.FixtureRequest) -> None:
    """Runs the trial of a ``@pytest.mark.live_trial(...)`` test before its body (the marker's arguments are those
    of ``live_trial_run``); nothing for other tests."""
    marker = request.node.get_closest_marker("live_trial")
    if marker is None:
        return
    run = request.getfixturevalue("live_trial_run")
    request.node.stash[_VERDICT] = run(*marker.args, **marker.kwargs)


_VERDICT = pytest.StashKey[TrialVerdict]()


@pytest.fixture
def live_trial_verdict(request: pytest.FixtureRequest) -> TrialVerdict:
    """The :class:`TrialVerdict` of the test's ``@pytest.mark.live_trial`` trial; an error for a test without it."""
    request.getfixturevalue("_live_trial_marker")
    if _VERDICT not in request.node.stash:
        raise pytest.UsageError("live_trial_verdict needs @pytest.mark.live_trial(target, scenario=...) on the test")
    verdict: TrialVerdict = request.node.stash[_VERDICT]
    return verdict

# ---------------------------------------------------------------- a suite file as tests


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect a plugin's ``live-trials.yaml`` (README "Testing a skill with pytest"): one test per case of its suite,
    ``plugin:skill[case]``, each running ``live-trial run TARGET --case NAME`` (its repeats, answers, bounds and
    criteria as the suite says). Only files of that exact name, under the paths pytest is given."""
    from live_trial.acceptance.suite import SUITE_FILE

    if file_path.name == SUITE_FILE:
        return LiveTrialSuite.from_parent(parent, path=file_path)
    return None


class LiveTrialSuite(pytest.File):
    """A ``live-trials.yaml`` as a pytest collector: one :class:`LiveTrialCase` per case, in file order. A bad file is
    one collection error with the file, line and key of each problem."""

    def collect(self) -> Iterator[pytest.Item]:
        """The cases of the suite, each a test item named ``plugin:skill[case]``."""
        from live_trial.acceptance.plan_inputs import plugin_name
        from live_trial.acceptance.suite import load_suite
        from live_trial.errors import RefusedInput

        try:
            suite = load_suite(self.path)
        except RefusedInput as exc:     # the file, line and key of each problem; never a traceback
            raise self.CollectError(f"{exc.message}; fix: {exc.fix}" if exc.fix else exc.message) from None
        plugin = plugin_name(self.path.parent)
        for key, cases in suite.cases.items():
            target = key if ":" in key else f"{plugin}:{key}"
            for case in cases:
                yield LiveTrialCase.from_parent(self, name=f"{target}[{case.name}]", target=target,
                                                case=case.name, scenario=case.scenario)


class LiveTrialCase(pytest.Item):
    """One case of a suite: passes when the case's verdict is PASS (a repeated case: all of its samples passed);
    fails with the verdict, its summary (with the pass rate), each reason and the report's path. Rehearsal by default;
    with ``--live-trial-live`` (``LIVE_TRIAL_LIVE=1``) against the real model, the case's scenario left out; a case
    with no scenario is skipped in rehearsal, with the reason."""

    def __init__(self, *, target: str, case: str, scenario: Path | None, **kw: Any) -> None:
        super().__init__(**kw)
        self.target, self.case, self.scenario = target, case, scenario

    def runtest(self) -> None:
        """Run ``live-trial run TARGET --case NAME --suite FILE --json`` and judge its verdict."""
        import tempfile

        live = bool(self.config.getoption(LIVE_OPTION, default=False)) or os.environ.get(LIVE_ENV) == "1"
        if not live and self.scenario is None:
            pytest.skip(f"case {self.case} has no scenario: it runs only with {LIVE_OPTION} (or {LIVE_ENV}=1)")
        root = self.config.getoption("--live-trial-eval-root", default=None)
        if root:
            eval_root = Path(root).resolve()
        else:       # pytest's own temporary folders: kept for the last runs, then removed, as tmp_path is
            factory = getattr(self.config, "_tmp_path_factory", None)
            base = factory.mktemp("live-trial-case") if factory is not None else \
                Path(tempfile.mkdtemp(prefix="live-trial-case-"))
            eval_root = base / "eval-log"
        argv = [sys.executable, "-m", "live_trial", "run", self.target, "--case", self.case, "--suite", str(self.path),
                "--plugins-root", str(self.path.parent.parent), "--eval-root", str(eval_root), "--socket",
                _worker_socket(), "--json", *(["--live"] if live else [])]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=self.path.parent)
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip().startswith("{")]
        try:
            out = json.loads(lines[-1])
        except (IndexError, ValueError):
            raise LiveTrialCaseFailed(f"{self.name} gave no result (exit {proc.returncode}): "
                                      f"{(proc.stderr or proc.stdout).strip()[-800:]}") from None
        self.user_properties.append(("live_trial_report", str(out.get("report") or out.get("workdir"))))
        self.user_properties.append(("live_trial_verdict", str(out.get("status"))))
        if out.get("status") != "PASS":
            rate = out.get("pass_rate")
            lines = [f"{self.name}: {out.get('status')}: {out.get('summary') or out.get('message')}"]
            if rate:
                lines.append(f"  pass rate: {rate['passed']} of {rate['samples']} samples")
                lines += [f"  attempt {a['n']}: {a['verdict']} {a['workdir']}" for a in out.get("attempts") or []]
            if out.get("kind") == "activation":     # README "Does it start by itself?": the prompts that went wrong
                lines.append(f"  precision {out.get('precision')}, recall {out.get('recall')}")
                lines += [f"  - {r}" for r in out.get("reasons") or []]
            lines.append(f"  report: {out.get('report') or out.get('workdir')}")
            raise LiveTrialCaseFailed("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The failure text: the verdict, its summary and where its report is (no traceback)."""
        if isinstance(excinfo.value, LiveTrialCaseFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the test is: the suite file and the case."""
        return self.path, None, f"live trial {self.name}"


class LiveTrialCaseFailed(Exception):
    """A suite case whose verdict was not PASS (its text is the failure shown)."""


# ---------------------------------------------------------------- the rehearsal server


@pytest.fixture
def rehearsal_server() -> Iterator[Callable[..., Any]]:
    """Factory fixture: ``rehearsal_server(scenario, **kw) -> RehearsalServer`` (already started).

    ``scenario`` is a YAML path, a dict in the scenario format, or a loaded ``Scenario``; ``kw`` go to
    :class:`live_trial.rehearsal.server.RehearsalServer` (``port``, ``dump_dir``). Every server started through
    the factory is stopped at teardown. A malformed scenario raises ``RefusedInput`` at the call.
    """
    from live_trial.rehearsal.server import RehearsalServer

    started: list[RehearsalServer] = []

    def factory(scenario: Any, **kw: Any) -> RehearsalServer:
        server = RehearsalServer(scenario, **kw).start()
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()


@pytest.fixture
def rehearsal_config(tmp_path: Path) -> Callable[..., Path]:
    """Factory fixture: ``rehearsal_config(*trusted_cwds, skip_bypass_dialog=False) -> Path``.

    A fresh ``CLAUDE_CONFIG_DIR`` under ``tmp_path`` seeded by :func:`live_trial.rehearsal.config.seed_config`
    (onboarding done, the rehearsal key approved, the given folders trusted). Combine with
    ``rehearsal_env(server.url, config_dir)``.
    """
    from live_trial.rehearsal.config import seed_config

    counter = [0]

    def factory(*trusted_cwds: Path, skip_bypass_dialog: bool = False) -> Path:
        counter[0] += 1
        return seed_config(tmp_path / f"claude-config-{counter[0]}", list(trusted_cwds),
                           skip_bypass_dialog=skip_bypass_dialog)

    return factory



# ---------------------------------------------------------------- synthetic transcripts


@pytest.fixture
def transcript_builder() -> Callable[..., Any]:
    """Factory fixture: ``transcript_builder(**kw) -> TranscriptBuilder`` (live_trial.transcript.builder)."""
    from live_trial.transcript.builder import TranscriptBuilder

    return TranscriptBuilder
