"""The shape of verdict.json in one place: the schema's keys are the Verdict's fields, its document is written from
them, and what the verdict records as it is from the workdir's facts and the trial's findings is marked where those
are declared (a new field of verdict.json touches the schema, the Verdict and the code that finds its value)."""
from __future__ import annotations

from dataclasses import fields

from live_trial.acceptance.findings import Findings
from live_trial.acceptance.verdict_doc import AS_IS, Verdict, as_is
from live_trial.acceptance.verdict_facts import VerdictFacts
from live_trial.resources import load_schema

SCHEMA = load_schema("live-trial-verdict.schema.json")


def test_the_schemas_keys_are_the_verdicts_fields():
    names = [f.name for f in fields(Verdict)]
    assert set(SCHEMA["properties"]) == {"schema_version", *names}
    written_only_when_set = {f.name for f in fields(Verdict) if f.default is None}
    assert written_only_when_set == {"working_folder", "summary", "override", "usage", "plugin_activity"}
    assert not written_only_when_set & set(SCHEMA["required"])


def test_what_is_recorded_as_it_is_has_a_verdict_field_of_the_same_name():
    names = {f.name for f in fields(Verdict)}
    for source in (Findings, VerdictFacts):
        marked = {f.name for f in fields(source) if f.metadata == AS_IS}
        assert marked and marked <= names, source
    found = Findings(launch="PASS", completion="FAIL", nudge_count=2, stop_reason="hang")
    assert as_is(found)["nudge_count"] == 2 and as_is(found)["stop_reason"] == "hang"
    assert "target" not in as_is(found) and "proof" not in as_is(found)      # normalised by derive, not as it is
