"""What a trial's session and its evaluator spent: tokens per model, each API response counted once, and the API list
price estimate of them (README "What a trial costs"; facts: references/transcript-jsonl.md "Usage and cost").

The transcript keeps one ``assistant`` record per content block of a response, every one with the same ``message.id``,
``requestId`` and ``message.usage``: a response is counted once, by its message id. A subagent writes its responses
in ``subagents/<agent>.jsonl``, which is read too. 2.1.332 also writes ``cost-state`` records whose sums are those of
the responses: they are never added. A record of the CLI's own (``message.model`` ``<synthetic>``, an API error shown
as a message) is no response. :class:`UsageMeter` reads a transcript once, then only what was appended (the budget's
check on every poll tick); :func:`read_usage` is its one-shot form.

Prices come from ``references/model-prices.json`` (per model family, dated, with its public source): an estimate only,
named "API list price estimate". A model the table does not list is named in ``unpriced``, never priced at 0.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.resources import read_reference
from live_trial.transcript.reader import ReadResult, iter_records

ESTIMATE_NAME = "API list price estimate"
PRICE_TABLE = "model-prices.json"
#: The four token counts of a Messages API ``usage``, as verdict.json names them.
TOKEN_KINDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
#: What each count is priced at in the table: input, output, cache read, cache write (5-minute rate).
_RATE_OF = {"input_tokens": "input", "output_tokens": "output", "cache_read_input_tokens": "cache_read",
            "cache_creation_input_tokens": "cache_write"}
#: The CLI's ``modelUsage`` keys (``claude -p --output-format json``) for the same four counts.
_CLI_KEYS = {"input_tokens": "inputTokens", "output_tokens": "outputTokens",
             "cache_read_input_tokens": "cacheReadInputTokens",
             "cache_creation_input_tokens": "cacheCreationInputTokens"}
_SYNTHETIC = "<synthetic>"
_DATE_SUFFIX = re.compile(r"-\d{8}$")
_CONTEXT_SUFFIX = re.compile(r"\[[^\]]*\]$")


@dataclass(frozen=True)
class Tokens:
    """Token counts of one or more API responses (all >= 0)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    responses: int = 0
    """How many API responses these counts are the sum of."""

    @classmethod
    def of_usage(cls, usage: Mapping[str, Any], responses: int = 1) -> "Tokens":
        """The counts of one Messages API ``usage`` object (a missing or non-integer count is 0)."""
        i, o, r, w = (_count(usage.get(k)) for k in TOKEN_KINDS)
        return cls(i, o, r, w, responses)

    def __add__(self, other: "Tokens") -> "Tokens":
        return Tokens(*(getattr(self, k) + getattr(other, k) for k in (*TOKEN_KINDS, "responses")))

    def to_doc(self) -> dict[str, int]:
        """``{input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens, responses}``."""
        return {k: getattr(self, k) for k in (*TOKEN_KINDS, "responses")}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class Usage:
    """Tokens per model (the model the response names), each API response once."""

    by_model: Mapping[str, Tokens] = field(default_factory=dict)

    @property
    def responses(self) -> int:
        """API responses counted, all models."""
        return sum(t.responses for t in self.by_model.values())

    def total(self) -> Tokens:
        """The counts of every model added up."""
        out = Tokens()
        for tokens in self.by_model.values():
            out = out + tokens
        return out

    def to_doc(self) -> dict[str, Any]:
        """``{responses, by_model: {model: Tokens.to_doc()}}`` (models sorted)."""
        return {"responses": self.responses, "by_model": {m: self.by_model[m].to_doc() for m in sorted(self.by_model)}}


