"""Evidence rules for a goal judgement (seed 000, rule 1; issue 6 "evidence rules").

A PASS needs evidence: a statement of what actually happened, counted ("1 file written with 3 keys",
"2 messages sent", "返信 3 件"). Evidence that only says something ran (launched, finished, exited 0,
tests passed, CI green, merged, deployed, running, marker written, 起動した, テスト緑, デプロイ済み ...)
observes nothing of the goal and is refused, also with a number attached to the proxy ("deployed 2 services",
"launched 3 workers", "the bot is running with 4 threads", "ワーカーを3つ起動した"), and so is any count of the
completion marker (out/status.json, "the marker has 2 keys"): the harness makes every trial write it. Words quoted
from what was seen ('1 line "Deployment finished"') are content, not claims. An ``unverified`` statement (what
cannot be checked yet) turns the PASS into "mostly done" and a watch is registered instead (see
:mod:`live_trial.watch`).

Everything here is pure: it takes strings and returns data or raises :class:`RefusedInput`, so a
refused judgement never touches the disk.
"""
from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import unicodedata

from typing import Any, Callable

from live_trial.errors import RefusedInput

EXAMPLES_EN = "'1 file written with 3 keys', '2 messages sent', '3 replies found in the log'"
EXAMPLES_JA = "「ファイル1件に3項目を書いた」「返信を2件送った」"

# Proxy phrases: they say a step ran, not that the goal's verb happened. Each pattern swallows the
# numbers that belong to it ("exited 0", "42 tests passed", "100%") so they do not count as observations.
_PROXY_EN = [
    r"exit(?:ed|s)?(?:\s+with)?(?:\s+(?:code|status|rc))?\s*[:=]?\s*0\b",
    r"\b(?:rc|returncode|return code|exit code|status code)\s*[:=]?\s*0\b",
    r"\b(?:http\s*)?(?:status\s*)?2\d\d\s*(?:ok)?\b(?=\s*(?:returned|response|$|[,.;]))",
    r"\b\d+\s*(?:/\s*\d+\s*)?(?:unit\s+|e2e\s+)?tests?\s+(?:passed|passing|pass|green|ok|succeeded)\b",
    r"\b(?:all\s+)?(?:unit\s+|e2e\s+)?tests?\s+(?:are\s+|were\s+|have\s+)?(?:passed|passing|pass|green|ok|succeeded)"
    r"(?:\s*\(\s*\d+\s*(?:/\s*\d+)?\s*\))?",
    r"\b(?:ci|pipeline|build|checks?|lint)\s+(?:is\s+|was\s+|are\s+)?(?:green|passed|passing|ok|succeeded|success)\b",
    r"\b(?:pr|pull request|branch)?\s*#?\d*\s*(?:was\s+|got\s+|been\s+)?merged\b",
    r"\b(?:successfully\s+)?(?:deployed|released|shipped|published|installed|launched|booted|started|restarted|"
    r"spawned|finished|completed|complete|done|ran|executed|exited|terminated|succeeded|initialized|initialised|"
    r"spun\s+up|rolled\s+out|kicked\s+off)\b",
    r"\b(?:is\s+|are\s+|keeps\s+)?(?:up\s+and\s+)?running\b",
    r"\b(?:process|daemon|service|server|bot|job|worker)\s+(?:is\s+)?(?:alive|up|active|healthy|live)\b",
    r"\b(?:marker|status\s*file|status\.json|done\s*file|flag\s*file)\s+(?:was\s+)?(?:written|created|present|exists|found)\b",
    r"\b(?:wrote|write|written|created)\s+(?:the\s+)?(?:completion\s+)?marker\b",
    r"\b(?:no|without|zero|0)\s+errors?\b",
    r"\b(?:ok|okay|success|successful|works|working|worked|fine|good|green|passed|verified|confirmed|"
    r"looks\s+good|all\s+good|as\s+expected|no\s+issues?)\b",
    r"\bprogress\s*[:=]?\s*\d+\s*%",
    r"\b\d+(?:\.\d+)?\s*%",
]
_PROXY_JA = [
    r"終了コード\s*[:：]?\s*0", r"(?:正常)?終了(?:した|しました|済み)?", r"起動(?:した|しました|済み|中)?",
    r"開始(?:した|しました)?", r"完了(?:した|しました|済み)?", r"完走(?:した|しました)?", r"実行(?:した|しました|済み|中)",
    r"立ち上げ(?:た|ました|済み)?", r"走って(?:いる|います)", r"終わ(?:った|りました)",
    r"テスト(?:が|は)?\s*(?:\d+\s*件\s*)?(?:全て|すべて)?(?:通過|通った|通りました|パス|合格|緑|グリーン|成功)",
    r"(?:CI|ＣＩ|ビルド|パイプライン)(?:が|は)?\s*(?:緑|グリーン|通過|通った|成功|パス)",
    r"マージ(?:した|しました|済み|された|されました)?", r"デプロイ(?:した|しました|済み|された|されました|完了)?",
    r"リリース(?:した|しました|済み)?", r"稼働(?:中|している|しています)?", r"動いて(?:いる|います)", r"動作(?:中|している|した|確認)?",
    r"常駐(?:中|している)?", r"(?:マーカー|完了印|ステータスファイル)(?:を|が)?\s*(?:書いた|書きました|作成|作った|書き込んだ|出力|存在)",
    r"成功(?:した|しました)?", r"問題(?:なし|ありません|無し)", r"エラー(?:なし|無し|0件|０件)", r"正常", r"OK", r"大丈夫",
    r"\d+(?:\.\d+)?\s*[%％]",
]
_PROXY_RE = re.compile("|".join(f"(?:{p})" for p in _PROXY_EN + _PROXY_JA), re.IGNORECASE)
#: The proxies that say a step ran (launched, deployed, running, finished, merged, tests green, 起動, デプロイ ...):
#: a count they govern counts that step ("deployed 2 services"). Judgement words (ok, works, verified, 正常, 問題なし)
#: govern nothing: they are proxies only on their own.
_BINDING_RE = re.compile(
    r"exit|\brc\b|returncode|code\b|\btests?\b|\bci\b|pipeline|build|checks?\b|lint|merged|deployed|released|"
    r"shipped|published|installed|launched|booted|started|spawned|finished|complete|done|\bran\b|executed|"
    r"terminated|succeeded|initiali[sz]ed|running|spun|rolled|kicked|alive|\bup\b|active|healthy|live|green|"
    r"passed|passing|起動|開始|完了|完走|終了|実行|テスト|CI|ＣＩ|ビルド|パイプライン|マージ|デプロイ|リリース|稼働|動いて|"
    r"動作|常駐|立ち上げ|走って|終わ|成功", re.IGNORECASE)
