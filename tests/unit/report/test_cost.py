"""What a trial cost, where a person looks (README "What a trial costs"): ls's column, show's lines, the JUnit
properties, the job summary's column and sum, and the message's sentence; a rehearsal costs 0, a model without a
price is named."""
from __future__ import annotations

from live_trial.notices.notify import cost_sentence
from live_trial.report.cost import cost_cell, cost_table, junit_properties, suite_cost, usage_lines
from live_trial.report.github import step_summary
from live_trial.report.junit import junit_xml
from live_trial.transcript.usage import Tokens, Usage, usage_doc

SESSION = Usage({"claude-sonnet-4-5": Tokens(1000, 100, 10000, 500, 2)})
EVALUATOR = Usage({"claude-opus-5-5": Tokens(7000, 700, 0, 0, 1)})
LIVE = {"usage": usage_doc(SESSION, EVALUATOR, 0.042, billed=True)}
REHEARSAL = {"usage": usage_doc(SESSION, EVALUATOR, 0.042, billed=False)}
UNPRICED = {"usage": usage_doc(Usage({"claude-unknown-9": Tokens(5, 5, responses=1)}), None, None, billed=True)}


def _row(target: str, status: str, verdict: dict | None) -> dict:
    return {"target": target, "status": status, "action": None, "summary": status, "reasons": [], "report": None,
            "verdict_path": None, "workdir": None, "skill_md": None, "duration_s": 1.0,
            "usage": (verdict or {}).get("usage")}


def test_ls_cell_and_show_lines() -> None:
    assert cost_cell(LIVE) == "$0.0514"           # 0.009375 sonnet + 0.042 as the evaluator's CLI reported
    assert cost_cell(REHEARSAL) == "$0 (rehearsal)" and cost_cell({}) == "-"
    assert cost_cell(UNPRICED) == "$0.0000 + no price for claude-unknown-9"
    lines = usage_lines(REHEARSAL)
    assert lines[0].startswith("cost: $0 (a rehearsal") and "$0.0514, estimate only" in lines[0]
    assert any("session claude-sonnet-4-5: in 1,000 · out 100 · cache read 10,000 · cache write 500 (2 responses)"
               in line for line in lines)
    assert any("as its CLI reported it: $0.0420" in line for line in lines)
    assert cost_table(LIVE)["rows"][0]["in"] == "1,000" and usage_lines({}) == []


def test_junit_and_the_job_summary_carry_each_trials_cost_and_the_suites_sum() -> None:
    props = dict(junit_properties(LIVE))
    assert props["cost_usd"] == "0.051375" and props["tokens.session.in"] == "1000"
    assert props["tokens.evaluator.out"] == "700" and props["evaluator_cli_total_cost_usd"] == "0.042000"
    rows = [_row("p:a", "PASS", LIVE), _row("p:b", "FAIL", REHEARSAL), _row("p:c", "PASS", None)]
    xml = junit_xml(rows)
    assert '<property name="live_trial.cost_usd" value="0.051375"' in xml
    assert '<property name="live_trial.billed" value="false"' in xml
    assert suite_cost([LIVE, REHEARSAL, None])["trials"] == 2
    summary = step_summary(rows)
    assert "| skill | verdict | cost |" in summary and "| $0 (rehearsal) |" in summary
    assert "cost: $0.0514 over 2 trials (API list price estimate $0.1027)" in summary


def test_the_message_says_what_it_cost_in_plain_words() -> None:
    assert cost_sentence(LIVE["usage"], "en") == ("Using the AI cost about 0.05 US dollars (an estimate at the public "
                                                  "list price).")
    assert "no real AI was used" in cost_sentence(REHEARSAL["usage"], "en")
    assert "at least" in cost_sentence(UNPRICED["usage"], "en") and cost_sentence(None, "ja") == ""
    assert "米ドル" in cost_sentence(LIVE["usage"], "ja")


def test_report_html_shows_the_cost_of_the_trial_its_verdict_records(tmp_path) -> None:
    """report.html's "Cost" section, rendered from a verdict whose ``usage`` the harness computed from a transcript
    (:func:`live_trial.acceptance.verdict_facts.trial_usage`, as ``verdict`` and ``run`` do): its figures are the
    transcript's responses, each counted once, and the evaluator's reported cost."""
    import json
    import re

    from live_trial.acceptance.verdict_facts import trial_usage
    from live_trial.report import page
    from live_trial.transcript.builder import TranscriptBuilder
    from tests.unit.fakes import write_evaluation
    from tests.unit.report.test_report import make_workdir, verdict

    wd = make_workdir(tmp_path / "eval")
    b = TranscriptBuilder(model="claude-sonnet-4-5")
    b.prompt("run")
    use = b.tool_use("Write", {"file_path": "/tmp/a", "content": "a"}, text="writing")   # one response, two records
    b.tool_result(use, "ok")
    b.text("DONE: ok")
    b.write(wd / "transcript.jsonl")
    doc = write_evaluation(wd, "FAIL")
    doc["attempts"][0]["usage"] = {"by_model": {"claude-opus-5-5": {"input_tokens": 7000, "output_tokens": 700,
                                                                   "cache_read_input_tokens": 0,
                                                                   "cache_creation_input_tokens": 0}},
                                   "cli_total_cost_usd": 0.042}
    (wd / "evaluation.json").write_text(json.dumps(doc))
    usage = trial_usage(wd, billed=True)
    (wd / "verdict.json").write_text(json.dumps(verdict(usage=usage)))
    html = page.render(wd, "en")
    section = html.split("<h2>Cost</h2>", 1)[1].split("</section>", 1)[0]
    rows = [re.findall(r"<td>([^<]*)</td>", row) for row in re.findall(r"<tr><td>.*?</tr>", section)]
    # 2 responses of the session, 10 in and 5 out each (the Write's two records are one response)
    assert rows == [["session", "claude-sonnet-4-5", "2", "20", "10", "0", "0"],
                    ["evaluator", "claude-opus-5-5", "1", "7,000", "700", "0", "0"]], rows
    estimate = usage["estimate_usd"]
    assert abs(estimate - (20 * 3 + 10 * 15) / 1e6 - 0.042) < 1e-9, estimate      # sonnet's list price + the CLI's
    assert f"cost: ${estimate:.4f} (API list price estimate)" in section
    assert "The evaluator's cost as its CLI reported it: $0.0420" in section
    assert "Prices: https://" in section


def test_a_plans_cost_counts_an_activation_runs_sessions_as_sessions():
    """README "What a trial costs": a plan that ran an activation case adds what its sessions cost, and says how many
    sessions they were, never calling them trials."""
    from live_trial.report.cost import suite_line

    run = {"usage": {"cost_usd": 0.02, "estimate_usd": 0.02, "billed": True},
           "prompts": [{"runs": [{}, {}]}, {"runs": [{}, {}]}]}
    total = suite_cost([LIVE, REHEARSAL, None], [run, {"prompts": [{"runs": [{}]}]}])
    assert (total["trials"], total["activation_sessions"]) == (2, 4)
    assert suite_line(total).startswith("cost: $0.0714 over 2 trials and 4 activation sessions")
    assert "activation" not in suite_line(suite_cost([LIVE]))
