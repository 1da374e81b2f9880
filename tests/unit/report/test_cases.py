"""A case run as a person looks it up (references/suite-format.md "Repeats"): ``ls`` lists it with its pass rate and
every attempt's workdir and names the case run on each attempt's line; ``show`` of its folder gives the verdict, the
reasons and the attempts, ``show`` of an attempt names its case run; its page links each attempt's page, and each
attempt's page links back."""
from __future__ import annotations

import json
from pathlib import Path

from live_trial.acceptance.case_verdict import Attempt, CaseRun, case_doc, write_case_verdict
from live_trial.cli.main import main
from live_trial.report.cases import case_link, list_case_runs, write_case_report
from tests.unit.fakes import write_state


def make_case_run(tmp_path: Path, verdicts=("PASS", "DEGRADED", "PASS")) -> tuple[Path, list[Path]]:
    eval_root = tmp_path / "eval"
    folder = eval_root / "hello" / "greet" / "live-trial-cases" / "20261201T000000-cafe"
    attempts, wds = [], []
    for n, verdict in enumerate(verdicts, start=1):
        wd = eval_root / "hello" / "greet" / "live-trial" / f"20261201T00000{n}-000{n}"
        wd.mkdir(parents=True)
        write_state(wd, "hello", "greet", case_run=CaseRun(folder.name, folder, "ada", n, 3).to_doc())
        (wd / "report.html").write_text("<html></html>")
        attempts.append(Attempt(n, verdict, None, f"attempt {n} was {verdict}", workdir=wd, run_id=wd.name,
                                report=wd / "report.html", reason="goal not met" if verdict != "PASS" else None))
        wds.append(wd)
    doc = case_doc(CaseRun(folder.name, folder, "ada", 3, 3), target="hello:greet", plugin="hello", skill="greet",
                   attempts=attempts, retries_used=0, retries_max=2, stopped=None, summary="passed 2 of its 3 tries",
                   eval_root=eval_root, proof=False, started_at="2026-12-01T00:00:00.000Z",
                   written_at="2026-12-01T00:00:09.000Z")
    write_case_verdict(folder, doc)
    return folder, wds


def test_ls_lists_the_case_run_with_its_pass_rate_and_names_it_on_each_attempt(tmp_path, capsys):
    folder, wds = make_case_run(tmp_path)
    assert main(["ls", "--eval-root", str(tmp_path / "eval")]) == 0
    out = capsys.readouterr().out
    assert f"case run hello:greet [ada]: FLAKY, 2/3 passed of 3 asked  {folder}" in out
    assert f"  attempt 2: DEGRADED  {wds[1]}" in out
    assert "[attempt 2 of case ada, case run 20261201T000000-cafe]" in out
    assert main(["ls", "--eval-root", str(tmp_path / "eval"), "--verdict", "FLAKY", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["trials"] == [] and [c["verdict"] for c in doc["case_runs"]] == ["FLAKY"]
    assert [a["workdir"] for a in doc["case_runs"][0]["attempts"]] == [str(w) for w in wds]


def test_show_of_the_case_run_and_of_an_attempt(tmp_path, capsys):
    folder, wds = make_case_run(tmp_path)
    assert main(["show", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("FLAKY: hello:greet [ada]")
    assert "pass rate: 2 of 3 samples passed (3 asked; 0 of 2 retries of a BLOCKED attempt used)" in out
    assert f"  2: DEGRADED  {wds[1]}  attempt 2 was DEGRADED" in out
    assert main(["show", str(wds[1]), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["case_run"] == (f"attempt 2 of the case run {folder} (case ada, 3 asked): FLAKY, 2/3 passed")


def test_the_case_page_links_every_attempt_and_each_attempt_links_back(tmp_path):
    folder, wds = make_case_run(tmp_path)
    page = write_case_report(folder).read_text()
    for wd in wds:
        assert f'href="../../live-trial/{wd.name}/report.html"' in page
    assert 'id="rate">2/3 passed<' in page and "FLAKY" in page
    assert case_link(wds[0]) == {"href": "../../live-trial-cases/20261201T000000-cafe/report.html",
                                 "text": f"attempt 1 of the case run {folder} (case ada, 3 asked): FLAKY, 2/3 passed"}


def test_a_case_run_stopped_before_its_verdict_is_listed_with_what_is_wrong(tmp_path):
    stopped = tmp_path / "eval" / "hello" / "greet" / "live-trial-cases" / "20261201T000000-dead"
    stopped.mkdir(parents=True)
    (info,) = list_case_runs(tmp_path / "eval")
    assert info.doc is None and "stopped before its verdict" in info.problem


def test_report_writes_the_case_runs_page_again(tmp_path, capsys):
    folder, _ = make_case_run(tmp_path)
    assert main(["report", str(folder)]) == 0
    assert capsys.readouterr().out.strip() == f"WRITTEN: {folder / 'report.html'}"
    assert 'id="verdict">FLAKY<' in (folder / "report.html").read_text()