#: The completion marker: the harness's own contract file (every task makes the trial write out/status.json), so a
#: count of it ("out/status.json has 2 keys", "1 marker file", "完了マーカーに2項目") counts nothing the goal did.
_MARKER_RE = re.compile(
    r"(?<![\w/.-])(?:/\S*/|\./)?out/status\.json\b|(?<![\w/.-])status\.json\b"
    r"|\b(?:the\s+)?(?:completion\s+)?markers?(?:\s+files?)?\b|\b(?:status|done|flag)\s*files?\b"
    r"|(?:完了)?マーカー(?:ファイル)?|完了印|ステータスファイル", re.IGNORECASE)
#: Quoted text is what was seen, not a claim: '1 line "Deployment finished"' holds no proxy and no count.
_QUOTED_RE = re.compile(r'"[^"\n]*"|“[^”\n]*”|‘[^’\n]*’|「[^」\n]*」|『[^』\n]*』|`[^`\n]*`|(?<!\w)\'[^\'\n]*\'(?!\w)')

# Numbers that are not counts of anything the goal did: versions, times, dates, hashes, ids, ports.
_NOT_COUNTS = re.compile(
    r"|".join([
        r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",  # uuid
        r"\b\d{8}T\d{6}(?:-[0-9a-f]{4})?\b",                                   # run id
        r"\b\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?\b",                            # date / timestamp
        r"\b\d{1,2}:\d{2}(?::\d{2})?\b",                                      # time of day
        r"\bv?\d+(?:\.\d+){1,3}\b",                                           # version / decimal
        r"\b(?:sha256:)?[0-9a-f]{12,}\b",                                     # hash
        r"\b(?:port|pid|pr|issue|commit|version|build|run)\s*#?\s*\d+\b",     # identifiers
        r"#\d+",
        r"\S*[/\\]\S*",                                                       # paths and urls
    ]),
    re.IGNORECASE,
)
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve twenty thirty hundred "
                 "dozen single both several zero").split()
