"""What a trial cost, in the words of ``ls``, ``show``, report.html, JUnit and the GitHub summary (README "What a
trial costs"), from a verdict's ``usage`` (:func:`live_trial.transcript.usage.usage_doc`). Pure functions of the
document: nothing is read here.

A rehearsal is not billed: its cost is 0, and its scripted tokens' API list price estimate is shown as an estimate
only. A model without a price in the table is named, never counted as free.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from live_trial.transcript.usage import TOKEN_KINDS, format_tokens, format_usd

_SHORT = {"input_tokens": "in", "output_tokens": "out", "cache_read_input_tokens": "cache_read",
          "cache_creation_input_tokens": "cache_write"}


def usage_of(verdict: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The verdict's ``usage``, None when it has none (a verdict written before it was kept, or no transcript)."""
    usage = (verdict or {}).get("usage")
    return usage if isinstance(usage, Mapping) else None


def cost_cell(verdict: Mapping[str, Any] | None) -> str:
    """The ``ls`` column: ``$0.1677`` (a live trial), ``$0 (rehearsal)``, ``-`` without usage; ``+ no price for M``
    when a model has no price."""
    usage = usage_of(verdict)
    if usage is None:
        return "-"
    if not usage.get("billed"):
        return "$0 (rehearsal)"
    return format_usd(usage.get("cost_usd"), usage.get("unpriced_models") or ())


def totals(usage: Mapping[str, Any], part: str = "session") -> dict[str, int]:
    """The four token counts and ``responses`` of ``part`` (``session`` or ``evaluator``), all models added."""
    out = {k: 0 for k in (*TOKEN_KINDS, "responses")}
    for counts in ((usage.get(part) or {}).get("by_model") or {}).values():
        for key in out:
            out[key] += int(counts.get(key) or 0)
    return out


def usage_lines(verdict: Mapping[str, Any] | None) -> list[str]:
    """``show``'s lines: the cost, the session's tokens per model, the evaluator's with its CLI-reported cost, the
    price table's date and source. Empty without usage."""
    usage = usage_of(verdict)
    if usage is None:
        return []
    unpriced = usage.get("unpriced_models") or ()
    estimate = format_usd(usage.get("estimate_usd"), unpriced)
    if usage.get("billed"):
        head = f"cost: {format_usd(usage.get('cost_usd'), unpriced)} ({usage.get('estimate_name')})"
    else:
        head = (f"cost: $0 (a rehearsal: no real API was paid; its scripted tokens at list price: {estimate}, "
                "estimate only)")
    out = [head]
    session = usage.get("session") or {}
    for model, counts in (session.get("by_model") or {}).items():
        out.append(f"  session {model}: {format_tokens(counts)} ({counts.get('responses', 0)} responses)")
    if session.get("cli_total_cost_usd") is not None:
        out.append(f"  session's cost as its CLI reported it: {format_usd(session.get('cli_total_cost_usd'))}")
    evaluator = usage.get("evaluator")
    if isinstance(evaluator, Mapping):
        for model, counts in (evaluator.get("by_model") or {}).items():
            out.append(f"  evaluator {model}: {format_tokens(counts)}")
        out.append(f"  evaluator's cost as its CLI reported it: {format_usd(evaluator.get('cli_total_cost_usd'))}")
    table = usage.get("price_table") or {}
    out.append(f"  prices: {table.get('source')} (as of {table.get('as_of')})")
    return out