class UsageMeter:
    """Reads the usage of transcripts incrementally: each call of :meth:`read` parses only the complete lines appended
    since the last one (a file that shrank is read again from its start). Responses are kept by message id, so a
    response written as several records, or seen in two files, counts once."""

    def __init__(self) -> None:
        self._offsets: dict[str, int] = {}
        self._responses: dict[str, tuple[str, Tokens]] = {}

    def read(self, paths: Iterable[str | os.PathLike[str]]) -> Usage:
        """The usage of every response in ``paths`` so far (missing files give nothing), one record in memory at a
        time. Never raises for content."""
        for path in paths:
            key = str(path)
            start = self._offsets.get(key, 0)
            try:
                if os.stat(path).st_size < start:
                    start = 0           # replaced: read again from the start
            except OSError:
                continue
            result = ReadResult(end_offset=start)
            for rec in iter_records(path, result=result, start=start, select=may_hold_assistant):
                self.take(rec)
            self._offsets[key] = max(result.end_offset, start)
        return self.usage()

    def usage(self) -> Usage:
        """The usage of the responses taken so far."""
        by_model: dict[str, Tokens] = {}
        for model, tokens in self._responses.values():
            by_model[model] = by_model.get(model, Tokens()) + tokens
        return Usage(by_model)

    def take(self, rec: Mapping[str, Any]) -> None:
        """Count one transcript record when it is an API response (a caller folding a pass of its own over a file
        gives each record here; see the module docstring for what counts)."""
        if rec.get("type") != "assistant" or rec.get("isApiErrorMessage"):
            return
        message = rec.get("message")
        if not isinstance(message, Mapping) or not isinstance(message.get("usage"), Mapping):
            return
        model = str(message.get("model") or "unknown")
        if model == _SYNTHETIC:
            return
        key = message.get("id") or rec.get("requestId") or rec.get("uuid")
        if not key:
            return
        # The records of one response carry the same usage; the last one seen is kept (it is the most complete).
        self._responses[str(key)] = (model, Tokens.of_usage(message["usage"]))


def may_hold_assistant(line: bytes) -> bool:
    r"""False only for a line that cannot be an assistant record (no ``assistant`` and no ``\u`` escape that could
    spell it): such lines are never parsed for usage."""
    return b"assistant" in line or b"\\u" in line


def session_transcripts(transcripts: Iterable[Path]) -> list[Path]:
    """The files a session's usage is read from: each given transcript and the ``subagents/*.jsonl`` beside it
    (a trial's workdir copy keeps them in ``<workdir>/subagents/``; the CLI in ``<session-id>/subagents/``)."""
    out: list[Path] = []
    for path in transcripts:
        path = Path(path)
        out.append(path)
        for folder in (path.parent / "subagents", path.with_suffix("") / "subagents"):
            if folder.is_dir():
                out.extend(sorted(p for p in folder.glob("*.jsonl") if p not in out))
    return out


#: How far from a transcript's end its last ``cost-state`` record is looked for (bytes): 2.1.332 writes it after the
#: session's last turn, so it is among the last records.
COST_STATE_TAIL_BYTES = 256 * 1024


def cli_session_cost(paths: Iterable[str | os.PathLike[str]]) -> float | None:
    """What the CLI itself said the sessions of ``paths`` cost (USD): the ``totalCostUSD`` of the last ``cost-state``
    record near each file's end, added over the files (a session left with ``/clear`` is a file of its own). 2.1.332
    writes one after the session's last turn, priced by the model it requested (references/transcript-jsonl.md "Usage
    and cost"); None when no file has one (2.1.197 writes none). Only the last :data:`COST_STATE_TAIL_BYTES` of a file
    are read. Never added to the tokens, whose sums it repeats. Never raises for content or a missing file."""
    total: float | None = None
    for path in paths:
        try:
            with open(path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - COST_STATE_TAIL_BYTES))
                tail = fh.read()
        except OSError:
            continue
        for line in reversed(tail.split(b"\n")):
            if b"cost-state" not in line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            cost = rec.get("totalCostUSD") if isinstance(rec, dict) and rec.get("type") == "cost-state" else None
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
                total = (total or 0.0) + float(cost)
                break
    return round(total, 6) if total is not None else None


def read_usage(paths: Iterable[str | os.PathLike[str]]) -> Usage:
    """The usage of every response in ``paths`` (see :class:`UsageMeter`)."""
    return UsageMeter().read(paths)


def cli_usage(result: Mapping[str, Any], requested_model: str | None = None) -> tuple[Usage, float | None]:
    """What ``claude -p --output-format json`` reports: ``(tokens per model, total_cost_usd)``.

    ``modelUsage`` gives the counts per model (keyed by the model the CLI requested); without it the top-level
    ``usage`` counts under ``requested_model`` (or ``unknown``). The response count is ``num_turns`` there, else 1
    per model. ``total_cost_usd`` is None when the CLI reported none."""
    per_model = result.get("modelUsage")
    by_model: dict[str, Tokens] = {}
    if isinstance(per_model, Mapping) and per_model:
        for model, counts in per_model.items():
            if isinstance(counts, Mapping):
                i, o, r, w = (_count(counts.get(_CLI_KEYS[k])) for k in TOKEN_KINDS)
                by_model[str(model)] = Tokens(i, o, r, w, 1)
    elif isinstance(result.get("usage"), Mapping):
        by_model[requested_model or "unknown"] = Tokens.of_usage(result["usage"])
    cost = result.get("total_cost_usd")
    reported = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    return Usage(by_model), reported