_NUMBER = r"(?:\d+(?:,\d{3})*|" + "|".join(_NUMBER_WORDS) + r")"
_COUNT_EN = re.compile(r"(?<![\w])" + _NUMBER + r"(?![\w])", re.IGNORECASE)
_COUNTER_JA = r"(?:件|通|個|つ|回|行|人|名|本|枚|ファイル|キー|項目|箇所|語|文字|列|レコード)"
_COUNT_JA = re.compile(r"(?:\d+|[一二三四五六七八九十百千]+)\s*" + _COUNTER_JA)
_ZERO = re.compile(r"^(?:0+|zero|no)$", re.IGNORECASE)
#: Stand in for a stripped proxy phrase that says a step ran (_SENTINEL), any other proxy (_SOFT), a mention of the
#: completion marker (_MARK) and a quotation (_QUOTE), so a number next to one stays bound to it ("1 marker written").
_SENTINEL, _SOFT, _MARK, _QUOTE = "\u2016", "\u00a6", "\u2691", "\u2039\u203a"
_STANDINS = _SENTINEL + _SOFT + _MARK
#: Nouns that only name the machinery (seed 000: tests green, CI green, merged, running are never evidence):
#: a number tied to one of them counts nothing the goal did ("CI green on 3 jobs", "1 marker written").
PROXY_NOUNS = frozenset("""
    test tests testcase testcases assertion assertions spec specs suite suites check checks job jobs build builds
    marker markers ci pipeline pipelines workflow workflows stage stages step steps lint linter exit code codes rc
    status flag flags completion done success successes error errors warning warnings failure failures retry retries
    attempt attempts commit commits pr prs merge merges deploy deploys deployment deployments release releases
    run runs process processes pid pids port ports session sessions tick ticks poll polls
    second seconds sec secs s ms millisecond milliseconds minute minutes min mins hour hours hr hrs h day days
    week weeks month months year years percent
""".split())
#: Words that end the noun phrase after a number ("1 file written with 3 keys": the phrase of 1 is "file written").
_STOP_WORDS = frozenset("""
    of and or to in on at for with by from into onto over under than then the a an is are was were be been being
    has have had it its that this these those which who whom per each every via as so but not no nor out up x
""".split())
_PAST_VERBS = frozenset("sent wrote written made found got read held kept built gave took left won sold paid bought "
                        "told brought caught drew drove fed hit put set shot spent split".split())
_JA_PROXY_BEFORE = re.compile(r"(?:テスト|ジョブ|チェック|ビルド|マーカー|CI|パイプライン|ステップ|コミット|エラー|秒|分|時間)"
                              r"\s*(?:が|を|は|の|で)?\s*$", re.IGNORECASE)
_SCORE_VALUE = r"\s*(?:[:=]|\bis\b|\bwas\b|\bof\b)?\s*(?:\d+(?:\.\d+)?(?:\s*/\s*\d+)?|[A-F][+-]?(?![\w]))"
#: A score, rating, grade or points given a value, anywhere in the text ("score: 9/10", "rated 4/5", "8 points",
#: "grade B+", "9/10 score"); the bare word without a value ("rating of the lines not given") is no score.
_SCORE_RE = re.compile(
    r"\b(?:scor(?:e|es|ed|ing)|rat(?:e|es|ing|ings|ed)|grad(?:e|es|ed|ing)|marks?)\b" + _SCORE_VALUE
    + r"|\b\d+(?:\.\d+)?(?:\s*/\s*\d+)?\s*(?:points?|pts|stars?|marks?)\b"
    + r"|\b\d+(?:\.\d+)?\s*/\s*\d+\s*(?:score|rating|grade)\b|\b(?:points?|pts|stars?)\s*[:=]\s*\d"
    + r"|スコア|点数|採点|評点|満点|\d+\s*点\s*(?:/|中|満点)|(?:評価|得点)\s*[:：は]?\s*[A-F\d]",
    re.IGNORECASE)


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").strip()


def proxy_phrases(text: str) -> list[str]:
    """Return the proxy phrases found in ``text`` (English or Japanese), in order; empty when none."""
    return [m.group(0).strip() for m in _PROXY_RE.finditer(_normalise(text)) if m.group(0).strip()]


def score_words(text: str) -> list[str]:
    """Return the scores, ratings, grades or points given a value anywhere in ``text`` ("score: 9/10 (1 file)" ->
    ["score: 9/10"]); a judgement carries no score (seed 001, goal verification)."""
    return [m.group(0).strip() for m in _SCORE_RE.finditer(_normalise(text))]


