"""CI outputs of ``run --plan`` (README "CI: JUnit, job summary, annotations"): the JUnit file read back with
junitparser has one testcase per skill with the outcome its verdict or plan action says; the job summary and the
workflow-command annotations say the same, escaped so a summary can never end or inject a command."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from junitparser import Error, Failure, JUnitXml, Properties, Skipped

from live_trial.report.github import annotations, append_step_summary, escape_data, escape_property, step_summary
from live_trial.report.junit import skip_row, trial_row, write_junit


def _outcome(overall: str, summary: str, reasons: list[str], tmp: Path) -> SimpleNamespace:
    wd = tmp / overall.lower()
    return SimpleNamespace(overall=overall, summary=summary, workdir=wd, verdict_path=wd / "verdict.json",
                           report=wd / "report.html",
                           verdict={"overall": {"verdict": overall, "reasons": reasons},
                                    "started_at": "2026-12-01T10:00:00Z", "written_at": "2026-12-01T10:00:42.5Z"})


def _props(case) -> dict[str, str]:
    return {p.name: p.value for props in case.iterchildren(Properties) for p in props}


def _rows(tmp: Path) -> list[dict]:
    skill_md = tmp / "plugins" / "p" / "skills" / "bad" / "SKILL.md"
    rows = [trial_row("p:ok", _outcome("PASS", "it greeted", [], tmp), None),
            trial_row("p:bad", _outcome("FAIL", "it never finished", ["hang: no progress", "second"], tmp), skill_md),
            trial_row("p:meh", _outcome("DEGRADED", "it needed a nudge", ["1 nudge"], tmp), None),
            trial_row("p:env", _outcome("BLOCKED", "tmux went away", ["tmux_gone"], tmp), None),
            trial_row("p:early", SimpleNamespace(status="BOOT_FAIL", message="plugin manifest broken"), None)]
    for action in ("reuse", "defer", "watching", "not_live", "refused"):
        rows.append(skip_row({"target": f"p:{action}", "action": action, "reason": f"because {action}",
                              "verdict": "p/reuse/live-trial/r1/verdict.json" if action == "reuse" else None}, tmp))
    return rows


def test_junit_counts_and_outcomes_per_skill(tmp_path: Path) -> None:
    out = tmp_path / "junit.xml"
    write_junit(out, _rows(tmp_path))
    xml = JUnitXml.fromfile(str(out))
    suite = next(iter(xml))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (10, 2, 2, 5)
    cases = {c.name: c for c in suite}
    assert set(cases) == {"p:ok", "p:bad", "p:meh", "p:env", "p:early", "p:reuse", "p:defer", "p:watching",
                          "p:not_live", "p:refused"}
    assert cases["p:ok"].is_passed
    (fail,) = cases["p:bad"].result
    assert isinstance(fail, Failure) and fail.message == "it never finished"
    assert fail.text == "hang: no progress\nsecond" and fail.type == "FAIL"
    assert isinstance(cases["p:meh"].result[0], Failure) and cases["p:meh"].result[0].type == "DEGRADED"
    assert isinstance(cases["p:env"].result[0], Error) and cases["p:env"].result[0].message == "tmux went away"
    assert isinstance(cases["p:early"].result[0], Error) and cases["p:early"].result[0].type == "BOOT_FAIL"
    for action in ("reuse", "defer", "watching", "not_live", "refused"):
        (skipped,) = cases[f"p:{action}"].result
        assert isinstance(skipped, Skipped) and f"because {action}" in skipped.message
    props = _props(cases["p:bad"])
    assert props["live_trial.report"] == str(tmp_path / "fail" / "report.html")
    assert cases["p:bad"].time == 42.5
    reuse_props = _props(cases["p:reuse"])
    assert reuse_props["live_trial.report"] == str(tmp_path / "p/reuse/live-trial/r1/report.html")


def test_junit_write_is_atomic_and_replaces(tmp_path: Path) -> None:
    out = tmp_path / "junit.xml"
    out.write_text("old")
    write_junit(out, _rows(tmp_path)[:1])
    assert JUnitXml.fromfile(str(out)).tests == 1
    assert [p.name for p in tmp_path.iterdir()] == ["junit.xml"]


def test_annotations_per_failing_skill_escaped(tmp_path: Path) -> None:
    rows = _rows(tmp_path)
    rows[1]["summary"] = "100% broken\nnext line"
    lines = annotations(rows, cwd=tmp_path)
    assert len(lines) == 3
    assert lines[0] == ("::error file=plugins/p/skills/bad/SKILL.md,title=p%3Abad FAIL::100%25 broken%0Anext line")
    assert lines[1].startswith("::error title=p%3Ameh DEGRADED::it needed a nudge")
    assert lines[2].startswith("::warning title=p%3Aenv BLOCKED::")
    assert all("\n" not in line for line in lines)


def test_escaping_rules() -> None:
    assert escape_data("a%b\r\nc::d") == "a%25b%0D%0Ac::d"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_step_summary_table_appended_only_when_set(tmp_path: Path) -> None:
    rows = _rows(tmp_path)
    rows[0]["summary"] = "a | pipe\nand a line"
    assert append_step_summary(rows, env={}) is None
    target = tmp_path / "summary.md"
    target.write_text("before\n")
    assert append_step_summary(rows, env={"GITHUB_STEP_SUMMARY": str(target)}) == target
    text = target.read_text()
    assert text.startswith("before\n")
    table = [ln for ln in text.splitlines() if ln.startswith("| p:")]
    assert len(table) == 10
    assert "a \\| pipe and a line" in table[0]
    assert "PASS" in table[0] and "FAIL" in table[1] and "⏭ reuse" in table[5]
    assert step_summary(rows).count("\n| ") == 11      # header + 10 skills


def test_a_junit_path_that_cannot_be_written_is_refused_before_any_trial(tmp_path: Path) -> None:
    import subprocess
    import sys

    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    for bad, needle in ((tmp_path / "no" / "such" / "j.xml", "the folder for the file does not exist"),
                        (tmp_path, "--junit names a folder")):
        before = sorted(p.name for p in tmp_path.iterdir())
        proc = subprocess.run([sys.executable, "-m", "live_trial", "run", "--plan", str(plan), "--junit", str(bad),
                               "--eval-root", str(tmp_path / "eval")], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("REFUSED: ") and needle in lines[0]
        assert sorted(p.name for p in tmp_path.iterdir()) == before


def _case_outcome(tmp: Path) -> SimpleNamespace:
    folder = tmp / "eval" / "p" / "rep" / "live-trial-cases" / "c1"
    doc = {"verdict": "FLAKY", "pass_rate": {"passed": 2, "samples": 3, "rate": 0.6667},
           "reasons": ["attempt 2: DEGRADED: goal not met"], "started_at": "2026-12-01T10:00:00Z",
           "written_at": "2026-12-01T10:01:00Z", "usage": {"cost_usd": 0.0, "estimate_usd": 0.3, "billed": False},
           "attempts": [{"n": n, "verdict": v, "workdir": f"p/rep/live-trial/r{n}", "sample": True}
                        for n, v in ((1, "PASS"), (2, "DEGRADED"), (3, "PASS"))]}
    return SimpleNamespace(overall="FLAKY", summary="rep passed 2 of its 3 tries", folder=folder, workdir=folder,
                           verdict_path=folder / "case-verdict.json", report=folder / "report.html", verdict=doc,
                           attempts=[object()] * 3)


def test_a_flaky_case_is_one_failing_testcase_with_its_pass_rate_and_every_attempt(tmp_path: Path) -> None:
    """references/suite-format.md "Repeats": one testcase per case, FLAKY a failure naming the pass rate, each
    attempt's workdir a property; the job summary and the annotations say FLAKY with the rate too."""
    row = trial_row("p:rep [three]", _case_outcome(tmp_path), None)
    out = tmp_path / "junit.xml"
    write_junit(out, [row, skip_row({"target": "p:rep", "case": "one", "action": "defer", "reason": "over budget"})])
    suite = next(iter(JUnitXml.fromfile(str(out))))
    cases = {c.name: c for c in suite}
    assert set(cases) == {"p:rep [three]", "p:rep [one]"}            # named by case
    (fail,) = cases["p:rep [three]"].result
    assert isinstance(fail, Failure) and fail.type == "FLAKY" and "2 of its 3" in fail.message
    props = _props(cases["p:rep [three]"])
    assert props["live_trial.pass_rate"] == "2/3"
    assert props["live_trial.attempt.2"] == f"DEGRADED {tmp_path / 'eval' / 'p/rep/live-trial/r2'}"
    assert not any(k.startswith("live_trial.tokens.") for k in props)
    assert "🔁 FLAKY 2/3" in step_summary([row])
    assert annotations([row])[0].startswith("::error title=p%3Arep [three] FLAKY::")
