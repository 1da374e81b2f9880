"""closure: plugin discovery, target resolution, the dependency union and the behaviour-closure digest (seed 001 rule 3)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from live_trial.closure.index import PluginIndex, discover, discover_plugins, file_sha256_hex
from live_trial.closure.manifest import ClosureError, read_frontmatter
from live_trial.closure.pinning import closure_digest, closure_files, dependency_union, digest_files, pin
from live_trial.closure.target import resolve_target, target_from_skill_dir
from live_trial.errors import BootFail, ExitCode, RefusedInput

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "plugins" / "union"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A private copy of the union fixture (tests mutate it)."""
    dst = tmp_path / "plugins"
    shutil.copytree(FIXTURE, dst)
    return dst


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else b"")
            for p in sorted(folder.rglob("*"))}


def write_json(path: Path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def make_plugin(base: Path, name: str, skills: dict[str, str] | None = None, **manifest) -> Path:
    root = base / name
    write_json(root / ".claude-plugin" / "plugin.json", {"name": name, **manifest})
    for skill, text in (skills or {}).items():
        (root / "skills" / skill).mkdir(parents=True, exist_ok=True)
        (root / "skills" / skill / "SKILL.md").write_text(text, encoding="utf-8")
    return root


# ------------------------------------------------------------------------------------------ discovery

def test_discover_finds_plugins_by_manifest_name(root: Path) -> None:
    found = discover_plugins(root)
    assert sorted(found) == ["union-contract-dep", "union-manifest-dep", "union-target", "union-unused-dep"]
    assert found["union-target"] == (root / "union-target").resolve()


def test_discover_uses_manifest_name_not_folder_name(tmp_path: Path) -> None:
    make_plugin(tmp_path, "folder-a")
    write_json(tmp_path / "folder-a" / ".claude-plugin" / "plugin.json", {"name": "real-name"})
    assert list(discover_plugins(tmp_path)) == ["real-name"]


def test_discover_finds_grandchildren(tmp_path: Path) -> None:
    make_plugin(tmp_path / "group", "deep")
    assert "deep" in discover_plugins(tmp_path)


def test_two_plugins_with_one_name_are_refused(tmp_path: Path) -> None:
    make_plugin(tmp_path, "a", skills={"s": "---\nname: s\n---\n"})
    make_plugin(tmp_path, "b")
    make_plugin(tmp_path, "c", skills={"s": "---\nname: s\n---\n"})
    write_json(tmp_path / "b" / ".claude-plugin" / "plugin.json", {"name": "a"})
    found = discover(tmp_path)
    assert list(found.plugins) == ["c"] and set(found.broken) == {(tmp_path / "a").resolve(), (tmp_path / "b").resolve()}
    with pytest.raises(ClosureError) as exc:
        resolve_target("a:s", PluginIndex(tmp_path))
    assert "two plugins are named 'a'" in exc.value.message
    assert str((tmp_path / "a").resolve()) in exc.value.message and str((tmp_path / "b").resolve()) in exc.value.message
    assert resolve_target("c:s", PluginIndex(tmp_path)).qualified == "c:s"


@pytest.mark.parametrize("content, reason", [
    ("{not json", "malformed"),
    ("[1, 2]", "not a JSON object"),
    ('{"version": "1"}', 'no valid "name"'),
    ('{"name": "bad name!"}', 'no valid "name"'),
    ('{"name": "p", "x": ' + "1" * 5000 + "}", "integer is too long"),
    ('{"name": "p", "x": ' + "[" * 100000 + "]" * 100000 + "}", "nested deeper than 32 levels"),
    ('{"name": "p", "x": ' + "[" * 40 + "]" * 40 + "}", "nested deeper than 32 levels"),
    (b'{"name": "p\xff"}', "not UTF-8"),
])
def test_malformed_manifest_is_boot_fail_of_that_plugin_only(tmp_path: Path, content, reason: str) -> None:
    (tmp_path / "p" / ".claude-plugin").mkdir(parents=True)
    (tmp_path / "p" / "skills" / "s").mkdir(parents=True)
    (tmp_path / "p" / "skills" / "s" / "SKILL.md").write_text("---\nname: s\n---\n")
    manifest = tmp_path / "p" / ".claude-plugin" / "plugin.json"
    manifest.write_bytes(content if isinstance(content, bytes) else content.encode())
    make_plugin(tmp_path, "good", skills={"s": "---\nname: s\n---\n"})
    before = snapshot(tmp_path)
    index = PluginIndex(tmp_path)
    assert list(index.plugins) == ["good"] and resolve_target("good:s", index).qualified == "good:s"
    with pytest.raises(ClosureError) as exc:
        resolve_target("p:s", index)
    assert reason in exc.value.message and str(manifest) in exc.value.message
    assert len(exc.value.message) < 400 and "\n" not in exc.value.message
    assert exc.value.status == "BOOT_FAIL" and exc.value.exit_code == ExitCode.REFUSED == 2
    assert isinstance(exc.value, BootFail)
    assert snapshot(tmp_path) == before


def test_a_dependency_with_a_broken_manifest_names_its_problem(tmp_path: Path) -> None:
    make_plugin(tmp_path, "main", skills={"s": "---\nname: s\n---\n"}, dependencies=["dep"])
    (tmp_path / "dep" / ".claude-plugin").mkdir(parents=True)
    (tmp_path / "dep" / ".claude-plugin" / "plugin.json").write_text("{oops")
    index = PluginIndex(tmp_path)
    with pytest.raises(ClosureError) as exc:
        closure_digest(resolve_target("main:s", index), index)
    assert "plugin.json is malformed" in exc.value.message and "dep" in exc.value.message


def test_a_symlink_loop_in_a_closure_folder_is_one_line_naming_it(tmp_path: Path) -> None:
    root = make_plugin(tmp_path, "p", skills={"s": "---\nname: s\n---\n"})
    scripts = root / "skills" / "s" / "scripts"
    scripts.mkdir()
    (scripts / "loop1").symlink_to("loop2")
    (scripts / "loop2").symlink_to("loop1")
    index = PluginIndex(tmp_path)
    with pytest.raises(ClosureError) as exc:
        closure_digest(resolve_target("p:s", index), index)
    assert "symlink loop" in exc.value.message and "loop" in (exc.value.where or "")


def test_a_symlink_loop_as_skill_md_or_manifest_is_one_line(tmp_path: Path) -> None:
    root = make_plugin(tmp_path, "p", skills={"s": "---\nname: s\n---\n"})
    md = root / "skills" / "s" / "SKILL.md"
    md.unlink()
    md.symlink_to(md)
    with pytest.raises(ClosureError) as exc:
        read_frontmatter(md)
    assert "symlink loop" in exc.value.message and str(md) in exc.value.message


def test_an_unreadable_closure_file_is_one_line_naming_it(tmp_path: Path, monkeypatch) -> None:
    import live_trial.closure.index as ix

    root = make_plugin(tmp_path, "p", skills={"s": "---\nname: s\n---\n"})
    (root / "skills" / "s" / "scripts").mkdir()
    secret = root / "skills" / "s" / "scripts" / "run.py"
    secret.write_text("print(1)")
    real_open = ix.os.open

    def denied(path, *a, **kw):
        if str(path) == str(secret):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **kw)
    monkeypatch.setattr(ix.os, "open", denied)
    index = PluginIndex(tmp_path)
    with pytest.raises(ClosureError) as exc:
        closure_digest(resolve_target("p:s", index), index)
    assert "cannot read" in exc.value.message and str(secret) in exc.value.message