def _phrase_after(rest: str, end: int) -> list[str] | None:
    """The words of the noun phrase right after a number (at most 3, up to a stop word or punctuation);
    None when the number is bound to a stripped proxy (the sentinel follows it)."""
    words: list[str] = []
    for m in re.finditer(r"\s*([" + _STANDINS + r"]|[^\W\d_][\w'.-]*|\S)", rest[end:]):
        tok = m.group(1)
        if tok in _STANDINS:
            return None
        if not re.match(r"[^\W\d_]", tok) or tok.lower() in _STOP_WORDS or len(words) == 3:
            break
        words.append(tok.lower().rstrip(".-'"))
    return words


def _word_before(rest: str, start: int) -> tuple[str, bool] | None:
    """(word, labelled) right before a number: ``replies: 2`` -> ("replies", True); ``sent 2`` -> ("sent", False)."""
    m = re.search(r"([" + _STANDINS + r"]|[^\W\d_][\w'-]*)\s*([:=])?\s*$", rest[:start])
    if not m:
        return None
    return m.group(1), bool(m.group(2))


def _tied_count(rest: str, m: re.Match) -> str | None:
    """The count ``m`` with what it counts ("2 messages"), or None when it is bare or only counts a proxy."""
    after = _phrase_after(rest, m.end())
    if after is None:
        return None
    if after and not any(w in PROXY_NOUNS for w in after):
        return f"{m.group(0)} {' '.join(after)}"
    if after:
        return None
    before = _word_before(rest, m.start())
    if before is None or before[0] in _STANDINS or before[0].lower() in PROXY_NOUNS:
        return None
    word, labelled = before
    if labelled or word.lower() in _PAST_VERBS or (word.lower().endswith("ed") and len(word) > 3):
        return f"{word}{':' if labelled else ''} {m.group(0)}"
    return None


#: Words between a counted noun and its verb ("3 workers have been launched") and words that are verbs of a real
#: observation ("holds 1 line", "lists 3 rows"): a count is bound to the nearest verb that governs it (:func:`_bound`).
_AUX = frozenset("is are was were be been being has have had got get gets all also just already now then still "
                 "finally successfully".split())
_VERBS = _PAST_VERBS | frozenset("has have holds hold contains contain lists list shows shown says reads counts "
                                 "gives returns exists exist appears appear".split())
_NOT_VERBS = frozenset("hundred speed seed need feed thing string morning evening nothing something anything "
                       "everything during ceiling".split())
_TOKEN = re.compile(r"[" + _STANDINS + r"]|[^\W\d_][\w'-]*|\S")
_CLAUSE_END = re.compile(r"[;\n。；]|\.(?=\s|$)")
_SEGMENT_END = re.compile(r"[;\n。；,、]|\.(?=\s|$)|\band\b")
_JA_VERB_END = re.compile(_SENTINEL + r"|[ただるす](?![ぁ-ん])")


def _around(rest: str, m: re.Match, boundary: re.Pattern) -> tuple[str, str]:
    """The text of ``m``'s clause before and after it (clauses end at ``boundary``)."""
    cuts = [b.end() for b in boundary.finditer(rest[:m.start()])]
    nxt = boundary.search(rest, m.end())
    return rest[cuts[-1] if cuts else 0:m.start()], rest[m.end():nxt.start() if nxt else len(rest)]


def _is_verb(word: str) -> bool:
    w = word.lower()
    if w in _VERBS:
        return True
    return w not in _NOT_VERBS and ((w.endswith("ed") and len(w) > 3) or (w.endswith("ing") and len(w) > 4))


def _bound(rest: str, m: re.Match, japanese: bool) -> bool:
    """True when the count ``m`` counts a proxy: the completion marker is in its part of the sentence, or the verb that
    governs it says a step ran. English: the verb after the counted noun ("3 workers were launched"), else the nearest
    verb before ("deployed 2 services", "running with 4 threads"); "launched and sent 2 replies" is not bound.
    Japanese: the next verb ("ワーカーを3つ起動した"), else a proxy right before ("デプロイしたサービス2つ")."""
    if any(_MARK in part for part in _around(rest, m, _SEGMENT_END)):
        return True
    before, after = _around(rest, m, _CLAUSE_END)
    if japanese:
        nxt = _JA_VERB_END.search(after)
        if nxt:
            return nxt.group(0) == _SENTINEL
        gap = before[before.rfind(_SENTINEL) + 1:]
        return _SENTINEL in before and not _JA_VERB_END.search(gap) and not gap.lstrip().startswith("後")
    for tok in _TOKEN.findall(after)[:8]:
        if tok.lower() in _AUX:
            continue
        if tok == _SENTINEL or _is_verb(tok):
            return tok == _SENTINEL
        if tok.lower() in _STOP_WORDS or not re.match(r"[^\W\d_]", tok):
            break
    for tok in reversed(_TOKEN.findall(before)):
        if tok == _SENTINEL or _is_verb(tok):
            return tok == _SENTINEL
    return False