# ------------------------------------------------------------------------------------------------ prices

@dataclass(frozen=True)
class Estimate:
    """The API list price estimate of some usage: ``usd`` over the models the table prices, ``unpriced`` the models
    it does not (their tokens are in no sum: the estimate is then a lower bound)."""

    usd: float
    unpriced: tuple[str, ...] = ()

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(self.usd + other.usd, tuple(sorted(set(self.unpriced) | set(other.unpriced))))


@lru_cache(maxsize=1)
def price_table() -> dict[str, Any]:
    """``references/model-prices.json``: ``{name, as_of, source, unit, families: {family: {input, output,
    cache_read, cache_write}}}`` (USD per million tokens)."""
    doc: dict[str, Any] = json.loads(read_reference(PRICE_TABLE))
    return doc


def family(model: str) -> str:
    """The price table's family of a model id: without a trailing ``-YYYYMMDD`` and a ``[1m]``-style suffix."""
    return _DATE_SUFFIX.sub("", _CONTEXT_SUFFIX.sub("", model.strip()))


def estimate(usage: Usage, table: Mapping[str, Any] | None = None) -> Estimate:
    """The API list price estimate of ``usage`` in USD (rounded to 6 places), by :func:`price_table` (or ``table``)."""
    families = (table or price_table())["families"]
    usd = 0.0
    unpriced: list[str] = []
    for model, tokens in usage.by_model.items():
        rates = families.get(family(model))
        if rates is None:
            if not all(getattr(tokens, k) == 0 for k in TOKEN_KINDS):
                unpriced.append(model)
            continue
        usd += sum(getattr(tokens, k) * float(rates[_RATE_OF[k]]) for k in TOKEN_KINDS) / 1_000_000
    return Estimate(round(usd, 6), tuple(sorted(unpriced)))


def usage_doc(session: Usage, evaluator: Usage | None, evaluator_cli_usd: float | None, *,
              billed: bool, session_cli_usd: float | None = None) -> dict[str, Any]:
    """verdict.json's ``usage``: what the session and the evaluator used and what it is estimated to cost.

    ``estimate_usd``: the session's tokens at list price plus the evaluator's cost as its CLI reported it (its tokens
    at list price when it reported none); ``unpriced_models`` the models no price was found for (the estimate is then
    a lower bound). ``cost_usd``: the estimate for a real trial; 0 for a rehearsal (``billed`` false: its model is
    scripted, no real API was paid), whose ``estimate_usd`` is what the scripted tokens would cost (the budget's
    measure, README "Budgets"). ``session_cli_usd``: what the CLI said the session cost
    (:func:`cli_session_cost`), shown beside the estimate as ``session.cli_total_cost_usd``, never added to it."""
    table = price_table()
    spent = estimate(session)
    ev_doc = None
    if evaluator is not None:
        ev_estimate = estimate(evaluator)
        ev_doc = {**evaluator.to_doc(), "cli_total_cost_usd": evaluator_cli_usd,
                  "estimate_usd": None if ev_estimate.unpriced else ev_estimate.usd}
        spent = spent + (Estimate(evaluator_cli_usd) if evaluator_cli_usd is not None else ev_estimate)
    return {"billed": billed, "session": {**session.to_doc(), "cli_total_cost_usd": session_cli_usd},
            "evaluator": ev_doc, "estimate_name": ESTIMATE_NAME,
            "estimate_usd": round(spent.usd, 6), "unpriced_models": list(spent.unpriced),
            "cost_usd": round(spent.usd, 6) if billed else 0.0,
            "price_table": {"as_of": table["as_of"], "source": table["source"]}}


def format_usd(value: float | None, unpriced: Iterable[str] = ()) -> str:
    """``$0.0123`` (4 significant decimals under a dollar), with ``+ no price for M`` when a model was unpriced; ``?``
    for None."""
    if value is None:
        return "?"
    text = f"${value:.4f}" if value < 1 else f"${value:.2f}"
    missing = list(unpriced)
    return f"{text} + no price for {', '.join(missing)}" if missing else text


def format_tokens(doc: Mapping[str, Any]) -> str:
    """One line of a ``Tokens.to_doc()``-shaped mapping: ``in 1,000 · out 100 · cache read 10,000 · cache write
    500``."""
    i, o, r, w = (int(doc.get(k) or 0) for k in TOKEN_KINDS)
    return f"in {i:,} · out {o:,} · cache read {r:,} · cache write {w:,}"