def test_plugins_root_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(RefusedInput) as exc:
        discover_plugins(tmp_path / "nope")
    assert exc.value.exit_code == 2 and "not a folder" in exc.value.message
    assert not (tmp_path / "nope").exists()


# ------------------------------------------------------------------------------------------ targets

def test_resolve_qualified_target(root: Path) -> None:
    t = resolve_target("union-target:work", root)
    assert (t.plugin_name, t.skill, t.qualified) == ("union-target", "work", "union-target:work")
    assert t.skill_md == (root / "union-target" / "skills" / "work" / "SKILL.md").resolve()
    assert "Skill" in t.frontmatter["allowed-tools"]


def test_unknown_plugin_is_refused_listing_known(root: Path) -> None:
    before = snapshot(root)
    with pytest.raises(RefusedInput) as exc:
        resolve_target("nope:work", root)
    msg = exc.value.message
    assert "unknown plugin 'nope'" in msg and "union-target" in msg and "union-manifest-dep" in msg
    assert exc.value.exit_code == 2 and "\n" not in msg
    assert snapshot(root) == before


def test_missing_skill_is_refused_listing_skills(root: Path) -> None:
    with pytest.raises(RefusedInput) as exc:
        resolve_target("union-target:nope", root)
    assert "has no skill 'nope'" in exc.value.message and "solo, work" in exc.value.message
    assert exc.value.exit_code == 2


