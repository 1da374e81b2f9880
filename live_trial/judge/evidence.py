"""Evidence rules for a goal judgement (seed 000, rule 1; README "Evidence, watches and messages to a person").

A PASS needs evidence: a statement of what actually happened, counted ("1 file written with 3 keys",
"2 messages sent", "返信 3 件"). Evidence that only says something ran (launched, finished, exited 0,
tests passed, CI green, merged, deployed, running, marker written, 起動した, テスト緑, デプロイ済み ...)
observes nothing of the goal and is refused, also with a number attached to the proxy ("deployed 2 services",
"launched 3 workers", "the bot is running with 4 threads", "ワーカーを3つ起動した"), and so is any count of the
completion marker (out/status.json, "the marker has 2 keys"): the harness makes every trial write it. Words quoted
from what was seen ('1 line "Deployment finished"') are content, not claims. An ``unverified`` statement (what
cannot be checked yet) turns the PASS into "mostly done" and a watch is registered instead (see
:mod:`live_trial.notices.watch`).

Everything here is pure: it takes strings and returns data or raises :class:`RefusedInput`, so a
refused judgement never touches the disk. What an evidence item may cite (its ``source``: never the marker nor
another harness file) and score fields are :mod:`live_trial.judge.sources`.
"""
from __future__ import annotations

import re
import unicodedata

from live_trial.errors import RefusedInput
from live_trial.judge.scores import COUNTED, MERIT_FORMS

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
    r"開始(?:した|しました)?", r"完了(?:した|しました|済み)?", r"完走(?:した|しました)?",
    r"実行(?:した|しました|済み|中)", r"立ち上げ(?:た|ました|済み)?", r"走って(?:いる|います)",
    r"終わ(?:った|りました)",
    r"テスト(?:が|は)?\s*(?:\d+\s*件\s*)?(?:全て|すべて)?(?:通過|通った|通りました|パス|合格|緑|グリーン|成功)",
    r"(?:CI|ＣＩ|ビルド|パイプライン)(?:が|は)?\s*(?:緑|グリーン|通過|通った|成功|パス)",
    r"マージ(?:した|しました|済み|された|されました)?", r"デプロイ(?:した|しました|済み|された|されました|完了)?",
    r"リリース(?:した|しました|済み)?", r"稼働(?:中|している|しています)?", r"動いて(?:いる|います)",
    r"動作(?:中|している|した|確認)?", r"常駐(?:中|している)?",
    r"(?:マーカー|完了印|ステータスファイル)(?:を|が)?\s*(?:書いた|書きました|作成|作った|書き込んだ|出力|存在)",
    r"成功(?:した|しました)?", r"問題(?:なし|ありません|無し)", r"エラー(?:なし|無し|0件|０件)", r"正常", r"OK",
    r"大丈夫", r"\d+(?:\.\d+)?\s*[%％]",
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
        r"(?<!\S)(?!\d+/\d+\b(?!/))\S*[/\\]\S*",          # paths and urls; not a counted ratio ("9/10 rows")
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
_JA_PROXY_BEFORE = re.compile(r"(?:テスト|ジョブ|チェック|ビルド|マーカー|CI|パイプライン|ステップ|"
                              r"コミット|エラー|秒|分|時間)"
                              r"\s*(?:が|を|は|の|で)?\s*$", re.IGNORECASE)
#: The value of a score: a number, a ratio, or a grade letter written as one (upper case: "a rate of a file" is no
#: grade).
_SCORE_VALUE = (r"\s*(?:[:=]|\bis\b|\bwas\b|\bof\b)?\s*(?:\d+(?:\.\d+)?(?:\s*/\s*\d+)?" + COUNTED
                + r"|(?-i:[A-F][+-]?)(?![\w]))")
#: A score, rating, grade, confidence or points given a value, anywhere in the text ("score: 9/10", "rated 4/5",
#: "8 points", "grade B+", "9/10 score", "confidence 0.9", "信頼度 90"); the bare word without a value ("rating of the
#: lines not given") is no score, and neither is a plain counted ratio ("9/10 rows dated").
_SCORE_RE = re.compile(
    r"\b(?:scor(?:e|es|ed|ing)|rat(?:e|es|ing|ings|ed)|grad(?:e|es|ed|ing)|marks?|confiden(?:ce|t))\b" + _SCORE_VALUE
    + r"|\b\d+(?:\.\d+)?(?:\s*/\s*\d+)?\s*(?:points?|pts|stars?|marks?)\b"
    + r"|\b\d+(?:\.\d+)?\s*/\s*\d+\s*(?:score|rating|grade)\b|\b(?:points?|pts|stars?)\s*[:=]\s*\d"
    + r"|スコア|点数|採点|評点|満点|\d+\s*点\s*(?:/|中|満点)|(?:評価|得点|信頼度|確信度)\s*[:：は]?\s*[A-F\d]"
    + "|" + MERIT_FORMS,
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
