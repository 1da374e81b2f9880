"""A suite case's stand-in MCP servers (references/suite-format.md ``mcp_fixtures``): a name and the command that starts
the stand-in, its ``./`` words taken from the suite file's folder, passed to the case's trial through the plan."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.acceptance.case_plan import batch_entry
from live_trial.acceptance.suite import load_suite
from live_trial.errors import RefusedInput
from live_trial.jsonfile import schema_errors

SUITE = """skills:
  needs:
    cases:
      - name: offline
        mcp_fixtures:
          db: python3 ./fixtures/fake_db.py --port 0
          github: node /opt/gh.js
"""


def test_a_case_names_its_stand_ins_and_their_relative_words_are_the_suites(tmp_path: Path) -> None:
    (tmp_path / "live-trials.yaml").write_text(SUITE)
    [case] = load_suite(tmp_path / "live-trials.yaml").cases["needs"]
    assert case.mcp_fixtures == (("db", f"python3 {tmp_path / 'fixtures' / 'fake_db.py'} --port 0"),
                                 ("github", "node /opt/gh.js"))
    entry = batch_entry("kit:needs", tmp_path, False, case)
    assert entry["mcp_fixtures"] == dict(case.mcp_fixtures)
    plan = {"schema_version": 1}
    errors = [e for e in schema_errors({**plan, "live_batches": [[entry]]}, "plan.schema.json")
              if e.startswith("live_batches")]
    assert errors == []


@pytest.mark.parametrize("body, words", [("'bad name': x", "bad name"), ("db: ''", "db")])
def test_a_bad_stand_in_is_refused_with_its_line(tmp_path: Path, body: str, words: str) -> None:
    (tmp_path / "live-trials.yaml").write_text("skills:\n  needs:\n    cases:\n      - name: c\n        mcp_fixtures:\n"
                                               f"          {body}\n")
    with pytest.raises(RefusedInput) as err:
        load_suite(tmp_path / "live-trials.yaml")
    assert "live-trials.yaml:6" in err.value.message and words in err.value.message, err.value.message
