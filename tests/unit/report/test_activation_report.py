"""An activation run as a person and CI read it (README "Does it start by itself?"): its page has a table of its
prompts (the ones that went wrong first) with each session's outcome and step and links to its workdir; ``ls`` lists
it with precision and recall and each prompt's share, ``show`` prints the prompts and sessions; ``report`` writes the
page again; JUnit has one testcase with its measures as properties, the job summary its precision and recall."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from junitparser import JUnitXml, Properties

from live_trial.acceptance.activation import NOT_TRIGGERED, TRIGGERED, PromptSample, activation_doc, decide
from live_trial.acceptance.activation import write_activation
from live_trial.cli.main import main
from live_trial.report.activation import list_activation_runs, write_activation_report
from live_trial.report.github import step_summary
from live_trial.report.junit import junit_xml, trial_row

PROMPTS = [("Please write a file that welcomes Ada.", True, 1), ("What is 2 + 2?", False, 1),
           ("Welcome me in a style I pick.", True, 1)]


def make_run(tmp_path: Path) -> Path:
    eval_root = tmp_path / "eval"
    folder = eval_root / "hello" / "greet" / "live-trial-activation" / "20261206T000000-beef"
    wds = [folder / "prompts" / f"20261206T00000{n}-000{n}" for n in (1, 2, 3)]
    for wd in wds:
        wd.mkdir(parents=True)
    samples = [PromptSample(1, 1, TRIGGERED, "stopped_after_trigger", via="skill_call", step=0, workdir=wds[0]),
               PromptSample(2, 1, TRIGGERED, "stopped_after_trigger", via="skill_call", step=1,
                            after_tools=("Read",), workdir=wds[1]),
               PromptSample(3, 1, NOT_TRIGGERED, "gate", others=("hello:greet-style",), note="Which greeting style?",
                            workdir=wds[2])]
    got = decide(PROMPTS, samples)
    doc = activation_doc(got, samples, run_id=folder.name, target="hello:greet", plugin="hello", skill="greet",
                         case="natural", eval_root=eval_root, summary="did not start as it should for 2 of 3",
                         listing={"digest": "sha256:" + "0" * 64, "names": ["hello:greet", "hello:greet-style"],
                                  "entries": {"hello:greet": "Writes a greeting file <b>"}},
                         prompt_set="sha256:" + "1" * 64, skills_digest=None, stop_after_trigger=True,
                         retries=(0, 2), stopped=None, origin="rehearsal", scenario=None, claude_version="2.1.332",
                         started_at="2026-12-06T00:00:00Z", written_at="2026-12-06T00:00:09Z")
    write_activation(folder, doc)
    return folder


def test_the_page_lists_the_prompts_that_went_wrong_first_with_each_sessions_outcome(tmp_path: Path):
    folder = make_run(tmp_path)
    page = write_activation_report(folder).read_text()
    assert page.index("What is 2 + 2?") < page.index("Welcome me in a style") < page.index("welcomes Ada")
    assert "hello:greet-style" in page and "Which greeting style?" in page and "&lt;b&gt;" in page
    assert 'id="precision">0.5<' in page and 'id="recall">0.5<' in page
    assert 'href="prompts/20261206T000002-0002"' in page
    assert "only a real model measures a description" in page.lower()
    assert "never an acceptance PASS" in page


def test_ls_show_and_report_read_the_activation_run(tmp_path: Path, capsys):
    folder = make_run(tmp_path)
    root = str(tmp_path / "eval")
    assert main(["ls", "--eval-root", root]) == 0
    out = capsys.readouterr().out
    assert f"activation hello:greet [natural]: FAIL, precision 0.5, recall 0.5 (tp 1, fn 1, fp 1, tn 0)  {folder}" in out
    assert "  prompt 2 (should not start it): wrong, started in 1 of 1" in out
    assert main(["ls", "--eval-root", root, "--json", "--verdict", "FAIL"]) == 0
    runs = json.loads(capsys.readouterr().out)["activation_runs"]
    assert [(r["verdict"], r["precision"]) for r in runs] == [("FAIL", 0.5)]
    assert main(["show", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("FAIL: hello:greet [natural]: did not start as it should")
    assert "  #1 not_triggered, hello:greet-style instead (gate)" in out
    assert "  #1 triggered at step 1 (stopped_after_trigger)" in out
    assert main(["report", str(folder)]) == 0 and (folder / "report.html").is_file()
    assert [r.label for r in list_activation_runs(tmp_path / "eval", skill="greet")] == ["hello:greet [natural]"]


def test_junit_and_the_job_summary_carry_the_measures(tmp_path: Path):
    folder = make_run(tmp_path)
    doc = json.loads((folder / "activation.json").read_text())
    outcome = SimpleNamespace(doc=doc, samples=[], overall="FAIL", summary=doc["summary"], path=folder /
                              "activation.json", folder=folder, report=None)
    row = trial_row("hello:greet [natural]", outcome, None)
    case = next(iter(next(iter(JUnitXml.fromstring(junit_xml([row]))))))
    props = {p.name: p.value for ps in case.iterchildren(Properties) for p in ps}
    assert props["live_trial.kind"] == "activation" and props["live_trial.recall"] == "0.5"
    assert props["live_trial.prompt.2"] == "wrong 1/1" and props["live_trial.confusion"] == "tp 1 fn 1 fp 1 tn 0"
    assert case.result[0].message == doc["summary"] and case.result[0].text.startswith('prompt 2 "What is 2 + 2?"')
    assert "❌ FAIL P 0.5 R 0.5" in step_summary([row])


def test_show_latest_shows_the_activation_run_written_after_the_last_trial(tmp_path: Path, capsys):
    """``show latest`` is the result written last, whatever its kind: an activation run that ended after a trial is
    the one shown, and a trial that ended after it is shown again."""
    import os

    trial = tmp_path / "eval" / "hello" / "greet" / "live-trial" / "20261207T000000-aaaa"
    trial.mkdir(parents=True)
    (trial / "trial-state.json").write_text("{}")
    os.utime(trial, (1, 1))                       # written long ago: its folder is its only time
    folder = make_run(tmp_path)
    assert main(["show", "latest", "--eval-root", str(tmp_path / "eval")]) == 0
    assert capsys.readouterr().out.startswith("FAIL: hello:greet [natural]: did not start as it should")
    later = (folder / "activation.json").stat().st_mtime + 60
    os.utime(trial, (later, later))              # the trial's folder changed after the activation run ended
    main(["show", "latest", "--eval-root", str(tmp_path / "eval")])
    out = capsys.readouterr()
    assert "[natural]" not in out.out and "20261207T000000-aaaa" in out.out + out.err


def test_what_the_sessions_cost_is_added_up_and_shown(tmp_path: Path, capsys):
    """README "What a trial costs": an activation run records what its sessions cost, added up, and show, its page
    and run --json carry it; a rehearsal's is $0 with its scripted tokens' list price beside it."""
    from live_trial.acceptance.case_verdict import summed_usage
    from live_trial.jsonfile import schema_errors

    folder = make_run(tmp_path)
    doc = json.loads((folder / "activation.json").read_text())
    assert "usage" not in doc                                   # no session recorded any: nothing claimed
    doc["usage"] = summed_usage([{"cost_usd": 0.01, "estimate_usd": 0.01, "billed": True},
                                 {"cost_usd": 0.02, "estimate_usd": 0.02, "billed": True}, None])
    assert schema_errors(doc, "activation.schema.json") == []
    write_activation(folder, doc)
    assert main(["show", str(folder)]) == 0
    assert "cost: $0.0300 over 3 sessions (API list price estimate)" in capsys.readouterr().out
    page = write_activation_report(folder).read_text()
    assert 'id="cost">cost: $0.0300 over 3 sessions' in page
    doc["usage"] = {"cost_usd": 0.0, "estimate_usd": 0.004, "billed": False}
    write_activation(folder, doc)
    assert main(["show", str(folder)]) == 0
    assert "cost: $0 over 3 sessions (a rehearsal: no real API was paid; its scripted tokens at list price: $0.0040" \
        in capsys.readouterr().out