def cost_table(verdict: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """report.html's cost section: ``{head, rows: [{part, model, input, output, cache_read, cache_write, responses}],
    evaluator_cli, session_cli, prices}`` (``head``: the first line of :func:`usage_lines`); None without usage."""
    usage = usage_of(verdict)
    if usage is None:
        return None
    rows = []
    for part in ("session", "evaluator"):
        for model, counts in ((usage.get(part) or {}).get("by_model") or {}).items():
            rows.append({"part": part, "model": model, "responses": counts.get("responses", 0),
                         **{_SHORT[k]: f"{int(counts.get(k) or 0):,}" for k in TOKEN_KINDS}})
    evaluator = usage.get("evaluator") if isinstance(usage.get("evaluator"), Mapping) else {}
    session_cli = (usage.get("session") or {}).get("cli_total_cost_usd")
    table = usage.get("price_table") or {}
    return {"head": usage_lines(verdict)[0], "rows": rows,
            "evaluator_cli": format_usd(evaluator.get("cli_total_cost_usd")) if evaluator else None,
            "session_cli": format_usd(session_cli) if session_cli is not None else None,
            "prices": f"{table.get('source')} (as of {table.get('as_of')})"}


def junit_properties(verdict: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """JUnit ``<property>`` pairs: ``cost_usd``, ``estimate_usd``, ``billed``, the session's and the evaluator's
    token totals (``tokens.session.in`` …), ``unpriced_models``. Empty without usage."""
    usage = usage_of(verdict)
    if usage is None:
        return []
    props = [("cost_usd", f"{float(usage.get('cost_usd') or 0):.6f}"),
             ("estimate_usd", f"{float(usage.get('estimate_usd') or 0):.6f}"),
             ("billed", str(bool(usage.get("billed"))).lower())]
    for part in ("session", "evaluator"):
        if part == "evaluator" and not isinstance(usage.get("evaluator"), Mapping):
            continue
        for key, value in totals(usage, part).items():
            props.append((f"tokens.{part}.{_SHORT.get(key, key)}", str(value)))
    evaluator = usage.get("evaluator")
    if isinstance(evaluator, Mapping) and evaluator.get("cli_total_cost_usd") is not None:
        props.append(("evaluator_cli_total_cost_usd", f"{float(evaluator['cli_total_cost_usd']):.6f}"))
    if usage.get("unpriced_models"):
        props.append(("unpriced_models", ",".join(usage["unpriced_models"])))
    return props


def suite_cost(verdicts: list[Mapping[str, Any] | None],
               activation_runs: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The sum over a suite's trials and activation runs: ``{cost_usd, estimate_usd, trials, activation_sessions,
    unpriced_models}`` (trials: those with usage; activation_sessions: the sessions of the activation runs whose
    activation.json records usage, its acceptance trial counted among them)."""
    cost = estimate = 0.0
    unpriced: set[str] = set()
    counted = sessions = 0
    pairs: list[tuple[Mapping[str, Any] | None, bool]] = [(v, False) for v in verdicts]
    for doc, is_run in pairs + [(d, True) for d in activation_runs]:
        usage = usage_of(doc)
        if usage is None or doc is None:
            continue
        if is_run:
            sessions += activation_sessions(doc)
        else:
            counted += 1
        cost += float(usage.get("cost_usd") or 0)
        estimate += float(usage.get("estimate_usd") or 0)
        unpriced.update(usage.get("unpriced_models") or ())
    return {"cost_usd": round(cost, 6), "estimate_usd": round(estimate, 6), "trials": counted,
            "activation_sessions": sessions, "unpriced_models": sorted(unpriced)}


def activation_sessions(doc: Mapping[str, Any]) -> int:
    """How many sessions an activation run's activation.json records (every prompt's runs)."""
    return sum(len(p.get("runs") or []) for p in doc.get("prompts") or [])


def suite_line(total: Mapping[str, Any]) -> str:
    """``cost: $0.42 over 3 trials (API list price estimate $0.50)``; ``... over 3 trials and 8 activation sessions``
    when activation runs spent too."""
    unpriced = total.get("unpriced_models") or ()
    sessions = int(total.get("activation_sessions") or 0)
    what = f"{total.get('trials', 0)} trials" + (f" and {sessions} activation sessions" if sessions else "")
    return (f"cost: {format_usd(total.get('cost_usd'), unpriced)} over {what} "
            f"(API list price estimate {format_usd(total.get('estimate_usd'), unpriced)})")
