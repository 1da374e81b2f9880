"""The pytest API a skill author writes tests with (README "Testing a skill with pytest"), on the real CLI in real
tmux: the example file in examples/pytest passes under pytest-xdist with the report path in pytest's own JUnit;
a test whose trial does not give the verdict it expects fails with the verdict's summary, reasons and report path;
a live trial is skipped unless asked for; a refused trial fails with its one line."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from junitparser import JUnitXml, Properties

from .run_support import EXAMPLES, ROOT


def _pytest(*args: str, cwd: Path, timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


@pytest.mark.budget(55)
def test_the_example_file_passes_under_xdist_with_reports_in_junit(tmp_path: Path) -> None:
    junit = tmp_path / "pytest.xml"
    proc = _pytest("-q", "-n", "2", str(EXAMPLES / "pytest" / "test_hello_greet.py"), f"--junitxml={junit}",
                   "--basetemp", str(tmp_path / "base"), cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "3 passed" in proc.stdout
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    verdicts = {}
    for case in suite:
        props = {p.name: p.value for ps in case.iterchildren(Properties) for p in ps}
        assert Path(props["live_trial_report"]).is_file(), case.name
        verdicts[case.name] = props["live_trial_verdict"]
    assert verdicts == {"test_greet_writes_the_greeting": "PASS", "test_greet_passes_as_a_marked_test": "PASS",
                        "test_a_greeting_never_written_is_not_a_pass": "DEGRADED"}
    # each test its own eval-log (its tmp_path), each worker its own folders ("current" links skipped)
    workdirs = {wd.resolve() for wd in (tmp_path / "base").glob("*/*/eval-log/hello/greet/live-trial/*")}
    assert len(workdirs) == 3 and len({wd.parents[4] for wd in workdirs}) == 3
    assert {wd.parents[5].name for wd in workdirs} == {"popen-gw0", "popen-gw1"}


@pytest.mark.budget(30)
def test_a_trial_that_misses_fails_the_test_with_summary_and_report(tmp_path: Path) -> None:
    (tmp_path / "test_author.py").write_text(textwrap.dedent(f"""
        import pytest

        PLUGINS = {str(EXAMPLES / "plugins")!r}
        SCENARIOS = {str(EXAMPLES / "scenarios")!r}

        def test_expects_pass(live_trial_run):
            live_trial_run("hello:greet", scenario=SCENARIOS + "/greet-eval-fail.yaml", plugins_root=PLUGINS)

        def test_live_needs_the_option(live_trial_run):
            live_trial_run("hello:greet", plugins_root=PLUGINS)

        def test_refused(live_trial_run):
            live_trial_run("hello:nosuch", scenario=SCENARIOS + "/greet-happy.yaml", plugins_root=PLUGINS)
    """))
    proc = _pytest("-q", "-rs", str(tmp_path / "test_author.py"), "--basetemp", str(tmp_path / "base"),
                   cwd=tmp_path)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    assert "2 failed, 1 skipped" in out
    assert "live trial of hello:greet: DEGRADED: " in out
    assert "  reason: " in out and "greeting" in out.split("live trial of hello:greet: DEGRADED: ")[1]
    report_line = next(ln for ln in out.splitlines() if ln.strip().startswith("report: "))
    assert report_line.strip().endswith("/report.html") and Path(report_line.split("report: ")[1].strip()).is_file()
    assert "expected: PASS" in out
    assert "runs only with --live-trial-live" in out
    assert "live trial of hello:nosuch did not run: REFUSED: " in out


@pytest.mark.budget(25)
def test_a_suite_file_is_one_test_per_case(tmp_path: Path) -> None:
    """README "Testing a skill with pytest": ``pytest plugins/hello/live-trials.yaml`` collects each case of the
    example suite (plus one added here that fails its second attempt) as a test: a case without a scenario is skipped
    in rehearsal, the 3-repeat case, the activation case and the contractually answered question pass, the FLAKY one
    fails with its pass rate and attempts; pytest's JUnit has one testcase per case with its report and verdict."""
    import shutil

    from .run_support import SCENARIOS

    shutil.copytree(EXAMPLES / "plugins", tmp_path / "examples" / "plugins")       # the plugin carries its suite
    shutil.copy(SCENARIOS / "greet-flaky.yaml", tmp_path / "examples" / "plugins" / "hello" / "scenarios")
    suite = tmp_path / "examples" / "plugins" / "hello" / "live-trials.yaml"
    suite.write_text(suite.read_text().replace(
        "  greet-style:\n", "      - {name: wobbly, repeats: 2, scenario: scenarios/greet-flaky.yaml, "
                            "stall_limit: 30}\n  greet-style:\n"))
    junit = tmp_path / "pytest.xml"
    proc = _pytest("-q", "-rs", "-n", "2", str(suite), f"--junitxml={junit}", "--basetemp", str(tmp_path / "base"),
                   cwd=tmp_path)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:] + proc.stderr[-2000:]
    assert "1 failed, 3 passed, 1 skipped" in out, out[-3000:]
    assert "case happy has no scenario: it runs only with --live-trial-live" in out
    assert "hello:greet[wobbly]: FLAKY: greet" in out and "pass rate: 1 of 2 samples" in out
    assert "attempt 2: DEGRADED " in out
    cases = {c.name: {p.name: p.value for ps in c.iterchildren(Properties) for p in ps}
             for c in next(iter(JUnitXml.fromfile(str(junit))))}
    assert set(cases) == {"hello:greet[happy]", "hello:greet[ada]", "hello:greet[wobbly]", "hello:greet[natural]",
                          "hello:greet-style[casual]"}
    assert cases["hello:greet[natural]"]["live_trial_verdict"] == "PASS"            # the activation case
    assert Path(cases["hello:greet[natural]"]["live_trial_report"]).name == "report.html"
    assert cases["hello:greet[ada]"]["live_trial_verdict"] == "PASS"
    assert Path(cases["hello:greet[ada]"]["live_trial_report"]).is_file()         # the case run's page
    # each case's eval-log is in pytest's own temporary folders (removed after the last few runs), never left in /tmp
    assert Path(cases["hello:greet[ada]"]["live_trial_report"]).is_relative_to(tmp_path / "base")
    assert cases["hello:greet-style[casual]"]["live_trial_verdict"] == "PASS"
