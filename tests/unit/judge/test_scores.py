"""Grades and scores written in words or symbols are refused in any field of the evaluator's answer (seed 001 "goal verification"),
in English and Japanese; ordinary counted text is not."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.errors import RefusedInput
from live_trial.judge import answer as ea
from live_trial.judge.context import Context
from live_trial.judge.evidence import check_evidence, score_words

#: Each form the issue names, and its neighbours.
SCORES = [
    "quality 8 out of 10", "quality: 8/10", "overall 7/10.", "8/10 overall", "8 out of 10 for quality",  # n out of m
    "8/10", "(4/5)", "I would give it 9/10", "deserves an 8/10",                                       # bare marks
    "quality 8/10 because the layout is clean", "overall 7/10, and", "rated 4/5 stars", "grade 9 given",
    "B+ grade", "an A-grade result", "grade: A",                                                       # letter grades
    "85% complete", "85% done", "completeness: 85%", "85% confident",                                  # percentages
    "85%の完成度", "完成度は85%", "進捗85%", "８５％完了",                                                # ja percentages
    "品質: 8/10", "B評価", "10段階で8", "品質は8点", "8点をつけます",                                     # ja marks
    # the forms an audit found passing (each its own test)
    "85% completion", "85 percent complete", "eight out of ten", "nine out of ten", "★★★★☆", "★4", "星4つ",
    "達成率85%", "完成率85%", "8割完成", "85点", "earns a B+", "solid B+", "8 of 10 quality",
]

#: Counted text that must stay evidence: a false positive would refuse a good answer.
ORDINARY = [
    "wrote 3 of 4 files", "HTTP 404", "section B", "8/10 rows dated", "7 out of 10 tests passed",
    "quality checks: 8/10 passed", "100% of the files were written", "Plan B was used", "test 4/5 failed",
    "commit 3/10 of the series was pushed", "wrote 10/10 rows", "option A chosen", "grade-school.txt written",
    "3点のファイルを作成", "2行、10件中8件が日付つき", "the README has section A and section B",
    "overall 1 out of 1 Skill calls succeeded", "Completion: 3/4 tasks written", "grade 5 students were listed",
    "(4/5) rows dated", "the script marks 3 files as done", "rated 2 files for review",
    # counts beside the forms above stay counts
    "3 of 10 rows", "8 out of 10 files written", "eight out of ten files written", "ファイルは3点です",
    "8割のファイルに日付", "C++ code in 2 files", "A-B testing of 2 pages", "wrote 10 files, 100% of the list",
]


@pytest.mark.parametrize("text", SCORES)
def test_a_score_in_words_or_symbols_is_found(text: str) -> None:
    assert score_words(text), text


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_counted_text_is_no_score(text: str) -> None:
    assert score_words(text) == [], text


GOOD = {"claim": "the report holds the two rows", "source": "side-effects/files/report.csv", "quote": "a,1",
        "observed": "1 file with 2 rows"}


def _form_problems(answer: dict, workdir: Path) -> list[str]:
    ctx = Context(workdir=workdir, target="", description="", transcript_index=[], transcript_uuids=set())
    return ea.review(answer, ctx).form


@pytest.mark.parametrize("fields", [
    {"blockers": ["quality 8 out of 10"]}, {"unverified": ["85%の完成度"]},
    {"evidence": [{**GOOD, "observed": "1 file with 2 rows, B+ grade"}]},
    {"evidence": [{**GOOD, "claim": "85% complete"}]},
    {"checks": [{"id": "C1", "result": "pass", "evidence": "grade: A"}]},
    {"summary": "8/10"},                           # a field the schema does not name is read too
    {"notes": {"overall": ["品質: 8/10"]}},
])
def test_a_score_in_any_field_of_the_answer_is_refused(fields: dict, tmp_path: Path) -> None:
    answer = {"verdict": "PASS", "blockers": [], "evidence": [dict(GOOD)], "checks": [], "unverified": [], **fields}
    assert any("a score is not allowed" in p for p in _form_problems(answer, tmp_path))


def test_a_quote_is_checked_word_for_word_not_read_for_scores(tmp_path: Path) -> None:
    """A quote is the source's own line (README "Evidence"): "評価: ★★★★☆ 85点" in it is what the file says."""
    answer = {"verdict": "PASS", "blockers": [], "checks": [], "unverified": [],
              "evidence": [{**GOOD, "quote": "評価: ★★★★☆ 85点, 85% completion, earns a B+"}]}
    assert not [p for p in _form_problems(answer, tmp_path) if "score" in p]


def test_names_and_choices_are_not_read_for_scores(tmp_path: Path) -> None:
    answer = {"verdict": "PASS", "blockers": [], "checks": [{"id": "A", "result": "pass", "evidence": "1 row"}],
              "evidence": [{**GOOD, "source": "out/grade/8-10.csv"}], "unverified": []}
    assert not [p for p in _form_problems(answer, tmp_path) if "score" in p]


def test_verdict_evidence_refuses_a_grade_in_words() -> None:
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", "1 file written with 2 keys, B+ grade", None)
    assert exc.value.code == "proxy_evidence"
