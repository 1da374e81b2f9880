r"""The dependency union and the behaviour closure of a skill (seed 001 rule 3, "verdict + 掃除").

One function decides which plugins a trial loads (:func:`dependency_union`) and the closure digest
(:func:`closure_files` / :func:`closure_digest`) is computed over exactly that set, so the set boot
loads is the set the verdict's ``skill_dir_tree_sha`` covers (ARCHITECTURE invariant 1). Boot should
call :func:`pin`, which returns both from one computation.

Layout assumed (Claude Code plugins)::

    <plugins_root>/<any dir, depth 1 or 2>/.claude-plugin/plugin.json   {"name": ..., "dependencies": [...]}
    <plugin>/skills/<skill>/SKILL.md                                     frontmatter (YAML)
    <plugin>/references/package-contract.json                            {"entry_points": {"skills": [...]},
                                                                          "depends_on": [...],
                                                                          "skill_dependencies": {skill: [...]}}

Dependency union (seed 001 rule 3): (a) every entry of plugin.json ``dependencies`` (a name, ``name@marketplace``
or ``{"name": ...}``; never narrowed) ∪ (b) package-contract ``depends_on``, narrowed to
``skill_dependencies.<skill>`` when that map exists (a skill not listed there gets no (b) dependencies). Only
direct dependencies. A map key not in ``entry_points.skills`` or a value not in ``depends_on`` is refused.

Behaviour closure (seed 001 skill_dir_tree_sha): of the target plugin — the skill's SKILL.md, its local ``scripts/`` and
``prompts/``, every path in the frontmatter's ``script_refs``/``reference_refs``/``responsibility_refs``/
``schema_refs`` (relative to the skill folder; a folder means all files below it), ``.claude-plugin/*``,
``.mcp.json``, ``hooks/**`` plus any hooks file named in plugin.json and every ``${CLAUDE_PLUGIN_ROOT}/<path>``
a hook command names (read as the shell reads the command: :mod:`live_trial.closure.hook_commands`; a command it
cannot read adds a note, never a refusal), and ``references/package-contract.json``; of each dependency in the
union — the same manifest/hooks/contract files, its entry points (``skills/<s>/SKILL.md`` with that skill's
``scripts/`` and ``prompts/``, for the skills in ``entry_points.skills`` or every skill when the contract does not
list them; ``agents/*.md``; ``commands/*.md``) and its top-level ``scripts/**`` and ``schemas/**``.

Digest: sha256 over the sorted lines ``<plugin>/<posix relpath>\0<sha256 hex of content>\n`` -> ``sha256:<hex>``.
A plain skill name (no plugin) has no plugin pinning; its closure label is ``_`` and paths are relative to the
folder that holds ``skills/`` (or to the skill folder).

Folders walked skip only ``.git`` and ``__pycache__`` (bytecode caches are not behaviour). Not covered (so a
change there does not invalidate a verdict): the rest of a plugin (other skills, docs, ``references/`` files no
ref names), files a script reads at run time without declaring them in a ``*_refs`` field, the user's installed
plugins and settings, the CLI and the model.

Fail closed (:class:`ClosureError`, status BOOT_FAIL, exit 2), never hashed around: a dependency not found
under plugins_root, a missing or malformed manifest/contract/frontmatter, a missing referenced file, a path
leaving its plugin (``..`` or a symlink), a reference into a plugin outside the union.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterable

from live_trial.closure.index import (
    CONTRACT,
    MANIFEST,
    Pinning,
    PluginIndex,
    PluginRef,
    Target,
    as_index,
    closure_file_sha,
    maybe_index,
)
from live_trial.closure.manifest import ClosureError, name_list


def dependency_union(target: Target, plugins_root: Path | PluginIndex) -> list[PluginRef]:
    """The plugins a trial of ``target`` loads, target plugin first (seed 001 rule 3).

    (a) plugin.json ``dependencies`` in declared order, then (b) package-contract ``depends_on`` narrowed by
    ``skill_dependencies.<skill>`` when that map exists (skill not listed -> none); duplicates dropped. A plain
    skill name returns ``[]`` (no pinning). Raises :class:`ClosureError` naming the path and reason for a
    missing or malformed manifest or contract, a bad narrowing map, or a dependency not under plugins_root.
    """
    if target.plugin_name is None:
        return []
    index = as_index(plugins_root)
    name = target.plugin_name
    if name not in index.plugins:
        raise ClosureError(f"target plugin '{name}' not found under {index.root}", fix="pass --plugins-root")
    manifest_path = index.plugins[name] / MANIFEST
    origin: dict[str, str] = {}
    for dep in name_list(index.manifest(name).get("dependencies"), str(manifest_path), "dependencies"):
        origin.setdefault(dep, f"{manifest_path} dependencies")
    contract = index.contract(name)
    if contract is not None:
        narrowing = contract["narrowing"]
        extra = contract["depends_on"] if narrowing is None else narrowing.get(target.skill, [])
        for dep in extra:
            origin.setdefault(dep, f"{index.plugins[name] / CONTRACT} depends_on")
    refs = [PluginRef(name, index.plugins[name])]
    for dep, declared_in in origin.items():
        if dep != name:
            refs.append(PluginRef(dep, index.plugin_root(dep, declared_in=declared_in)))
    return refs


def _entries(target: Target, index: PluginIndex | None, union: list[PluginRef] | None) -> list[tuple[str, str, str]]:
    from live_trial.closure.walk import entries

    if target.plugin_name is None:
        return entries(target, index, [])
    assert index is not None
    return entries(target, index, dependency_union(target, index) if union is None else union)


def closure_files(target: Target, plugins_root: Path | PluginIndex | None,
                  union: list[PluginRef] | None = None) -> list[tuple[str, str, Path]]:
    """The behaviour closure of ``target``: sorted ``[(plugin label, posix relpath, absolute path)]``.

    ``union`` defaults to :func:`dependency_union` (pass it only when you computed it from the same index).
    See the module docstring for what is included. Raises :class:`ClosureError` (fail closed).
    """
    index = maybe_index(target, plugins_root)
    return [(label, rel, Path(path)) for label, rel, path in _entries(target, index, union)]


def digest_files(files: Iterable[tuple[str, str, Any]], index: PluginIndex | None = None) -> str:
    r"""``sha256:<hex>`` over the sorted lines ``<plugin>/<relpath>\0<sha256 hex of content>\n``
    (seed 001 skill_dir_tree_sha)."""
    sha = index.sha if index is not None else _file_sha
    lines = sorted(f"{label}/{rel}\0{sha(path)}\n" for label, rel, path in files)
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def _file_sha(path: Any) -> str:
    return closure_file_sha(path)


def closure_digest(target: Target, plugins_root: Path | PluginIndex | None) -> str:
    """The behaviour-closure digest (verdict field ``skill_dir_tree_sha``), ``sha256:<hex>``. Fails closed."""
    from live_trial.closure.walk import digest

    index = maybe_index(target, plugins_root)
    if target.plugin_name is None:
        return digest(target, index, [])
    assert index is not None
    return digest(target, index, dependency_union(target, index))


def pin(target: Target, plugins_root: Path | PluginIndex | None) -> Pinning:
    """Everything boot needs and the verdict records, from ONE computation: plugins to load, closure files, digest.

    Boot passes ``--plugin-dir p.root`` for each ``p`` in ``plugins`` (empty for a plain skill: no pinning).
    Raises :class:`ClosureError` before anything starts when the closure cannot be built (fail closed).
    """
    from live_trial.closure.walk import closure_notes

    index = maybe_index(target, plugins_root)
    union = dependency_union(target, index) if index is not None else []
    found = _entries(target, index, union or None)
    return Pinning(union, [(label, rel, Path(path)) for label, rel, path in found], digest_files(found, index),
                   closure_notes(target, index, union))