def _stand_in(m: re.Match) -> str:
    return f" {_SENTINEL if _BINDING_RE.search(m.group(0)) else _SOFT} "


def _unquote(m: re.Match) -> str:
    inner = m.group(0)[1:-1].strip()
    return f" {_MARK} " if _MARKER_RE.fullmatch(inner) else f" {_QUOTE} "


def marker_mentions(text: str) -> list[str]:
    """The mentions of the completion marker in ``text`` ("out/status.json", "the completion marker", "マーカー")."""
    return [m.group(0).strip() for m in _MARKER_RE.finditer(_normalise(text))]


def counted_observations(text: str) -> list[str]:
    """Return the counts in ``text`` tied to something real, after the proxy phrases are stripped.

    A count is a number tied to a noun or verb that is not itself a proxy noun (:data:`PROXY_NOUNS`: tests,
    checks, jobs, builds, markers, CI, pipelines, exit codes, durations...): "1 file written with 3 keys" ->
    ["1 file written", "3 keys"]; "rows updated: 3" -> ["updated: 3"]; "返信3件" -> ["3件"]. Not counts: bare
    numbers ("1", "12/12"), numbers of a proxy ("exited 0", "tests passed: 12", "CI green on 3 jobs",
    "1 marker written"), numbers a proxy verb governs ("deployed 2 services", "launched 3 workers", "the bot is
    running with 4 threads", "ワーカーを3つ起動した"), counts of the completion marker ("out/status.json has 2 keys"),
    numbers inside quotes (what was seen, not a count of it), versions, dates, times, hashes, uuids, run ids, paths
    and percentages.
    """
    rest = _QUOTED_RE.sub(_unquote, _normalise(text))
    rest = _MARKER_RE.sub(f" {_MARK} ", rest)
    rest = _PROXY_RE.sub(_stand_in, _NOT_COUNTS.sub(" ", rest))
    found = [m.group(0) for m in _COUNT_JA.finditer(rest)
             if not _JA_PROXY_BEFORE.search(rest[:m.start()]) and not _bound(rest, m, True)]
    for m in _COUNT_EN.finditer(rest):
        tied = _tied_count(rest, m)
        if tied and not _bound(rest, m, False):
            found.append(tied)
    return found


def _is_zero(count: str) -> bool:
    head = re.match(r"\d+|[^\W\d_]+", re.sub(r"^[^\W\d_][\w'-]*:?\s+(?=\d)", "", count.strip()))
    return bool(head and _ZERO.match(head.group(0).strip()))