@pytest.mark.parametrize("target", ["a:b:c", "union-target:../x", "union target:work", ":", "x:", ""])
def test_malformed_target_is_refused(root: Path, target: str) -> None:
    with pytest.raises(RefusedInput) as exc:
        resolve_target(target, root)
    assert exc.value.exit_code == 2


def test_plain_skill_name_has_no_plugin_pinning(root: Path) -> None:
    t = resolve_target("work", root)
    assert t.plugin_name is None and t.plugin_root is None
    assert dependency_union(t, root) == []
    assert pin(t, root).plugins == []


def test_plain_skill_in_several_plugins_is_refused(tmp_path: Path) -> None:
    make_plugin(tmp_path, "a", {"s": "---\nname: s\n---\n"})
    make_plugin(tmp_path, "b", {"s": "---\nname: s\n---\n"})
    with pytest.raises(RefusedInput) as exc:
        resolve_target("s", tmp_path)
    assert "several plugins" in exc.value.message and "a:s" in exc.value.message


def test_plain_skill_prefers_project_skills_folder(tmp_path: Path) -> None:
    (tmp_path / ".claude" / "skills" / "s").mkdir(parents=True)
    (tmp_path / ".claude" / "skills" / "s" / "SKILL.md").write_text("---\nname: s\n---\n")
    t = resolve_target("s", tmp_path)
    assert t.skill_dir == (tmp_path / ".claude" / "skills" / "s").resolve()
    files = closure_files(t, tmp_path)
    assert [(label, rel) for label, rel, _ in files] == [("_", "skills/s/SKILL.md")]


def test_target_from_skill_dir(root: Path) -> None:
    t, index = target_from_skill_dir(root / "union-target" / "skills" / "work")
    assert t.qualified == "union-target:work" and index is not None
    assert closure_digest(t, index) == closure_digest(resolve_target("union-target:work", root), root)


# ------------------------------------------------------------------------------------------ frontmatter

def test_frontmatter_none_and_forms(tmp_path: Path) -> None:
    p = tmp_path / "SKILL.md"
    p.write_text("# no frontmatter\n")
    assert read_frontmatter(p) == {}
    p.write_text("---\nallowed-tools: Read, Bash(python3 *)\nname: x\n---\nbody\n---\n")
    assert read_frontmatter(p) == {"allowed-tools": "Read, Bash(python3 *)", "name": "x"}


@pytest.mark.parametrize("text, reason", [
    ("---\nname: [unclosed\n---\n", "not valid YAML"),
    ("---\n- a\n- b\n---\n", "not a mapping"),
    ("---\nname: x\n", "not closed"),
])
def test_malformed_frontmatter_is_refused(tmp_path: Path, text: str, reason: str) -> None:
    p = tmp_path / "SKILL.md"
    p.write_text(text)
    with pytest.raises(ClosureError) as exc:
        read_frontmatter(p)
    assert reason in exc.value.message and str(p) in exc.value.message


# ------------------------------------------------------------------------------------------ union

def names(refs) -> list[str]:
    return [r.name for r in refs]


