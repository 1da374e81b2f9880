"""An evidence item's quote and counts, checked against what it cites (seed 000 rule 1: counted, and true).

- The ``quote`` is a short verbatim piece of the cited source (:data:`MAX_QUOTE_CHARS` at most): it must be found in
  the file, in the changed lines of the git diff, or in the tool inputs and results of the cited call (never in an
  assistant's text). Whitespace runs count as one space; nothing else is forgiven.
- Counts the item states (in ``claim`` and ``observed``, outside quoted text) about lines, rows, keys or files are
  checked mechanically (:func:`stated_counts` finds them):

  ============ =================================================================================================
  ``N lines``   the cited content's lines, or its non-empty lines
  ``N rows``    its non-empty lines, or those less one header line, or the items of a JSON list
  ``N keys``    the keys of the JSON object the content holds (a content that is no JSON object cannot be counted)
  ``N files``   the files the session created or changed; ``1 file`` also stands for the one file cited
  ============ =================================================================================================

  A part is said as ``N of M`` / ``N/M`` (``9/10 rows dated``): ``M`` is checked as above and ``N`` may not exceed
  it. Lines, rows and keys of the git diff are not counted: cite the changed file's copy for those. Japanese:
  ``N行`` (lines), ``Nキー`` / ``キーN個`` (keys), ``Nファイル`` / ``ファイルN件`` (files).

Pure: strings in, problem strings out.
"""
from __future__ import annotations

import json
import re
from typing import Any

MAX_QUOTE_CHARS = 300
_WORDS = {"zero": 0, "no": 0, "one": 1, "a": 1, "single": 1, "two": 2, "both": 2, "three": 3, "four": 4, "five": 5,
          "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_NUM = r"(\d+|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|single|both)"
#: Words allowed between a count and its noun without making it a part ("3 top-level keys", "2 CSV rows").
_ADJ = r"(?:(?:non-empty|nonempty|data|csv|json|top-level|text|new|written|created|changed|distinct)\s+)?"
_NOUNS = {"line": "lines", "lines": "lines", "row": "rows", "rows": "rows", "key": "keys", "keys": "keys",
          "file": "files", "files": "files"}
_EN = re.compile(r"(?<![\w./#:-])" + _NUM + r"(?:\s*(?:/|of|out\s+of|of\s+the)\s*" + _NUM + r")?\s+(" + _ADJ
                 + r")(lines?|rows?|keys?|files?)\b", re.IGNORECASE)
_JA = [(re.compile(r"(\d+)\s*行"), "lines"), (re.compile(r"(\d+)\s*(?:個の|つの)?\s*キー"), "keys"),
       (re.compile(r"キー\s*(?:が|を|は)?\s*(\d+)\s*(?:個|つ)"), "keys"),
       (re.compile(r"(\d+)\s*(?:個の|つの)?\s*ファイル"), "files"),
       (re.compile(r"ファイル\s*(?:が|を|は)?\s*(\d+)\s*(?:件|個|つ)"), "files")]
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』|`[^`\n]*`|(?<!\w)\'[^\'\n]*\'(?!\w)')


def _collapse(text: str) -> str:
    return " ".join((text or "").split())


def quote_problem(quote: Any, text: str) -> str | None:
    """Why ``quote`` is not a verbatim piece of ``text`` (None when it is): it must be a non-empty string of at most
    :data:`MAX_QUOTE_CHARS` characters found in ``text``, whitespace runs read as one space."""
    if not isinstance(quote, str) or not quote.strip():
        return "has no quote (a short verbatim piece of the cited source)"
    if len(quote.strip()) > MAX_QUOTE_CHARS:
        return f"has a quote longer than {MAX_QUOTE_CHARS} characters: quote a short piece"
    if _collapse(quote) not in _collapse(text):
        return f"quotes {_collapse(quote)[:80]!r}, which is not in the cited source"
    return None


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _WORDS[word.lower()]


def stated_counts(text: str) -> list[tuple[str, int, int | None, str]]:
    """``[(phrase, n, m or None, noun)]`` for each count of lines, rows, keys or files in ``text`` outside quoted
    text; ``m`` is the whole of a part ("2 of 5 lines" -> n 2, m 5); ``noun`` is lines | rows | keys | files."""
    bare = _QUOTED.sub(" ", text or "")
    out = []
    for m in _EN.finditer(bare):
        n, whole = _number(m.group(1)), (_number(m.group(2)) if m.group(2) else None)
        out.append((" ".join(m.group(0).split()), n, whole, _NOUNS[m.group(4).lower()]))
    for rx, noun in _JA:
        out += [(m.group(0), int(m.group(1)), None, noun) for m in rx.finditer(bare)]
    return out


def _lines(body: str) -> list[str]:
    return body.splitlines()


def _json(body: str) -> Any:
    """``body`` as JSON, or None when it is not (also when it nests too deep for Python or holds an integer too long
    to read: a file the session wrote is outside input)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _allowed(noun: str, body: str | None, files_changed: int) -> tuple[set[int] | None, str]:
    """The totals a count of ``noun`` may state for ``body``, and how to name them; None when it cannot be counted."""
    if noun == "files":
        return {files_changed}, f"the session created or changed {files_changed} file(s)"
    if body is None:
        return None, "the git diff is not counted in lines, rows or keys: cite the changed file's copy"
    lines = _lines(body)
    full = [ln for ln in lines if ln.strip()]
    if noun == "lines":
        return {len(lines), len(full)}, f"the source has {len(lines)} line(s), {len(full)} non-empty"
    if noun == "rows":
        doc = _json(body)
        rows = {len(full), max(len(full) - 1, 0)} | ({len(doc)} if isinstance(doc, list) else set())
        return rows, f"the source has {len(full)} non-empty line(s)"
    doc = _json(body)
    if not isinstance(doc, dict):
        return None, "the source is not a JSON object, so its keys cannot be counted"
    return {len(doc)}, f"the source's JSON object has {len(doc)} key(s)"


def count_problems(text: str, body: str | None, files_changed: int, *, one_file: bool = False) -> list[str]:
    """Why the counts stated in ``text`` do not hold (empty when they do) for a source whose countable content is
    ``body`` (None: the git diff) while the session created or changed ``files_changed`` files; ``one_file``: the
    source is one of those files, so "1 file" describes it. See the module docstring for the table."""
    problems = []
    for phrase, n, whole, noun in stated_counts(text):
        if noun == "files" and one_file and n == 1 and whole is None:
            continue
        allowed, said = _allowed(noun, body, files_changed)
        if allowed is None:
            problems.append(f"says '{phrase}' but {said}")
        elif whole is not None and (whole not in allowed or n > whole):
            problems.append(f"says '{phrase}' but {said}")
        elif whole is None and n not in allowed:
            problems.append(f"says '{phrase}' but {said} (say a part as 'N of M {noun}')")
    return problems