def check_evidence(goal_result: str, evidence: str | None, unverified: str | None = None) -> str:
    """Apply seed 000 rule 1 to a goal judgement; return its ledger kind or raise.

    Returns ``"done"`` (PASS with counted evidence), ``"mostly_done"`` (PASS with ``unverified``: the
    caller registers a watch; the evidence may then be empty or a proxy, it is recorded as given),
    or ``"not_done"`` (any other goal result; nothing is required).

    The rule: strip the proxy phrases and the numbers attached to them first; what remains must hold a
    counted observation of something real (:func:`counted_observations`: a number tied to a noun or verb
    that is not a proxy noun). Bare numbers do not count.

    Raises :class:`RefusedInput` (exit 2) with
      - ``code="evidence_required"`` when ``goal_result`` is PASS and neither evidence nor unverified is given,
        or the evidence is only numbers and punctuation ("1", "12/12");
      - ``code="proxy_evidence"`` when the evidence carries a score, rating, grade or points (anywhere, also
        with ``unverified``), when it only names a proxy (launched, exited 0, tests passed: 12, CI green on 3
        jobs, merged, deployed, running, 1 marker written, 起動した, テスト緑, ...) and counts nothing real (a
        number a proxy governs counts the proxy: "deployed 2 services", "the bot is running with 4 threads";
        so does a count of the completion marker: "out/status.json has 2 keys"),
        or when every count it gives is zero (the goal's verb must have happened at least once).
    The message says what would count. Pure: nothing is read or written.
    """
    if (goal_result or "").upper() != "PASS":
        return "not_done"
    ev = _normalise(evidence or "")
    scores = score_words(ev)
    if scores:
        raise RefusedInput(
            f"the evidence gives a score ('{scores[0]}'): a score, rating, grade or points is no evidence",
            where="--evidence", code="proxy_evidence", details={"scores": scores},
            fix=f"drop the score and name what happened, counted: {EXAMPLES_EN} (日本語なら {EXAMPLES_JA})")
    if (unverified or "").strip():
        return "mostly_done"
    if not re.search(r"[^\W\d_]", ev):
        said = f"only '{ev}'" if ev else "nothing"
        raise RefusedInput(
            f"a PASS needs evidence of what actually happened (got {said})", where="--evidence",
            code="evidence_required", details={"evidence": ev},
            fix=f"name what happened, counted: {EXAMPLES_EN}; a bare number does not count; or give --unverified "
                "\"<what cannot be checked yet>\" to record it as mostly done and watch it")
    counts = counted_observations(ev)
    proxies = proxy_phrases(ev)
    if not counts:
        markers = marker_mentions(ev)
        said = f"'{(markers or proxies)[0]}'" if markers or proxies else "no number tied to a real thing"
        raise RefusedInput(
            f"the evidence is only a proxy ({said}): it says something ran or counts the completion marker, "
            "not that the goal happened; a number attached to a proxy counts the proxy",
            where="--evidence", code="proxy_evidence", details={"proxies": proxies, "markers": markers},
            fix=f"name what happened, counted: {EXAMPLES_EN} (日本語なら {EXAMPLES_JA}); tests passing, CI green, "
                "jobs, checks, merged, deployed, launched, running, the completion marker (out/status.json) or a bare "
                "number do not count")
    if all(_is_zero(c) for c in counts):
        raise RefusedInput(
            "the evidence counts zero of what the goal asks for: a PASS needs it to have happened at least once",
            where="--evidence", code="proxy_evidence", details={"counts": counts},
            fix=f"if it really happened, name it counted ({EXAMPLES_EN}); otherwise record FAIL, "
                "or PASS with --unverified and let the watch check it")
    return "done"


#: Words that make a key a score field ("score", "overall_score", "qualityRating", "Grade", "confidence", "points"):
#: a judgement is PASS or FAIL with evidence, never a number of merit (README: "A score, rating or grade field is
#: refused"; seed 001, goal verification).
SCORE_WORDS = frozenset({"score", "scores", "scoring", "rating", "ratings", "rate", "grade", "grades", "grading",
                         "confidence", "confidences", "point", "points", "star", "stars", "mark", "marks", "percent",
                         "percentage", "pct"})
#: Score words still found when run together with other words without a separator ("qualityscore", "SELFCONFIDENCE").
_GLUED_SCORE_WORDS = ("score", "confidence")


def is_score_key(key: str) -> bool:
    """True for a key naming a score, rating, grade or confidence, case-insensitive: a word of :data:`SCORE_WORDS`
    once split on ``_``, ``-``, spaces, dots and camelCase (``quality_score``, ``qualityScore``, ``Overall-Rating``),
    or ``score`` / ``confidence`` inside one word (``qualityscore``). ``checkpoints`` and ``remarks`` are no score."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(key))
    words = re.split(r"[\s_.\-]+", spaced.lower())
    return any(w in SCORE_WORDS or any(g in w for g in _GLUED_SCORE_WORDS) for w in words if w)


def score_fields(node: Any, path: str = "") -> list[str]:
    """The paths (``/evidence/0/quality_score``) of every key in ``node`` (dicts and lists, at any depth) that
    :func:`is_score_key` calls a score; empty when there is none."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}/{key}"
            if is_score_key(str(key)):
                found.append(where)
            found += score_fields(value, where)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += score_fields(value, f"{path}/{i}")
    return found