def test_union_is_manifest_deps_plus_narrowed_contract_deps(root: Path) -> None:
    t = resolve_target("union-target:work", root)
    refs = dependency_union(t, root)
    assert names(refs) == ["union-target", "union-manifest-dep", "union-contract-dep"]
    assert refs[0].root == (root / "union-target").resolve()


def test_skill_not_in_narrowing_map_gets_no_contract_deps(root: Path) -> None:
    assert names(dependency_union(resolve_target("union-target:solo", root), root)) == \
        ["union-target", "union-manifest-dep"]


def test_without_narrowing_map_all_depends_on(root: Path) -> None:
    path = root / "union-target" / "references" / "package-contract.json"
    doc = json.loads(path.read_text())
    del doc["skill_dependencies"]
    write_json(path, doc)
    assert names(dependency_union(resolve_target("union-target:solo", root), root)) == \
        ["union-target", "union-manifest-dep", "union-contract-dep", "union-unused-dep"]


def test_dependency_forms_are_understood(root: Path) -> None:
    write_json(root / "union-target" / ".claude-plugin" / "plugin.json",
               {"name": "union-target", "dependencies": ["union-manifest-dep@market", {"name": "union-unused-dep"}]})
    assert names(dependency_union(resolve_target("union-target:solo", root), root)) == \
        ["union-target", "union-manifest-dep", "union-unused-dep"]


@pytest.mark.parametrize("mutate, reason", [
    (lambda d: d["skill_dependencies"].update({"ghost": []}), "key 'ghost' is not in entry_points.skills"),
    (lambda d: d["skill_dependencies"].update({"work": ["union-manifest-dep"]}), "not in depends_on"),
    (lambda d: d.update({"depends_on": "union-contract-dep"}), "depends_on must be a list"),
    (lambda d: d.update({"depends_on": [3]}), "malformed entry in depends_on"),
    (lambda d: d.update({"skill_dependencies": []}), "skill_dependencies must be an object"),
    (lambda d: d.pop("entry_points"), "not in entry_points.skills"),
])
def test_bad_contract_is_boot_fail(root: Path, mutate, reason: str) -> None:
    path = root / "union-target" / "references" / "package-contract.json"
    doc = json.loads(path.read_text())
    mutate(doc)
    write_json(path, doc)
    before = snapshot(root)
    t = resolve_target("union-target:work", root)
    with pytest.raises(ClosureError) as exc:
        dependency_union(t, root)
    assert reason in exc.value.message and str(path) in exc.value.message
    assert exc.value.status == "BOOT_FAIL" and exc.value.exit_code == 2
    assert snapshot(root) == before


def test_malformed_contract_json(root: Path) -> None:
    path = root / "union-target" / "references" / "package-contract.json"
    path.write_text("{oops")
    with pytest.raises(ClosureError) as exc:
        dependency_union(resolve_target("union-target:work", root), root)
    assert "package-contract.json is malformed" in exc.value.message


@pytest.mark.parametrize("where", ["manifest", "contract"])
def test_dependency_not_found_is_boot_fail(root: Path, where: str) -> None:
    if where == "manifest":
        shutil.rmtree(root / "union-manifest-dep")
        missing = "union-manifest-dep"
    else:
        shutil.rmtree(root / "union-contract-dep")
        missing = "union-contract-dep"
    with pytest.raises(ClosureError) as exc:
        dependency_union(resolve_target("union-target:work", root), root)
    msg = exc.value.message
    assert f"dependency plugin '{missing}' not found under {root.resolve()}" in msg
    assert ("plugin.json dependencies" if where == "manifest" else "package-contract.json depends_on") in msg
    assert exc.value.status == "BOOT_FAIL"


def test_malformed_manifest_dependencies(root: Path) -> None:
    write_json(root / "union-target" / ".claude-plugin" / "plugin.json", {"name": "union-target", "dependencies": [{}]})
    with pytest.raises(ClosureError) as exc:
        dependency_union(resolve_target("union-target:work", root), root)
    assert "malformed entry in dependencies" in exc.value.message


