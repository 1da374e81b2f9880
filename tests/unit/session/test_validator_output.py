"""``claude plugin validate``'s output as each supported CLI prints it (captured from 2.1.197 and 2.1.332 on the test
plugins, the example plugin and broken manifests; references/transcript-jsonl.md "Validator, nested variables and the
doctor probe"): the load checks are read the same on both versions, 2.1.332's plugin-directory checks are kept apart,
and no line of either format is left unknown."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from live_trial.session import plugin_check as pc

CAPTURED = Path(__file__).parents[1] / "validator"
D = "/plugins/p"
AUTHOR = "author: No author information provided. Consider adding author details for plugin attribution"
MANIFEST = f"{D}/.claude-plugin/plugin.json"


def captured(name: str) -> str:
    return (CAPTURED / f"{name}.txt").read_text().replace("@PLUGIN@", D).replace("@REPO@", "/repo")


@pytest.mark.parametrize("name", sorted(p.stem for p in CAPTURED.glob("*.txt")))
def test_every_line_of_both_formats_is_known(name):
    assert pc.read_output(captured(name), Path(D)).unknown == []


def test_a_test_plugin_has_the_same_one_warning_on_both_versions():
    for version in ("197", "332"):
        errors, warnings = pc.parse_output(captured(f"{version}-trialkit"), Path(D))
        assert (errors, warnings) == ([], [(MANIFEST, AUTHOR)]), version


def test_a_bad_manifest_has_the_same_one_error_on_both_versions():
    for version in ("197", "332"):
        errors, warnings = pc.parse_output(captured(f"{version}-badver"), Path(D))
        assert errors == [(MANIFEST, "version: Invalid input: expected string, received number")], version
        assert warnings == [], version


def test_skill_remarks_keep_their_skill_file_on_both_versions():
    for version in ("197", "332"):
        errors, warnings = pc.parse_output(captured(f"{version}-skillerr"), Path(D))
        assert errors == [] and [p for p, _ in warnings] == [f"{D}/skills/b/SKILL.md", f"{D}/skills/a/SKILL.md"]


def test_the_plugin_directory_checks_are_kept_apart_and_provides_is_read():
    found = pc.read_output(captured("332-trialkit"), Path(D))
    assert found.provides == [f"skills: trialkit:{s}" for s in ("choose", "mark", "mark2", "mark3", "report")]
    assert [(kind, text.split(":")[0]) for kind, text in found.listing][:2] == [
        ("refused", "LICENSE"), ("warning", ".claude-plugin/plugin.json icon")]
    assert found.listing[2][0] == "about"
    assert found.listing[2][1].startswith("The repository root was taken to be /repo")
    assert not any("Fix:" in text for _, text in found.listing)
    full = pc.read_output(captured("332-full"), Path(D))
    assert full.errors == full.warnings == [] and [k for k, _ in full.listing] == ["refused", "warning", "advice"]
    assert full.provides == ["hooks: Stop command true", "skills: full:g", "commands: full:c", "agents: full:ag"]
    assert [k for k, _ in pc.read_output(captured("332-nojson"), Path(D)).listing] == [
        "refused", "refused", "warning", "note", "about"]


def test_an_unknown_line_is_reported_not_taken_for_a_remark():
    text = captured("332-hello").replace("Provides:", "Offers now:")
    found = pc.read_output(text, Path(D))
    assert found.unknown == ["Offers now:", "❯ skills: hello:greet"] and found.warnings == []


def _fake_claude(tmp_path: Path, text: str, code: int) -> str:
    out = tmp_path / "validate.out"
    out.write_text(text)
    script = tmp_path / "claude"
    script.write_text(f"#!/bin/sh\necho x >> {tmp_path}/runs\ncat {out}\nexit {code}\n")
    script.chmod(0o755)
    return str(script)


def _plugin(root: Path) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "p"}')
    return root


def test_check_plugins_gives_the_verdict_only_load_remarks_and_names_unknown_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("LIVE_TRIAL_CACHE_DIR", str(tmp_path / "cache"))
    plugin = _plugin(tmp_path / "p")
    text = captured("332-trialkit").replace(D, str(plugin))
    assert pc.check_plugins(_fake_claude(tmp_path, text, 0), [plugin], dict(os.environ)) == [f"plugin p: {AUTHOR} "
                                                                                              "(plugin.json)"]
    odd = tmp_path / "odd"
    odd.mkdir()
    plugin2 = _plugin(tmp_path / "p2")
    warnings = pc.check_plugins(_fake_claude(odd, text.replace(str(plugin), str(plugin2)) + "Brand new section:\n", 0),
                                [plugin2], dict(os.environ))
    assert warnings[0].endswith("(plugin.json)") and "printed 1 line(s) this harness does not know, first: " \
        "\"Brand new section:\"" in warnings[1] and "live-trial doctor --cli" in warnings[1]


def test_a_cache_written_by_the_older_parser_is_never_reused(tmp_path, monkeypatch):
    """A version-1 cache (the parser that carried a section's kind into 2.1.332's new lines) holds 9 warnings for
    the same key shape: it is ignored, the validator runs again and the cache is rewritten as version 2."""
    from live_trial.jsonfile import read_json

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("LIVE_TRIAL_CACHE_DIR", str(cache))
    plugin = _plugin(tmp_path / "p")
    claude = _fake_claude(tmp_path, captured("332-trialkit").replace(D, str(plugin)), 0)
    stale = {"plugin_dir": str(plugin), "exit_code": 0, "errors": [], "warnings": [["x", "skills: p:mark"]] * 9,
             "checked_at": "2026-12-01T00:00:00Z", "duration_s": 1.0}
    old_key = "sha256:" + "0" * 64
    (cache / pc.CACHE_FILE).write_text(__import__("json").dumps({"version": 1, "entries": {old_key: stale}}))
    (result,) = pc.validate_plugins(claude, [plugin], dict(os.environ))
    assert not result.cached and result.warnings == [(str(plugin / ".claude-plugin" / "plugin.json"), AUTHOR)]
    doc = read_json(cache / pc.CACHE_FILE, pc.CACHE_SCHEMA)
    assert doc["version"] == 2 and old_key not in doc["entries"]
    assert pc.validate_plugins(claude, [plugin], dict(os.environ))[0].cached is True


def test_the_key_names_the_parser_and_the_cli_version(tmp_path, monkeypatch):
    plugin = _plugin(tmp_path / "p")
    claude = _fake_claude(tmp_path, "", 0)
    key = pc.validator_key(claude, plugin)
    assert pc.validator_key(claude, plugin, "2.1.332") != key != pc.validator_key(claude, plugin, "2.1.197")
    monkeypatch.setattr(pc, "PARSER_ID", "another parser")
    assert pc.validator_key(claude, plugin) != key


def test_a_validator_that_never_answers_is_ended_with_every_process_it_started(tmp_path):
    """A CLI whose validator hangs and leaves a child holding its output pipe: the harness stops waiting at the
    timeout (the whole process group is ended), and the answer says so."""
    import time

    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\n(sleep 60; echo late) &\nexec sleep 60\n")
    fake.chmod(0o755)
    started = time.monotonic()
    [answer] = pc.validate_plugins(str(fake), [tmp_path], dict(os.environ), timeout_s=1, cache=False)
    assert time.monotonic() - started < 10
    assert answer.problem == "no answer within 1s"


@pytest.mark.parametrize("name", sorted(p.stem for p in CAPTURED.glob("*.txt")))
def test_every_captured_output_ends_with_its_result_line(name):
    """The result line is the validator's own answer: the doctor requires it (silence with exit 0 is not one)."""
    assert pc.read_output(captured(name), Path(D)).result.startswith(("✔ Validation passed", "✘ Validation"))


def test_silence_has_no_result_line():
    assert pc.read_output("", Path(D)).result is None
