"""Grades and scores written in words or symbols (seed 001 "goal verification": the evaluator's
judgement is PASS or FAIL with counted evidence, never a score): :data:`MERIT_FORMS`, the part of the score pattern of
:func:`live_trial.judge.evidence.score_words` that reads ratios, letter grades, percentages of completeness, scales and
marks in English and Japanese (also in words and symbols: "eight out of ten", "85 percent complete", "★★★★☆",
"星4つ", "達成率85%", "8割完成", "85点", "earns a B+"). Each form is anchored on a word of merit (quality, overall,
grade, 完成度, 評価, 点 as a mark ...) or stands alone as a mark, so a count stays a count: "wrote 3 of 4 files",
"3 of 10 rows", "8 out of 10 files written", "8/10 rows dated", "HTTP 404", "section B", "3点のファイル" and
"100% of the files" are no score. Text is NFKC-normalised before it is matched (``８５％`` reads as ``85%``); the
pattern is compiled case-insensitive, grade letters upper case only.
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
#: A percentage: ``85%``, ``85 percent``, ``85 per cent``, ``85パーセント``.
_PERCENT = r"\d+(?:\.\d+)?\s*(?:%|\bper\s*cent\b|パーセント)"
#: A ratio in words: ``eight out of ten``, ``nine out of a hundred``.
_WORD_RATIO = (r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten)\s+out\s+of\s+(?:a\s+)?"
               r"(?:five|ten|hundred)\b")
#: A letter grade given: a grade with a sign anywhere ("B+", "A-"; never "C++" or "A-B"), or a plain one a verb or an
#: adjective of merit gives ("earns a B+", "solid B+", "gets an A").
_GIVEN_GRADE = (r"(?<![\w+-])(?-i:[A-F][+-])(?![\w+-])"
                r"|\b(?:earns?|earned|gets?|got|receives?|received|deserves?|solid|strong|weak|decent)\s+(?:an?\s+)?"
                r"(?-i:[A-F][+-]?)(?![\w+-])")
#: Stars as a mark: two or more star glyphs ("★★★★☆"), a glyph with a number ("★4", "4★"), 星 with a number ("星4つ").
_STARS = r"[★☆✩✪⭐]{2,}|[★☆⭐]\s*\d|\d\s*[★☆⭐]|星\s*(?:[:：]\s*)?[\d一二三四五]\s*(?:つ|個)?"
#: 点 as a mark with no thing counted after it: a number of two digits or more ("85点", "85点です"), or any number when
#: it is the whole text ("8点"); "3点のファイル" counts files.
_MARK_POINTS = (r"(?<![\d.])(?:[1-9]\d+|\d+\.\d+)\s*点"
                r"(?=\s*(?:$|[。、,.!！?？)）]|です|でした|だ|くらい|ぐらい|程度|ほど))"
                r"|^\s*\d+(?:\.\d+)?\s*点\s*[。.]?\s*$")
MERIT_FORMS = (
    _MERIT + r"\s*(?:[:=：]|\bis\b|\bwas\b|\bof\b|\bat\b|は|が|-)?\s*(?:about\s+|around\s+|約)?" + _RATIO + COUNTED
    + r"|(?:" + _RATIO + r"|\d+\s+of\s+\d+)\s*(?:\bfor\s+|\bon\s+|\bin\s+)?(?:\boverall\b|\bquality\b|"
    r"\bcompleteness\b)"
    + r"|" + _WORD_RATIO + COUNTED
    + r"|" + _GIVEN_GRADE + r"|" + _STARS + r"|" + _MARK_POINTS
    + r"|^\s*\(?\s*\d+(?:\.\d+)?\s*(?:/|\bout\s+of\b)\s*(?:5|10|100)\s*\)?\s*\.?\s*$"
    + r"|\(\s*\d+(?:\.\d+)?\s*(?:/|\bout\s+of\b)\s*(?:5|10|100)\s*\)" + COUNTED
    + r"|(?<![\w])(?-i:[A-F][+-]?)\s*-?\s*grade\b|(?-i:[A-F][+-]?)\s*(?:評価|判定|ランク)"
    + r"|" + _PERCENT + r"\s*(?:\bcomplete(?:d|ness)?\b|\bcompletion\b|\bdone\b|\bfinished\b|\bquality\b"
    r"|\bconfiden(?:t|ce)\b|の?\s*(?:完成度|達成度|完成|完了|出来|品質|進捗))"
    + r"|(?:\bcomplete(?:d|ness)?|\bcompletion|\bdone|\bquality|完成度|達成度|進捗(?:率)?|達成率|完成率|完了率|品質)"
    r"\s*(?:[:=：]|\bis\b|\bat\b|\bof\b|\brate\b|は|が)?\s*(?:about\s+|around\s+|約)?" + _PERCENT
    + r"|\d+(?:\.\d+)?\s*割\s*(?:の\s*)?(?:完成|完了|達成|出来)"
    + r"|\d+\s*段階(?:評価)?\s*(?:で|の|中)\s*\d"
    + r"|(?:品質|出来|完成度|総合)\s*(?:[:：]|は|が)?\s*\d+(?:\.\d+)?\s*点"
    + r"|\d+(?:\.\d+)?\s*点\s*(?:を\s*(?:つけ|付け|与え)|と\s*評価|の\s*評価|の\s*出来)")
