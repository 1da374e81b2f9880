from __future__ import annotations

import json

from live_trial.cli.main import main


def test_self_test_runs_every_offline_group(capsys):
    assert main(["self-test", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "OK" and set(out["checks"]) == {"backend", "status", "schemas_and_references"}


def test_self_test_reports_a_broken_schema(monkeypatch, capsys):
    from live_trial.cli import selftest_cmd

    monkeypatch.setattr(selftest_cmd, "shipped_file_problems", lambda: ["schema x.schema.json: broken"])
    assert main(["self-test"]) == 1
    assert "schema x.schema.json: broken" in capsys.readouterr().out