def parse_evidence_items(evidence: str | None) -> list[dict] | None:
    """The evidence items of an ``--evidence`` given as a JSON list ``[{claim, source, observed}]``; None when
    ``evidence`` is plain text (does not start with ``[``). Raises :class:`RefusedInput` (``bad_evidence``) for
    malformed JSON, a non-object item or an item with an empty claim, source or observed, and (``score_field``) for
    an item with a score, rating, grade or confidence key at any depth (:func:`is_score_key`: ``score``,
    ``quality_score``, ``{"meta": {"Rating": 4}}``) instead of dropping it."""
    text = (evidence or "").strip()
    if not text.startswith("["):
        return None
    import json

    try:
        items: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RefusedInput(f"--evidence starts with '[' but is not a JSON list ({exc.msg} at char {exc.pos})",
                           where="--evidence", code="bad_evidence",
                           fix='pass [{"claim": ..., "source": "<file under the workdir>|<transcript uuid>", '
                               '"observed": "<what was seen, counted>"}] or plain text') from None
    if not isinstance(items, list) or not items:
        raise RefusedInput("--evidence as JSON must be a non-empty list of {claim, source, observed}",
                           where="--evidence", code="bad_evidence", fix="give at least one evidence item")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise RefusedInput(f"evidence item {i} is not an object", where="--evidence", code="bad_evidence",
                               fix="each item is {claim, source, observed}")
        scores = score_fields(item, f"/{i}")
        if scores:
            raise RefusedInput(f"evidence item {i} has a score-like field ({', '.join(scores)}): a score, rating, "
                               "grade or confidence is no evidence", where="--evidence", code="score_field",
                               details={"fields": scores},
                               fix="drop the field and say in observed what happened, counted: " + EXAMPLES_EN)
        for key in ("claim", "source", "observed"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise RefusedInput(f"evidence item {i} has no {key}", where="--evidence", code="bad_evidence",
                                   fix="each item is {claim, source, observed}, none of them empty")
        out.append({k: item[k].strip() for k in ("claim", "source", "observed")})
    return out


#: The completion marker as a source, relative to the workdir; a PASS needs a source other than it.
MARKER_SOURCE = "out/status.json"
#: Every file the harness itself writes in a trial's workdir, as workdir-relative POSIX patterns (``*`` stays within one
#: name; a final ``/**`` is everything under a folder). None of them is evidence of the skill's goal: an evidence item
#: citing one (under any spelling, see :func:`source_path`) counts for nothing, and a PASS needs at least one item that
#: cites something else. Where each is written: ``out/status.json`` the completion marker (``workdir.MARKER_NAME``; the
#: task makes every trial write it), ``task.md`` and ``nudge-<n>.md`` the text pasted into the session (``trial``,
#: ``trial_loop``), ``trial-state.json`` / ``trial-log.jsonl`` / ``poll-state.json`` / ``cwd-snapshot.json`` /
#: ``.trial.lock`` (``trial``), ``evaluation.json`` (``evaluator``), ``verdict.json`` (``verdict``), ``claude-config/``
#: a rehearsal's isolated claude configuration (``origin.REHEARSAL_CONFIG_DIR``). Still evidence: transcript records
#: (by uuid), ``pane.txt`` (the screen the skill left), ``side-effects/**``, ``subagents/*.jsonl`` and every file
#: under ``out/`` other than the marker.
HARNESS_FILES: tuple[str, ...] = (
    MARKER_SOURCE, "task.md", "nudge-*.md", "trial-state.json", "trial-log.jsonl", "poll-state.json",
    "cwd-snapshot.json", ".trial.lock", "evaluation.json", "verdict.json", "claude-config/**",
)
MARKER_ONLY = ("a PASS needs at least one evidence item whose source is not the completion marker (out/status.json is "
               "the harness's own contract file, written by every trial, so it shows nothing of the goal)")
HARNESS_ONLY = ("a PASS needs at least one evidence item whose source is not the completion marker or another file "
                "the harness itself writes (task.md, nudge-*.md, trial-state.json, trial-log.jsonl, poll-state.json, "
                "cwd-snapshot.json, evaluation.json, verdict.json, claude-config/: they show nothing of the goal)")
MARKER_FIX = "cite an artifact the skill produced, or the transcript record that shows the outcome"


def strip_location(source: str) -> str:
    """``source`` without a trailing line reference (``out/a.txt:3``, ``out/a.txt#L3-L5`` -> ``out/a.txt``)."""
    return re.sub(r"(?::\d+(?:-\d+)?|#L?\d+(?:-L?\d+)?)$", "", (source or "").strip())


def source_path(source: str, workdir: str | os.PathLike | None = None) -> str | None:
    """The workdir-relative POSIX path a file ``source`` names, spelled one way: the line reference stripped
    (:func:`strip_location`), ``\\`` read as ``/``, ``os.path.normpath`` applied (``./out//status.json`` and
    ``out/../out/status.json`` -> ``out/status.json``), an absolute path inside ``workdir`` made relative to it.
    Returns None for an empty source and a path outside the workdir (``../x``, an absolute path elsewhere, any absolute
    path when ``workdir`` is None). Lexical only: symlinks are not followed (see
    :func:`live_trial.evaluator_answer.harness_files_of` for that)."""
    text = strip_location(source).replace("\\", "/")
    if not text:
        return None
    if posixpath.isabs(text):
        if workdir is None:
            return None
        text = posixpath.relpath(posixpath.normpath(text), posixpath.normpath(os.fspath(workdir).replace("\\", "/")))
    rel = posixpath.normpath(text)
    if rel in (".", "..") or rel.startswith("../") or posixpath.isabs(rel):
        return None
    return rel


def is_harness_path(rel: str | None) -> bool:
    """True when the workdir-relative path ``rel`` (as :func:`source_path` returns it) is one of
    :data:`HARNESS_FILES`."""
    if not rel:
        return False
    parts = rel.split("/")
    for pattern in HARNESS_FILES:
        pat = pattern.split("/")
        if pat[-1] == "**":
            if len(parts) >= len(pat) - 1 and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pat[:-1])):
                return True
        elif len(parts) == len(pat) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pat)):
            return True
    return False


