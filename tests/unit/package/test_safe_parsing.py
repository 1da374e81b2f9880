"""Hostile input is refused in one line naming the file, never a hang, a blow-up or a traceback: YAML alias bombs
in frontmatter and scenarios, oversized files, deep nesting, 5000-digit integers, text that is not UTF-8; and one
plugin with a broken manifest refuses only its own skills (README Troubleshooting)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from live_trial.acceptance.plan import plan
from live_trial.cli.main import main
from live_trial.closure.index import PluginIndex
from live_trial.closure.manifest import FRONTMATTER_MAX_BYTES, ClosureError, read_frontmatter
from live_trial.closure.pinning import pin
from live_trial.closure.target import resolve_target
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json
from live_trial.rehearsal.scenario import load_scenario
from live_trial.rehearsal.scenario_file import SCENARIO_MAX_BYTES
from live_trial.resources import repo_root
from live_trial.trial.facts import TrialRequest
from live_trial.trial.runner import Trial

LIVE = "---\nname: {name}\ndescription: d\nallowed-tools: [Skill]\n---\nbody\n"
HAPPY = repo_root() / "examples" / "scenarios" / "greet-happy.yaml"


def alias_bomb(levels: int = 6, width: int = 10, key: str = "hooks") -> str:
    """A billion-laughs YAML: each level lists the previous one ``width`` times (width**levels values expanded)."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    lines.append(f"{key}: *a{levels - 1}")
    return "\n".join(lines)


def plugin(root: Path, name: str, skills: dict[str, str], manifest: bytes | None = None) -> Path:
    folder = root / name
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_bytes(manifest or json.dumps({"name": name}).encode())
    for skill, text in skills.items():
        (folder / "skills" / skill).mkdir(parents=True)
        (folder / "skills" / skill / "SKILL.md").write_text(text)
    return folder


def refusal(kind, fn):
    """``(the raised error's ExceptionInfo, peak Python memory in bytes)`` of ``fn()``, which must raise ``kind``."""
    tracemalloc.start()
    try:
        with pytest.raises(kind) as exc:
            fn()
        return exc, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------ frontmatter

@pytest.mark.parametrize("frontmatter, needle", [
    (alias_bomb(), "aliases are not allowed in frontmatter"),
    ("name: s\nx: &a 1\ny: *a", "aliases are not allowed in frontmatter"),
    ("name: s\nx: " + "1" * 5000, "cannot be read"),
    ("name: s\nx: " + "[" * 40 + "]" * 40, "nests deeper than 32 levels"),
    ("name: s\nx: " + "[" * 5000 + "]" * 5000, "not valid YAML"),
    ("name: s\nx: '" + "y" * FRONTMATTER_MAX_BYTES + "'", "longer than 64 KiB"),
])
def test_hostile_frontmatter_is_refused_in_one_line(tmp_path, frontmatter, needle):
    md = tmp_path / "SKILL.md"
    md.write_text(f"---\n{frontmatter}\n---\nbody\n")
    exc, peak = refusal(ClosureError, lambda: read_frontmatter(md))
    assert needle in exc.value.message and str(md) in exc.value.message and "\n" not in exc.value.message
    assert peak < 16 << 20


def test_frontmatter_that_is_not_utf8_is_refused(tmp_path):
    md = tmp_path / "SKILL.md"
    md.write_bytes(b"---\nname: s\ndescription: caf\xe9\n---\n")
    with pytest.raises(ClosureError) as exc:
        read_frontmatter(md)
    assert "not UTF-8" in exc.value.message


def test_an_alias_bomb_refuses_its_own_skill_and_plan_goes_on(tmp_path):
    root = tmp_path / "plugins"
    plugin(root, "p", {"bomb": "---\nname: bomb\nallowed-tools: [Skill]\n" + alias_bomb() + "\n---\n",
                       "fine": LIVE.format(name="fine")})
    doc = plan([root / "p"], tmp_path / "eval-log", watches=[])
    rows = {s["target"]: s for s in doc["skills"]}
    assert rows["p:bomb"]["action"] == "refused" and "aliases are not allowed" in rows["p:bomb"]["reason"]
    assert rows["p:fine"]["action"] == "run"


