"""Grades and scores written in words or symbols (seed 001 "goal verification": the evaluator's
judgement is PASS or FAIL with counted evidence, never a score): :data:`MERIT_FORMS`, the part of the score pattern of
:func:`live_trial.judge.evidence.score_words` that reads ratios, letter grades, percentages of completeness, scales and
marks in English and Japanese. Each form is anchored on a word of merit (quality, overall, grade, 完成度, 評価, 点 as a
mark ...) or stands alone as a mark, so a count stays a count: "wrote 3 of 4 files", "8/10 rows dated", "HTTP 404",
"section B", "3点のファイル" and "100% of the files" are no score. Text is NFKC-normalised before it is matched
(``８５％`` reads as ``85%``); the pattern is compiled case-insensitive, grade letters upper case only.
"""
from __future__ import annotations

#: After a value: a noun that is not a word of judgement makes the value a count of things ("overall 1 out of 1 Skill
#: calls succeeded", "Completion: 3/4 tasks written", "(4/5) rows", "grade 5 students").
COUNTED = (r"(?!\s*(?!(?:for|on|in|overall|quality|completeness|because|since|as|and|but|so|though|although|given|"
           r"points?|pts|marks?|stars?|score|rating|grade)\b)[^\W\d_])")
#: A ratio: ``8/10``, ``8 out of 10`` (``3 of 4`` is a count, never a ratio here).
_RATIO = r"\d+(?:\.\d+)?\s*(?:/|\bout\s+of\b)\s*\d+(?:\.\d+)?"
#: Words that make the value right after them a judgement of merit (quality 8/10, overall 8 out of 10, 品質: 8/10).
_MERIT = (r"(?:\bquality|\boverall|\bcompleteness|\bcompletion|\bgive\s+it|\bgave\s+it|\brate\s+it|\bdeserves?"
          r"(?:\s+an?)?|品質|完成度|達成度|出来(?:栄え)?|総合)")
#: Grades and scores written in words or symbols (seed 001 "goal verification"), each anchored on a word of merit so a
#: count stays
#: a count: a ratio right after such a word ("quality 8 out of 10", "品質: 8/10") or followed by one ("8/10 overall",
#: "8 out of 10 for quality"); a ratio of 5, 10 or 100 standing alone as the field or in brackets ("8/10", "(4/5)");
#: a letter grade before the word grade ("B+ grade", "an A-grade") or after 評価/判定 ("B評価", "A判定"); a
#: percentage of completeness ("85% complete", "85% done", "completeness: 85%", "85%の完成度", "完成度は85%",
#: "進捗85%") or of quality or confidence ("85% quality", "85% confident"); a scale ("10段階で8", "5段階評価の4"); and
#: 点 given as a mark ("品質は8点", "8点をつけ", "8点と評価"; "3点のファイル" is a count of items).
#: "wrote 3 of 4 files", "8/10 rows dated", "HTTP 404", "section B" and "100% of the files" are no score.
MERIT_FORMS = (
    _MERIT + r"\s*(?:[:=：]|\bis\b|\bwas\b|\bof\b|\bat\b|は|が|-)?\s*(?:about\s+|around\s+|約)?" + _RATIO + COUNTED
    + r"|" + _RATIO + r"\s*(?:\bfor\s+|\bon\s+|\bin\s+)?(?:\boverall\b|\bquality\b|\bcompleteness\b)"
    + r"|^\s*\(?\s*\d+(?:\.\d+)?\s*(?:/|\bout\s+of\b)\s*(?:5|10|100)\s*\)?\s*\.?\s*$"
    + r"|\(\s*\d+(?:\.\d+)?\s*(?:/|\bout\s+of\b)\s*(?:5|10|100)\s*\)" + COUNTED
    + r"|(?<![\w])(?-i:[A-F][+-]?)\s*-?\s*grade\b|(?-i:[A-F][+-]?)\s*(?:評価|判定|ランク)"
    + r"|\d+(?:\.\d+)?\s*%\s*(?:\bcomplete(?:d|ness)?\b|\bdone\b|\bfinished\b|\bquality\b|\bconfiden(?:t|ce)\b"
    r"|の?\s*(?:完成度|達成度|完成|完了|出来|品質|進捗))"
    + r"|(?:\bcomplete(?:d|ness)?|\bcompletion|\bdone|\bquality|完成度|達成度|進捗(?:率)?|品質)\s*"
    r"(?:[:=：]|\bis\b|\bat\b|\bof\b|は|が)?\s*(?:about\s+|around\s+|約)?\d+(?:\.\d+)?\s*(?:%|パーセント)"
    + r"|\d+\s*段階(?:評価)?\s*(?:で|の|中)\s*\d"
    + r"|(?:品質|出来|完成度|総合)\s*(?:[:：]|は|が)?\s*\d+(?:\.\d+)?\s*点"
    + r"|\d+(?:\.\d+)?\s*点\s*(?:を\s*(?:つけ|付け|与え)|と\s*評価|の\s*評価|の\s*出来)")
