"""Evidence rules for a goal judgement (seed 000, rule 1; issue 6 "evidence rules").

A PASS needs evidence: a statement of what actually happened, counted ("1 file written with 3 keys",
"2 messages sent", "返信 3 件"). Evidence that only says something ran (launched, finished, exited 0,
tests passed, CI green, merged, deployed, running, marker written, 起動した, テスト緑, デプロイ済み ...)
observes nothing of the goal and is refused. An ``unverified`` statement (what cannot be checked yet)
turns the PASS into "mostly done" and a watch is registered instead (see :mod:`live_trial.watch`).

Everything here is pure: it takes strings and returns data or raises :class:`RefusedInput`, so a
refused judgement never touches the disk.
"""
from __future__ import annotations

import re
import unicodedata

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
    r"\b(?:successfully\s+)?(?:deployed|released|shipped|published|installed|launched|booted|started|"
    r"finished|completed|complete|done|ran|executed|exited|terminated|succeeded|initialized|initialised)\b",
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
    r"開始(?:した|しました)?", r"完了(?:した|しました|済み)?", r"完走(?:した|しました)?", r"実行(?:した|しました|済み)",
    r"テスト(?:が|は)?\s*(?:\d+\s*件\s*)?(?:全て|すべて)?(?:通過|通った|通りました|パス|合格|緑|グリーン|成功)",
    r"(?:CI|ＣＩ|ビルド|パイプライン)(?:が|は)?\s*(?:緑|グリーン|通過|通った|成功|パス)",
    r"マージ(?:した|しました|済み|された|されました)?", r"デプロイ(?:した|しました|済み|された|されました|完了)?",
    r"リリース(?:した|しました|済み)?", r"稼働(?:中|している|しています)?", r"動いて(?:いる|います)", r"動作(?:中|している|した|確認)?",
    r"常駐(?:中|している)?", r"(?:マーカー|完了印|ステータスファイル)(?:を|が)?\s*(?:書いた|書きました|作成|作った|書き込んだ|出力|存在)",
    r"成功(?:した|しました)?", r"問題(?:なし|ありません|無し)", r"エラー(?:なし|無し|0件|０件)", r"正常", r"OK", r"大丈夫",
    r"\d+(?:\.\d+)?\s*[%％]",
]
_PROXY_RE = re.compile("|".join(f"(?:{p})" for p in _PROXY_EN + _PROXY_JA), re.IGNORECASE)

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
                 "dozen single both several").split()
_COUNT_EN = re.compile(r"\b(?:\d+|" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_COUNT_JA = re.compile(r"(?:\d+|[一二三四五六七八九十百千]+)\s*(?:件|通|個|つ|回|行|人|名|本|枚|ファイル|キー|項目|箇所|語|文字|列|レコード)")
_ZERO = re.compile(r"^(?:0+|zero|no)$", re.IGNORECASE)


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").strip()


def proxy_phrases(text: str) -> list[str]:
    """Return the proxy phrases found in ``text`` (English or Japanese), in order; empty when none."""
    return [m.group(0).strip() for m in _PROXY_RE.finditer(_normalise(text)) if m.group(0).strip()]


def counted_observations(text: str) -> list[str]:
    """Return the counts in ``text`` that are not part of a proxy phrase or an identifier.

    "1 file written with 3 keys" -> ["1", "3"]; "exited 0, 42 tests passed" -> []; "返信3件" -> ["3件"].
    Versions, dates, times, hashes, uuids, run ids, paths and percentages are not counts.
    """
    rest = _NOT_COUNTS.sub(" ", _normalise(text))
    rest = _PROXY_RE.sub(" ", rest)
    found = [m.group(0) for m in _COUNT_JA.finditer(rest)]
    found += [m.group(0) for m in _COUNT_EN.finditer(rest)]
    return found


def _is_zero(count: str) -> bool:
    head = re.match(r"\d+|\D+", count.strip())
    return bool(head and _ZERO.match(head.group(0).strip()))


def check_evidence(goal_result: str, evidence: str | None, unverified: str | None = None) -> str:
    """Apply seed 000 rule 1 to a goal judgement; return its ledger kind or raise.

    Returns ``"done"`` (PASS with counted evidence), ``"mostly_done"`` (PASS with ``unverified``: the
    caller registers a watch; the evidence may then be empty or a proxy, it is recorded as given),
    or ``"not_done"`` (any other goal result; nothing is required).

    Raises :class:`RefusedInput` (exit 2) with
      - ``code="evidence_required"`` when ``goal_result`` is PASS and neither evidence nor unverified is given;
      - ``code="proxy_evidence"`` when the evidence only names a proxy (launched, exited 0, tests passed,
        CI green, merged, deployed, running, marker written, 起動した, テスト緑, ...) and counts nothing,
        or when every count it gives is zero (the goal's verb must have happened at least once).
    The message says what would count. Pure: nothing is read or written.
    """
    if (goal_result or "").upper() != "PASS":
        return "not_done"
    ev = _normalise(evidence or "")
    if (unverified or "").strip():
        return "mostly_done"
    if not ev:
        raise RefusedInput(
            "a PASS needs evidence of what actually happened", where="--evidence", code="evidence_required",
            fix=f"name what happened, counted: {EXAMPLES_EN}; or give --unverified \"<what cannot be checked yet>\" "
                "to record it as mostly done and watch it")
    counts = counted_observations(ev)
    proxies = proxy_phrases(ev)
    if not counts:
        said = f"'{proxies[0]}'" if proxies else "nothing countable"
        raise RefusedInput(
            f"the evidence is only a proxy ({said}): it says something ran, not that the goal happened",
            where="--evidence", code="proxy_evidence",
            details={"proxies": proxies},
            fix=f"name what happened, counted: {EXAMPLES_EN} (日本語なら {EXAMPLES_JA}); tests passing, CI green, "
                "merged, deployed, running or a marker file do not count")
    if all(_is_zero(c) for c in counts):
        raise RefusedInput(
            "the evidence counts zero of what the goal asks for: a PASS needs it to have happened at least once",
            where="--evidence", code="proxy_evidence", details={"counts": counts},
            fix=f"if it really happened, name it counted ({EXAMPLES_EN}); otherwise record FAIL, "
                "or PASS with --unverified and let the watch check it")
    return "done"