# ------------------------------------------------------------------ one broken plugin refuses only itself

@pytest.mark.parametrize("manifest, needle", [
    (b"{not json", "plugin.json is malformed"),
    (b'{"name": "bad", "n": ' + b"1" * 5000 + b"}", "integer is too long"),
    (b'{"name": "bad", "n": ' + b"[" * 100000 + b"]" * 100000 + b"}", "nested deeper"),
    (b'{"name": "bad\xff"}', "not UTF-8"),
    (b'{"name": "bad", "pad": "' + b"x" * (1 << 20) + b'"}', "larger than 1 MiB"),
])
def test_a_broken_manifest_refuses_only_its_own_skills(tmp_path, capsys, manifest, needle):
    root = tmp_path / "plugins"
    plugin(root, "good", {"a": LIVE.format(name="a")})
    plugin(root, "bad", {"b": LIVE.format(name="b"), "c": LIVE.format(name="c")}, manifest)
    code = main(["plan", "--plugin-dir", str(root), "--eval-root", str(tmp_path / "eval-log"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    rows = {s["target"]: s for s in doc["skills"]}
    assert code == 0 and rows["good:a"]["action"] == "run"
    assert {rows["bad:b"]["action"], rows["bad:c"]["action"]} == {"refused"}
    assert needle in rows["bad:b"]["reason"] and "plugin.json" in rows["bad:b"]["reason"]
    index = PluginIndex(root)
    target = resolve_target("good:a", index)            # run of a good plugin's skill resolves and pins
    assert [p.name for p in pin(target, index).plugins] == ["good"]


def test_plan_of_one_broken_plugin_dir_is_one_refused_row_per_skill(tmp_path, capsys):
    root = tmp_path / "plugins"
    plugin(root, "good", {"a": LIVE.format(name="a")})
    plugin(root, "bad", {"b": LIVE.format(name="b")}, b"{oops")
    code = main(["plan", "--plugin-dir", str(root / "bad"), "--plugin-dir", str(root / "good"),
                 "--eval-root", str(tmp_path / "eval-log"), "--json"])
    rows = {s["target"]: s["action"] for s in json.loads(capsys.readouterr().out)["skills"]}
    assert code == 0 and rows == {"bad:b": "refused", "good:a": "run"}


# ------------------------------------------------------------------ scenarios

def _scenario(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "scen.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


REPLY = "rules:\n  - id: r\n    reply: {content: [{text: \"hi\"}]}\n"


@pytest.mark.parametrize("text, needle", [
    (alias_bomb(levels=9, key="extra") + "\n" + REPLY, "aliases expand to more than 10000 values"),
    ("a: &a [*a]\n" + REPLY, "refers to itself"),
    (b"rules:\n  - id: r\n    reply: {text: \"caf\xe9\"}\n", "not UTF-8 text"),
    ('rules:\n  - id: r\n    reply: {text: "bad \\ud800"}\n', "invalid Unicode character escape"),
    ("x: '" + "y" * SCENARIO_MAX_BYTES + "'\n" + REPLY, "larger than 1024 KiB"),
    ("x: " + "[" * 70 + "]" * 70 + "\n" + REPLY, "nests deeper than 64"),
    ("x: " + "1" * 5000 + "\n" + REPLY, "cannot be read"),
])
def test_hostile_scenarios_are_refused_in_one_line(tmp_path, text, needle):
    path = _scenario(tmp_path, text)
    exc, peak = refusal(RefusedInput, lambda: load_scenario(path))
    assert needle in exc.value.message and str(path) in exc.value.message and "\n" not in exc.value.message
    assert exc.value.exit_code == 2 and peak < 32 << 20


def test_a_few_aliases_in_a_scenario_are_fine(tmp_path):
    text = "rules:\n  - id: one\n    reply: &reply {content: [{text: \"hi\"}]}\n  - id: two\n    reply: *reply\n"
    assert [r.id for r in load_scenario(_scenario(tmp_path, text)).rules] == ["one", "two"]


def test_a_lone_surrogate_in_a_scenario_given_as_data_is_refused():
    with pytest.raises(RefusedInput) as exc:
        load_scenario({"rules": [{"id": "r", "reply": {"content": [{"text": "bad \ud800"}]}}]})
    assert "scenario field rules/0/reply/content/0/text is not valid UTF-8 text (lone surrogate \\ud800" in exc.value.message


def test_a_run_with_a_hostile_scenario_creates_nothing(tmp_path):
    scen = _scenario(tmp_path, b"rules:\n  - id: r\n    reply: {text: \"\xff\"}\n")
    code = main(["run", "hello:greet", "--plugins-root", str(repo_root() / "examples" / "plugins"),
                 "--rehearsal", str(scen), "--cwd", str(tmp_path), "--eval-root", str(tmp_path / "eval")])
    assert code == 2 and not (tmp_path / "eval").exists()


# ------------------------------------------------------------------ text from outside

def test_args_that_are_not_utf8_are_refused_before_anything_is_created(tmp_path):
    """argv bytes that are not UTF-8 reach Python as lone surrogates; a real process shows the whole path."""
    env = {**os.environ, "IS_SANDBOX": "1"}
    proc = subprocess.run([os.fsencode(sys.executable), b"-m", b"live_trial", b"run", b"hello:greet",
                           b"--plugins-root", os.fsencode(repo_root() / "examples" / "plugins"),
                           b"--rehearsal", os.fsencode(HAPPY), b"--cwd", os.fsencode(tmp_path),
                           b"--eval-root", os.fsencode(tmp_path / "eval"), b"--args", b"caf\xe9"],
                          capture_output=True, env=env, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err
    assert err.strip().splitlines() == ["REFUSED: --args is not valid UTF-8 text (byte 0xe9 at character 4); "
                                        "pass the skill's arguments as UTF-8 text"]
    assert not (tmp_path / "eval").exists()


def test_a_gate_response_that_is_not_utf8_is_refused(tmp_path):
    req = TrialRequest(target="hello:greet", plugins_root=repo_root() / "examples" / "plugins", cwd=tmp_path,
                       eval_root=tmp_path / "eval", gate_responses=["ok\udcff"])
    with pytest.raises(RefusedInput) as exc:
        Trial(req, env={"IS_SANDBOX": "1", "PATH": os.environ["PATH"]}).run()
    assert exc.value.code == "bad_text" and not (tmp_path / "eval").exists()


@pytest.mark.parametrize("text, needle", [
    ('{"a": ' + "1" * 5000 + "}", "not valid JSON: an integer is too long"),
    ("[" * 100000 + "]" * 100000, "not valid JSON"),
    ('{"a": "\xff', "not valid JSON"),
])
def test_harness_json_read_back_is_refused_in_one_line(tmp_path, text, needle):
    path = tmp_path / "state.json"
    path.write_bytes(text.encode("latin-1") if "\xff" in text else text.encode())
    with pytest.raises(RefusedInput) as exc:
        read_json(path, None)
    assert needle in exc.value.message and "\n" not in exc.value.message


def test_evidence_with_a_huge_integer_is_refused(tmp_path, capsys):
    from live_trial.judge.sources import parse_evidence_items

    with pytest.raises(RefusedInput) as exc:
        parse_evidence_items('[{"claim": "c", "source": "s", "observed": ' + "9" * 5000 + "}]")
    assert exc.value.code == "bad_evidence"
