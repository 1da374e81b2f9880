"""What a session chose on its own, read from transcripts the real CLI wrote (references/transcript-jsonl.md "A skill
the model picks on its own"): the Skill call by its qualified or bare name, a sibling chosen instead, plain work, a
slash command typed by a person, the step and the tools before the call, and the skill listing shown."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.transcript.activation import (
    SKILL_CALL,
    SLASH_COMMAND,
    SkillListing,
    TriggerWatch,
    choice_of,
    read_choice,
)

DATA = Path(__file__).resolve().parents[1] / "transcripts"
#: where the plugin's skills were when the transcripts were recorded (their Base directory records name them)
DIRS = {"/work/wt/activation/examples/plugins/hello/skills/greet": "hello:greet",
        "/work/wt/activation/examples/plugins/hello/skills/greet-style": "hello:greet-style"}
VERSIONS = ("197", "332")


def choice(version: str, name: str, dirs=DIRS):
    return choice_of([DATA / f"cli{version}-activation-{name}.jsonl"], dirs)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_qualified_skill_call_is_the_target_invoked_at_step_0(version):
    got = choice(version, "qualified").invoked("hello:greet")
    assert got is not None and (got.via, got.called_as, got.step, got.after_tools) == (
        SKILL_CALL, "hello:greet", 0, ())


@pytest.mark.parametrize("version", VERSIONS)
def test_a_bare_name_counts_as_the_skill_the_cli_resolved_it_to(version):
    got = choice(version, "bare").invoked("hello:greet")
    assert got is not None and (got.called_as, got.name, got.succeeded) == ("greet", "hello:greet", True)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_bare_name_resolves_by_the_attribution_when_the_folder_is_unknown(version):
    got = choice(version, "bare", dirs={}).invoked("hello:greet")       # the next assistant record's attributionSkill
    assert got is not None and got.called_as == "greet"


@pytest.mark.parametrize("version", VERSIONS)
def test_a_sibling_chosen_instead_is_named_with_its_step_and_the_tools_before(version):
    found = choice(version, "sibling")
    assert found.invoked("hello:greet") is None
    assert found.others("hello:greet") == ("hello:greet-style",)
    sibling = found.invoked("hello:greet-style")
    assert sibling is not None and (sibling.step, sibling.after_tools) == (1, ("Read",))


@pytest.mark.parametrize("version", VERSIONS)
def test_plain_work_invokes_nothing(version):
    found = choice(version, "plain")
    assert (found.invoked("hello:greet"), found.others("hello:greet"), found.steps) == (None, (), 1)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_typed_slash_command_is_an_invocation_by_slash_command(version):
    got = choice(version, "slash").invoked("hello:greet")
    assert got is not None and (got.via, got.step) == (SLASH_COMMAND, None)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_listing_names_every_loaded_skill_with_its_description(version):
    listing = choice(version, "plain").listing
    assert listing is not None and {"hello:greet", "hello:greet-style"} <= set(listing.names)
    entries = listing.entries()
    assert entries["hello:greet"].startswith("Writes a greeting file greeting.txt")
    # 2.1.332 escapes < and > in the listing, 2.1.197 writes them as they are
    assert ("&lt;name&gt;" if version == "332" else "<name>") in entries["hello:greet"]
    assert entries["hello:greet-style"].startswith("Asks which greeting style")
    assert listing.digest == choice(version, "qualified").listing.digest       # the same plugins, the same listing


def test_a_failed_skill_call_is_no_invocation():
    records = [{"type": "user", "uuid": "u1", "timestamp": "2026-12-06T00:00:00Z",
                "message": {"role": "user", "content": "greet Ada"}},
               {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-12-06T00:00:01Z",
                "message": {"id": "m1", "content": [{"type": "tool_use", "id": "t1", "name": "Skill",
                                                     "input": {"skill": "hello:greet"}}]}},
               {"type": "user", "uuid": "u2", "parentUuid": "a1", "timestamp": "2026-12-06T00:00:02Z",
                "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                         "content": "<tool_use_error>Unknown skill</tool_use_error>"}]}}]
    found = read_choice(records)
    assert found.invoked("hello:greet") is None and found.invocations[0].succeeded is False


def test_a_listing_entry_runs_to_the_next_one():
    listing = SkillListing(("a:x", "b"), "- a:x: first line\nsecond line\n- b: other")
    assert listing.entries() == {"a:x": "first line\nsecond line", "b": "other"}


def test_the_watch_sees_the_trigger_once_its_result_is_written(tmp_path):
    lines = (DATA / "cli332-activation-qualified.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"tool_result"' in line)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines[:cut]) + "\n")
    watch = TriggerWatch(lambda: path, "hello:greet", DIRS)
    assert watch.look() is None                         # the call, no result yet
    path.write_text("\n".join(lines) + "\n")
    got = watch.look()
    assert got is not None and got.step == 0
    assert all(json.loads(line).get("type") != "attachment" for line in map(json.dumps, watch.kept))