@pytest.mark.parametrize("skill", ["work", "solo"])
def test_plugins_loaded_equal_plugins_digested(root: Path, skill: str) -> None:
    """Invariant 1: the set boot loads is the set the closure digest covers (one computation)."""
    t = resolve_target(f"union-target:{skill}", root)
    pinning = pin(t, root)
    assert names(pinning.plugins) == names(dependency_union(t, root))
    assert {label for label, _, _ in pinning.files} == set(names(pinning.plugins))
    assert pinning.digest == closure_digest(t, root)


# ------------------------------------------------------------------------------------------ closure

def rels(files) -> set[str]:
    return {f"{label}/{rel}" for label, rel, _ in files}


def test_closure_contents_of_work(root: Path) -> None:
    files = rels(closure_files(resolve_target("union-target:work", root), root))
    assert {
        "union-target/skills/work/SKILL.md", "union-target/skills/work/scripts/run.py",
        "union-target/references/guide.md", "union-target/references/package-contract.json",
        "union-target/.claude-plugin/plugin.json", "union-target/hooks/hooks.json",
        "union-target/tools/stop_check.py",
        "union-manifest-dep/hooks/session_start.py", "union-manifest-dep/scripts/helper.py",
        "union-manifest-dep/schemas/thing.schema.json", "union-manifest-dep/skills/manifest-skill/SKILL.md",
        "union-contract-dep/hooks/hooks.json", "union-contract-dep/.claude-plugin/plugin.json",
    } <= files
    assert not any(f.startswith("union-unused-dep/") for f in files)
    assert "union-target/references/unrelated.md" not in files
    assert "union-target/skills/solo/SKILL.md" not in files


def test_every_file_in_closure_changes_digest_and_outside_does_not(root: Path) -> None:
    t = resolve_target("union-target:work", root)
    files = closure_files(t, root)
    inside = {path for _, _, path in files}
    base = closure_digest(t, root)
    all_files = [p for p in root.rglob("*") if p.is_file()]
    assert len(inside) >= 19 and len(all_files) > len(inside)
    for path in all_files:
        original = path.read_bytes()
        path.write_bytes(original + b" ")
        try:
            changed = closure_digest(resolve_target("union-target:work", root), root)
        except ClosureError:  # e.g. a manifest made invalid: fail closed is a change too
            changed = "refused"
        finally:
            path.write_bytes(original)
        if path in inside:
            assert changed != base, f"changing {path} did not change the digest"
        else:
            assert changed == base, f"changing {path} (outside the closure) changed the digest"
    assert closure_digest(t, root) == base


def test_new_file_in_script_folder_changes_digest(root: Path) -> None:
    t = resolve_target("union-target:work", root)
    base = closure_digest(t, root)
    (root / "union-target" / "skills" / "work" / "scripts" / "new.py").write_text("x")
    assert closure_digest(t, root) != base


def test_renaming_a_file_changes_digest(root: Path) -> None:
    t = resolve_target("union-target:work", root)
    base = closure_digest(t, root)
    d = root / "union-contract-dep" / "scripts"
    (d / "helper.py").rename(d / "helper2.py")
    assert closure_digest(t, root) != base


def test_digest_format_is_exact(tmp_path: Path) -> None:
    make_plugin(tmp_path, "p", {"s": "---\nname: s\n---\nbody\n"})
    t = resolve_target("p:s", tmp_path)
    manifest = (tmp_path / "p" / ".claude-plugin" / "plugin.json").read_bytes()
    skill = (tmp_path / "p" / "skills" / "s" / "SKILL.md").read_bytes()
    lines = sorted([f"p/.claude-plugin/plugin.json\0{hashlib.sha256(manifest).hexdigest()}\n",
                    f"p/skills/s/SKILL.md\0{hashlib.sha256(skill).hexdigest()}\n"])
    expected = "sha256:" + hashlib.sha256("".join(lines).encode()).hexdigest()
    assert closure_digest(t, tmp_path) == expected


