"""The usage of a session read from its transcripts: each API response once (references/transcript-jsonl.md "Usage and
cost"), subagents included, 2.1.332's cost-state never added; and the API list price estimate."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.transcript.usage import (
    Tokens,
    Usage,
    UsageMeter,
    cli_usage,
    estimate,
    family,
    read_usage,
    session_transcripts,
    usage_doc,
)


def _assistant(msg_id: str, model: str, usage: dict, block: str = "text", **extra: object) -> dict:
    return {"type": "assistant", "uuid": f"u-{msg_id}-{block}", "requestId": f"req-{msg_id}",
            "message": {"id": msg_id, "model": model, "role": "assistant", "content": [{"type": block}],
                        "usage": usage}, **extra}


def _usage(i: int, o: int, r: int = 0, w: int = 0) -> dict:
    return {"input_tokens": i, "output_tokens": o, "cache_read_input_tokens": r, "cache_creation_input_tokens": w,
            "service_tier": "standard"}


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_one_response_written_as_several_records_counts_once(tmp_path: Path) -> None:
    u = _usage(1000, 100, 10000, 500)
    path = _write(tmp_path / "t.jsonl", [_assistant("msg_1", "claude-sonnet-4-5", u, "text"),
                                         _assistant("msg_1", "claude-sonnet-4-5", u, "tool_use"),
                                         _assistant("msg_2", "claude-sonnet-4-5", _usage(2000, 200))])
    used = read_usage([path])
    assert used.responses == 2
    assert used.by_model["claude-sonnet-4-5"] == Tokens(3000, 300, 10000, 500, responses=2)


def test_cost_state_and_synthetic_records_are_never_added(tmp_path: Path) -> None:
    cost_state = {"type": "cost-state", "totalCostUSD": 1.5,
                  "modelUsage": {"claude-opus-5-5": {"inputTokens": 1000, "outputTokens": 100}}}
    synthetic = _assistant("msg_x", "<synthetic>", _usage(0, 0))
    error = _assistant("msg_e", "claude-sonnet-4-5", _usage(9, 9), isApiErrorMessage=True)
    path = _write(tmp_path / "t.jsonl", [_assistant("msg_1", "claude-sonnet-4-5", _usage(1000, 100)), synthetic,
                                         error, cost_state])
    used = read_usage([path])
    assert used.to_doc() == {"responses": 1, "by_model": {"claude-sonnet-4-5": Tokens(1000, 100, responses=1).to_doc()}}


def test_subagent_transcripts_are_found_and_counted_by_model(tmp_path: Path) -> None:
    main = _write(tmp_path / "transcript.jsonl", [_assistant("msg_1", "claude-sonnet-4-5", _usage(1000, 100))])
    _write(tmp_path / "subagents" / "agent-a1.jsonl",
           [_assistant("msg_s", "claude-haiku-4-5", _usage(50, 5), isSidechain=True)])
    live = tmp_path / "projects" / "sid.jsonl"      # the CLI's own layout: <session-id>/subagents/
    _write(live, [])
    _write(tmp_path / "projects" / "sid" / "subagents" / "agent-b.jsonl", [])
    paths = session_transcripts([main])
    assert [p.name for p in paths] == ["transcript.jsonl", "agent-a1.jsonl"]
    assert [p.name for p in session_transcripts([live])] == ["sid.jsonl", "agent-b.jsonl"]
    used = read_usage(paths)
    assert used.by_model["claude-haiku-4-5"] == Tokens(50, 5, responses=1)
    assert used.total() == Tokens(1050, 105, responses=2)


def test_the_meter_reads_only_what_was_appended_and_never_recounts(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [_assistant("msg_1", "claude-sonnet-4-5", _usage(1000, 100))])
    meter = UsageMeter()
    assert meter.read([path]).responses == 1
    with path.open("a") as fh:
        fh.write(json.dumps(_assistant("msg_1", "claude-sonnet-4-5", _usage(1000, 100), "tool_use")) + "\n")
        fh.write(json.dumps(_assistant("msg_2", "claude-sonnet-4-5", _usage(7, 3)))[:40])   # a torn line: not yet
    assert meter.read([path]).total() == Tokens(1000, 100, responses=1)
    with path.open("a") as fh:
        fh.write(json.dumps(_assistant("msg_2", "claude-sonnet-4-5", _usage(7, 3)))[40:] + "\n")
    assert meter.read([path]).total() == Tokens(1007, 103, responses=2)
    assert meter.read([tmp_path / "missing.jsonl"]).responses == 2


def test_family_strips_the_date_and_the_context_suffix() -> None:
    assert family("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5"
    assert family("claude-opus-4-8[1m]") == "claude-opus-4-8"
    assert family("claude-opus-5-5") == "claude-opus-5-5"


def test_estimate_prices_each_count_and_names_a_model_without_price() -> None:
    table = {"families": {"claude-sonnet-4-5": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}}}
    used = Usage({"claude-sonnet-4-5-20250929": Tokens(1000, 100, 10000, 500, 1),
                  "claude-opus-5-5": Tokens(10, 1, responses=1)})
    est = estimate(used, table)
    assert est.usd == pytest.approx((1000 * 3 + 100 * 15 + 10000 * 0.3 + 500 * 3.75) / 1e6)
    assert est.unpriced == ("claude-opus-5-5",)


def test_the_shipped_table_is_dated_with_its_source_and_prices_sonnet() -> None:
    est = estimate(Usage({"claude-sonnet-4-5": Tokens(1_000_000, 0, responses=1)}))
    assert est.usd == 3.0 and est.unpriced == ()
    doc = usage_doc(Usage({"claude-sonnet-4-5": Tokens(1_000_000, 0, responses=1)}), None, None, billed=True)
    assert doc["price_table"]["source"].startswith("https://") and doc["price_table"]["as_of"]
    assert doc["estimate_name"] == "API list price estimate"


def test_usage_doc_adds_the_evaluators_reported_cost_and_a_rehearsal_costs_nothing() -> None:
    session = Usage({"claude-sonnet-4-5": Tokens(1_000_000, 0, responses=3)})
    evaluator = Usage({"claude-opus-5-5": Tokens(7000, 700, responses=1)})
    live = usage_doc(session, evaluator, 0.042, billed=True)
    assert live["estimate_usd"] == pytest.approx(3.042) and live["cost_usd"] == pytest.approx(3.042)
    assert live["evaluator"]["cli_total_cost_usd"] == 0.042
    assert live["evaluator"]["estimate_usd"] is None          # opus-5-5 has no row: never a 0
    rehearsal = usage_doc(session, evaluator, 0.042, billed=False)
    assert rehearsal["cost_usd"] == 0 and rehearsal["estimate_usd"] == pytest.approx(3.042)
    unreported = usage_doc(session, evaluator, None, billed=True)
    assert unreported["unpriced_models"] == ["claude-opus-5-5"]


def test_cli_usage_reads_model_usage_or_falls_back_to_usage() -> None:
    doc = {"total_cost_usd": 0.0105, "usage": _usage(7000, 700),
           "modelUsage": {"claude-haiku-4-5": {"inputTokens": 7000, "outputTokens": 700, "cacheReadInputTokens": 1,
                                               "cacheCreationInputTokens": 2, "costUSD": 0.0105}}}
    used, cost = cli_usage(doc)
    assert cost == 0.0105 and used.by_model["claude-haiku-4-5"] == Tokens(7000, 700, 1, 2, 1)
    used, cost = cli_usage({"usage": _usage(5, 6)}, "claude-sonnet-4-5")
    assert cost is None and used.by_model == {"claude-sonnet-4-5": Tokens(5, 6, responses=1)}


def test_the_clis_own_session_cost_is_the_last_cost_state_near_each_files_end(tmp_path: Path) -> None:
    """2.1.332 writes a cost-state record after the session's last turn (a running total): the last one of each file
    stands, files a trial left with /clear add up; 2.1.197 writes none (None, never 0). Never added to the tokens."""
    from live_trial.transcript.usage import cli_session_cost

    def state(usd: float) -> dict:
        return {"type": "cost-state", "sessionId": "s", "totalCostUSD": usd, "modelUsage": {}}
    first = _write(tmp_path / "a.jsonl", [state(0.01), _assistant("msg_1", "claude-sonnet-4-5", _usage(10, 1)),
                                          state(0.04)])
    second = _write(tmp_path / "b.jsonl", [state(0.02)])
    none = _write(tmp_path / "c.jsonl", [_assistant("msg_2", "claude-sonnet-4-5", _usage(10, 1))])
    assert cli_session_cost([first, second, none, tmp_path / "missing.jsonl"]) == 0.06
    assert cli_session_cost([none]) is None
    assert read_usage([first]).responses == 1
    doc = usage_doc(read_usage([first]), None, None, billed=True, session_cli_usd=0.04)
    assert doc["session"]["cli_total_cost_usd"] == 0.04 and doc["estimate_usd"] != 0.04