def harness_files_named(source: str, workdir: str | os.PathLike | None = None) -> list[str]:
    """``[<workdir-relative path>]`` when the file ``source`` names is one the harness writes
    (:data:`HARNESS_FILES`, any spelling :func:`source_path` reads), else ``[]``. Lexical: an absolute path needs
    ``workdir``; transcript uuids and symlinks need the workdir's files (see
    :func:`live_trial.evaluator_answer.harness_files_of`)."""
    rel = source_path(source, workdir)
    return [rel] if rel and is_harness_path(rel) else []


def is_marker_source(source: str, workdir: str | os.PathLike | None = None) -> bool:
    """True when ``source`` names the completion marker (``out/status.json`` under any spelling :func:`source_path`
    reads: ``./out//status.json``, ``out/../out/status.json``, ``out/status.json:1``, and ``<workdir>/out/status.json``
    when ``workdir`` is given)."""
    return source_path(source, workdir) == MARKER_SOURCE


def harness_refusal(files: list[str], where: str = "--evidence") -> RefusedInput:
    """The refusal of a PASS whose every evidence item cites a harness file; ``files`` are the workdir-relative
    harness files cited. ``code="marker_evidence"`` when they are all the completion marker, else
    ``code="harness_evidence"``."""
    cited = sorted(set(files))
    marker_only = cited == [MARKER_SOURCE]
    return RefusedInput(f"{MARKER_ONLY if marker_only else HARNESS_ONLY} (every item cites: {', '.join(cited)})",
                        where=where, code="marker_evidence" if marker_only else "harness_evidence",
                        details={"harness_files": cited}, fix=MARKER_FIX)


def check_evidence_items(goal_result: str, items: list[dict], unverified: str | None,
                         source_exists: Callable[[str], bool],
                         harness_files: Callable[[str], list[str]] = harness_files_named) -> str:
    """:func:`check_evidence` for evidence items ``[{claim, source, observed}]`` (README: an item cites a file in
    the workdir or a transcript record uuid). Every item's source must exist (``source_exists``, supplied by the
    caller; checked whatever the goal result) and, for a PASS without ``unverified``, every ``observed`` must pass
    the proxy rule and at least one item must cite a source the harness did not write (``harness_files(source)``
    lists the :data:`HARNESS_FILES` a source stands for, ``[]`` for real evidence; ``code="marker_evidence"`` when
    only the completion marker is cited, ``"harness_evidence"`` when other harness files are). Items citing a harness
    file count for nothing: the counted observation must come from the others. Returns the ledger kind; raises
    :class:`RefusedInput` naming the item (and the missing source). Pure apart from ``source_exists`` and
    ``harness_files``."""
    for i, item in enumerate(items):
        if not source_exists(item["source"]):
            raise RefusedInput(f"evidence item {i} cites a source that does not exist: {item['source']!r}",
                               where="--evidence", code="evidence_source_missing", details={"source": item["source"]},
                               fix="cite a file under the workdir the skill produced or the uuid of a record "
                                   "in <workdir>/transcript.jsonl")
    is_pass = (goal_result or "").upper() == "PASS"
    owned = [harness_files(item["source"]) for item in items]
    real = [item for item, files in zip(items, owned) if not files]
    if is_pass and not (unverified or "").strip() and not real:
        raise harness_refusal([f for files in owned for f in files])
    for i, item in enumerate(items):
        try:
            check_evidence(goal_result, item["observed"], unverified)
        except RefusedInput as exc:
            raise RefusedInput(f"evidence item {i} ({item['source']}): {exc.problem}", where="--evidence",
                               code=exc.code, details=exc.details, fix=exc.fix) from None
    if not is_pass:
        return "not_done"
    return check_evidence(goal_result, "; ".join(item["observed"] for item in real or items), unverified)