def test_ref_into_declared_dependency_is_labelled_with_it(root: Path) -> None:
    md = root / "union-target" / "skills" / "work" / "SKILL.md"
    md.write_text(md.read_text().replace("reference_refs:\n",
                                         "reference_refs:\n  - ../../../union-contract-dep/docs/notes.md\n"))
    files = rels(closure_files(resolve_target("union-target:work", root), root))
    assert "union-contract-dep/docs/notes.md" in files


@pytest.mark.parametrize("ref, reason", [
    ("../../../union-unused-dep/docs/notes.md", "reference into plugin 'union-unused-dep', which is not a declared"),
    ("../../../../outside.md", "path leaves the plugin"),
    ("../../references/missing.md", "missing file"),
    ("/etc/hostname", "absolute path"),
])
def test_bad_refs_fail_closed(root: Path, ref: str, reason: str) -> None:
    (root.parent / "outside.md").write_text("x")
    md = root / "union-target" / "skills" / "work" / "SKILL.md"
    md.write_text(md.read_text().replace("reference_refs:\n", f"reference_refs:\n  - {ref}\n"))
    before = snapshot(root)
    with pytest.raises(ClosureError) as exc:
        pin(resolve_target("union-target:work", root), root)
    assert reason in exc.value.message
    assert exc.value.status == "BOOT_FAIL" and exc.value.exit_code == 2
    assert snapshot(root) == before


def test_ref_field_must_be_paths(root: Path) -> None:
    md = root / "union-target" / "skills" / "work" / "SKILL.md"
    md.write_text(md.read_text().replace("script_refs:\n  - scripts/run.py\n", "script_refs: {a: 1}\n"))
    with pytest.raises(ClosureError) as exc:
        closure_files(resolve_target("union-target:work", root), root)
    assert "script_refs must be a list of paths" in exc.value.message


@pytest.mark.parametrize("where", ["union-target/skills/work/scripts/link.py", "union-manifest-dep/hooks/link.py",
                                   "union-contract-dep/schemas/link.json"])
def test_symlink_leaving_the_plugin_fails_closed(root: Path, tmp_path: Path, where: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    os.symlink(secret, root / where)
    with pytest.raises(ClosureError) as exc:
        pin(resolve_target("union-target:work", root), root)
    assert "symlink leaves plugin" in exc.value.message and str(root / where) in exc.value.message


def test_symlink_folder_leaving_the_plugin_fails_closed(root: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.py").write_text("x")
    os.symlink(tmp_path / "elsewhere", root / "union-target" / "skills" / "work" / "scripts" / "lib")
    with pytest.raises(ClosureError) as exc:
        closure_digest(resolve_target("union-target:work", root), root)
    assert "symlink leaves plugin" in exc.value.message


def test_symlink_inside_the_plugin_is_hashed_by_content(root: Path) -> None:
    t = resolve_target("union-target:work", root)
    target_file = root / "union-target" / "references" / "unrelated.md"
    os.symlink(target_file, root / "union-target" / "skills" / "work" / "scripts" / "alias.md")
    base = closure_digest(t, root)
    target_file.write_text("changed through the link")
    assert closure_digest(t, root) != base


def test_hook_script_named_in_manifest_hooks_must_exist(root: Path) -> None:
    (root / "union-target" / "tools" / "stop_check.py").unlink()
    with pytest.raises(ClosureError) as exc:
        closure_files(resolve_target("union-target:work", root), root)
    assert "missing file named by a hook command" in exc.value.message


def test_manifest_hooks_path_is_included(root: Path) -> None:
    write_json(root / "union-target" / ".claude-plugin" / "plugin.json",
               {"name": "union-target", "dependencies": ["union-manifest-dep"], "hooks": "./extra/hooks.json"})
    write_json(root / "union-target" / "extra" / "hooks.json",
               {"hooks": {"Stop": [{"hooks": [{"type": "command",
                                               "command": "${CLAUDE_PLUGIN_ROOT}/tools/unused.py"}]}]}})
    files = rels(closure_files(resolve_target("union-target:work", root), root))
    assert {"union-target/extra/hooks.json", "union-target/tools/unused.py"} <= files


def test_closure_is_deterministic_and_sorted(root: Path) -> None:
    t = resolve_target("union-target:work", root)
    files = closure_files(t, root)
    assert files == sorted(files, key=lambda f: (f[0], f[1]))
    assert closure_digest(t, root) == closure_digest(t, PluginIndex(root))


def test_digest_does_not_depend_on_where_the_tree_lives(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "moved" / "plugins"
    shutil.copytree(root, other)
    a = closure_digest(resolve_target("union-target:work", root), root)
    b = closure_digest(resolve_target("union-target:work", other), other)
    assert a == b


@pytest.mark.parametrize("size", [0, 1, 65535, 65536, 65537, 3 * 1024 * 1024 + 7])
def test_file_hash_matches_hashlib_for_any_size(tmp_path: Path, size: int) -> None:
    p = tmp_path / "f.bin"
    data = os.urandom(size)
    p.write_bytes(data)
    assert file_sha256_hex(p) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("target", ["union-target:work", "union-target:solo", "work"])
def test_digest_paths_agree(root: Path, target: str) -> None:
    """closure_digest (cached part lines) equals digesting closure_files directly, and pin's digest."""
    t = resolve_target(target, root)
    files = closure_files(t, root)
    assert closure_digest(t, root) == digest_files(files) == pin(t, root).digest


def test_folder_ref_includes_every_file_below(root: Path) -> None:
    md = root / "union-target" / "skills" / "work" / "SKILL.md"
    md.write_text(md.read_text().replace("reference_refs:\n", "reference_refs:\n  - ../../tools\n"))
    files = rels(closure_files(resolve_target("union-target:work", root), root))
    assert {"union-target/tools/stop_check.py", "union-target/tools/unused.py"} <= files


@pytest.mark.parametrize("skill", ["work", "solo"])
def test_boot_plugin_dirs_equal_the_digested_plugins(root: Path, skill: str) -> None:
    """Invariant 1 across modules: boot's --plugin-dir folders are exactly the plugins the verdict digest covers."""
    from live_trial.session.boot import resolve_plugin_dirs

    t = resolve_target(f"union-target:{skill}", root)
    dirs = resolve_plugin_dirs(f"union-target:{skill}", root)
    index = PluginIndex(root)
    by_root = {r: n for n, r in index.plugins.items()}
    digested = {label for label, _, _ in closure_files(t, root)}
    assert [by_root[d] for d in dirs] == names(dependency_union(t, root))
    assert set(by_root[d] for d in dirs) == digested
    # a change in a loaded dependency's hook invalidates; an unloaded one does not
    base = closure_digest(t, root)
    (root / "union-unused-dep" / "hooks" / "session_start.py").write_text("changed")
    assert closure_digest(t, root) == base
    (root / "union-manifest-dep" / "hooks" / "session_start.py").write_text("changed")
    assert closure_digest(t, root) != base


def test_digest_paths_agree_with_prefix_names_and_refs_into_dependencies(tmp_path: Path) -> None:
    """Plugin names that prefix each other ('p', 'p-x', 'p.y') and skill refs into a dependency."""
    make_plugin(tmp_path, "p", {"s": "---\nname: s\nreference_refs: [../../../p-x/docs/a.md]\n---\n"},
                dependencies=["p-x", "p.y"])
    for dep in ("p-x", "p.y"):
        make_plugin(tmp_path, dep, {"e": "---\nname: e\n---\n"})
        (tmp_path / dep / "scripts").mkdir()
        (tmp_path / dep / "scripts" / "z.py").write_text(dep)
    (tmp_path / "p-x" / "docs").mkdir()
    (tmp_path / "p-x" / "docs" / "a.md").write_text("doc")
    t = resolve_target("p:s", tmp_path)
    files = closure_files(t, tmp_path)
    assert "p-x/docs/a.md" in rels(files)
    index = PluginIndex(tmp_path)
    assert closure_digest(t, index) == digest_files(files) == closure_digest(t, index)
