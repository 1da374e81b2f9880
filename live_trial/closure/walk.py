"""The file walk behind the behaviour closure (:mod:`live_trial.closure.pinning` is its API).

Works on plain strings (pathlib is too slow for thousands of files, benchmarks/plan.py) and caches, per
:class:`~live_trial.closure.index.PluginIndex`, the part of a closure that does not depend on the skill: a plugin's
native files and a dependency plugin's contribution. Every path is checked as it is added: it must stay in its
plugin lexically (``..``) and after resolving symlinks; a reference into another plugin must be to a plugin of
the union. Nothing is ever hashed around a problem: :class:`~live_trial.closure.manifest.ClosureError`.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from typing import Any, Iterable

from live_trial.closure.index import (
    CONTRACT,
    PLAIN_LABEL,
    REF_FIELDS,
    SKIP_DIRS,
    PluginIndex,
    PluginRef,
    Target,
    closure_file_sha,
    skills_of,
    unreadable,
)
from live_trial.closure.manifest import ClosureError

Entry = tuple[str, str, str]  # (plugin label, posix relpath, absolute path)
_SEP = os.sep


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root + _SEP)


def _leaves(owner: str, path: str, real: str) -> ClosureError:
    return ClosureError(f"symlink leaves plugin '{owner}' (points to {real})", where=path,
                        fix="copy the file into the plugin instead of linking outside it")


class Collector:
    """Collects closure files keyed by (label, relpath); ``roots`` are the plugins of the union (label → root)."""

    def __init__(self, index: PluginIndex | None, roots: dict[str, str]) -> None:
        self.index = index
        self.roots = roots
        self.files: dict[tuple[str, str], str] = {}
        #: what a reader of the verdict should know about how the closure was read (a hook command read unsure)
        self.notes: list[str] = []
        self.real_dirs: dict[str, bool] = index._real_dirs if index is not None else {}

    def _resolve(self, path: str, root: str) -> tuple[str | None, os.stat_result | None]:
        """(real path, stat) of ``path`` (lexically under the real ``root``); (None, None) when it does not exist.

        Only the components below ``root`` are checked for symlinks (lstat each, directories cached on the
        index), which is much cheaper than ``os.path.realpath`` for thousands of files.
        """
        rel = path[len(root) + 1:]
        if not rel:
            return root, os.stat(root)
        parts = rel.split(_SEP)
        last = len(parts) - 1
        cur = root
        st: os.stat_result | None = None
        for i, part in enumerate(parts):
            cur = cur + _SEP + part
            if i < last and self.real_dirs.get(cur):
                continue
            try:
                st = os.lstat(cur)
            except (FileNotFoundError, NotADirectoryError):
                return None, None
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(path)
                try:
                    return real, os.stat(real)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise unreadable(path, exc) from None
                    return real, None
            if i < last:
                if not stat.S_ISDIR(st.st_mode):
                    return None, None
                self.real_dirs[cur] = True
        return path, st

    def _owner(self, path: str) -> tuple[str, str]:
        for label, root in self.roots.items():
            if _within(path, root):
                return label, root
        if self.index is not None:
            for other, other_root in self.index.plugins.items():
                if _within(path, str(other_root)):
                    raise ClosureError(f"reference into plugin '{other}', which is not a declared dependency",
                                       where=path, fix=f"declare '{other}' in plugin.json dependencies or "
                                                       "package-contract depends_on, or remove the reference")
        raise ClosureError("path leaves the plugin", where=path, fix="keep referenced files inside the plugin")

    def add(self, path: str, *, label: str | None = None, required: bool = True, why: str = "") -> None:
        """Add a file, or every file below a folder. ``path`` is absolute; it is normalised, then checked."""
        path = os.path.normpath(path)
        if label is None:
            owner, root = self._owner(path)
        else:
            owner, root = label, self.roots[label]
            if not _within(path, root):
                raise ClosureError(f"path leaves plugin '{label}'", where=path, fix="keep it inside the plugin")
        real, st = self._resolve(path, root)
        if real is not None and not _within(real, root):
            raise _leaves(owner, path, real)
        if st is None:
            if required:
                raise ClosureError(f"missing file{' named by ' + why if why else ''}", where=path,
                                   fix="create the file or remove the reference")
            return
        if stat.S_ISDIR(st.st_mode):
            self._walk(path, real, owner, root, set())  # type: ignore[arg-type]
        elif stat.S_ISREG(st.st_mode):
            self.files[(owner, path[len(root) + 1:].replace(_SEP, "/"))] = path
        elif required:
            raise ClosureError("not a regular file", where=path, fix="reference a file or a folder")

    def _walk(self, folder: str, real: str, owner: str, root: str, seen: set[str]) -> None:
        if real in seen:
            return
        seen.add(real)
        cut = len(root) + 1
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            raise unreadable(folder, exc) from None
        for entry in entries:
            if entry.name in SKIP_DIRS:
                continue
            child = entry.path
            try:
                if entry.is_symlink():
                    child_real = os.path.realpath(child)
                    if not _within(child_real, root):
                        raise _leaves(owner, child, child_real)
                else:
                    child_real = real + _SEP + entry.name
                is_dir, is_file = entry.is_dir(), entry.is_file()
            except OSError as exc:
                raise unreadable(child, exc) from None
            if is_dir:
                self._walk(child, child_real, owner, root, seen)
            elif is_file:
                self.files[(owner, child[cut:].replace(_SEP, "/"))] = child


def _refs(frontmatter: dict, skill_md: str) -> list[str]:
    out: list[str] = []
    for key in REF_FIELDS:
        value = frontmatter.get(key)
        if value is None:
            continue
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
            raise ClosureError(f"frontmatter field {key} must be a list of paths", where=skill_md,
                               fix=f"write {key}: [relative/path, ...]")
        out += [i.strip() for i in items]
    return out


def _add_hook_commands(col: Collector, label: str, root: str, docs: Iterable[Any], why: str) -> None:
    """The files the hook commands of ``docs`` (parsed hooks documents) name, read as the shell would
    (:func:`live_trial.closure.hook_commands.read_hook_command`): the script each runs must exist (a missing one is
    refused), the plugin files among its arguments are added when they exist; a command it cannot read adds every
    existing plugin file its text mentions and a note (the whole ``hooks/`` folder is in the closure anyway)."""
    from live_trial.closure.hook_commands import hook_commands, read_hook_command

    for doc in docs:
        for command in hook_commands(doc):
            read = read_hook_command(command)
            if read.script is not None:
                col.add(root + _SEP + read.script, label=label, why=why)
            for rel in read.arguments + read.mentioned:
                col.add(root + _SEP + rel, label=label, required=False, why=why)
            if read.unsure is not None:
                note = (f"{label}: {why} could not be read as the shell reads it ({read.unsure}: {command[:120]!r}); "
                        "the closure holds the plugin's whole hooks/ folder and the plugin files the command "
                        "mentions")
                if note not in col.notes:
                    col.notes.append(note)


def _hook_texts(col: Collector, label: str, root: str, texts: Iterable[str], why: str) -> None:
    """Hooks files read as text: parsed as JSON, their commands read (:func:`_add_hook_commands`); a file that is no
    JSON adds the plugin files it mentions that exist, with a note (the CLI would not load it as hooks either)."""
    from live_trial.closure.hook_commands import read_hook_command

    docs: list[Any] = []
    for text in texts:
        try:
            docs.append(json.loads(text))
        except ValueError:
            for rel in read_hook_command(text).mentioned:
                col.add(root + _SEP + rel, label=label, required=False, why=why)
            col.notes.append(f"{label}: a hooks file is not JSON; the closure holds the plugin's whole hooks/ folder")
    _add_hook_commands(col, label, root, docs, why)


def _add_natives(col: Collector, label: str, root: str, manifest: dict) -> None:
    """Manifest folder, .mcp.json, package contract, hooks (folder, plugin.json hooks files and inline hooks, and
    every ``${CLAUDE_PLUGIN_ROOT}/<path>`` a hook command names)."""
    col.add(root + "/.claude-plugin", label=label)
    col.add(root + "/.mcp.json", label=label, required=False)
    col.add(os.path.join(root, CONTRACT), label=label, required=False)
    col.add(root + "/hooks", label=label, required=False)
    hooks_cfg = manifest.get("hooks")
    texts: list[str] = []
    named: set[str] = set()
    for item in (hooks_cfg if isinstance(hooks_cfg, list) else [hooks_cfg]):
        if isinstance(item, str):
            col.add(os.path.join(root, item), label=label, why="plugin.json hooks")
            named.add(os.path.normpath(item).replace(_SEP, "/"))
        elif item is not None:
            texts.append(json.dumps(item))      # inline hooks: read as a hooks document like a file
    for (owner, rel), path in list(col.files.items()):
        if owner == label and ((rel.startswith("hooks/") and rel.endswith(".json")) or rel in named):
            try:
                with open(path, encoding="utf-8") as fh:
                    texts.append(fh.read())
            except (OSError, UnicodeDecodeError):
                continue
    _hook_texts(col, label, root, texts, "a hook command")


def plugin_part(index: PluginIndex, ref: PluginRef, *, dependency: bool) -> dict[tuple[str, str], str]:
    """The skill-independent files of one plugin in a closure (cached on the index; do not mutate the result).

    Target plugin: its natives. Dependency: natives, entry points (``skills/<s>/SKILL.md`` + that skill's scripts/
    and prompts/ for ``entry_points.skills``, or every skill), ``agents/*.md``, ``commands/*.md``, ``scripts/**``,
    ``schemas/**``.
    """
    key = (ref.name, dependency)
    cached = index._parts.get(key)
    if cached is not None:
        return cached
    root = str(ref.root)
    col = Collector(index, {ref.name: root})
    _add_natives(col, ref.name, root, index.manifest(ref.name))
    if dependency:
        contract = index.contract(ref.name)
        skills = contract["skills"] if contract and contract["skills"] is not None else skills_of(ref.root)
        for skill in skills:
            sdir = os.path.join(root, "skills", skill)
            col.add(sdir + "/SKILL.md", label=ref.name, why=f"entry_points.skills of '{ref.name}'")
            col.add(sdir + "/scripts", label=ref.name, required=False)
            col.add(sdir + "/prompts", label=ref.name, required=False)
        for sub in ("agents", "commands"):
            folder = os.path.join(root, sub)
            if os.path.isdir(folder):
                for name in sorted(os.listdir(folder)):
                    if name.endswith(".md"):
                        col.add(os.path.join(folder, name), label=ref.name)
        col.add(root + "/scripts", label=ref.name, required=False)
        col.add(root + "/schemas", label=ref.name, required=False)
    index._part_notes[key] = tuple(col.notes)
    index._parts[key] = col.files
    return col.files


def _part_lines(index: PluginIndex, ref: PluginRef, *, dependency: bool) -> frozenset[str]:
    key = (ref.name, dependency)
    lines = index._part_lines.get(key)
    if lines is None:
        lines = frozenset(_line(label, rel, path, index) for (label, rel), path in
                          plugin_part(index, ref, dependency=dependency).items())
        index._part_lines[key] = lines
    return lines


def _line(label: str, rel: str, path: str, index: PluginIndex | None) -> str:
    r"""One digest line: ``<plugin>/<posix relpath>\0<sha256 hex of content>\n`` (seed 001 skill_dir_tree_sha)."""
    if index is not None:
        return f"{label}/{rel}\0{index.sha(path)}\n"
    return f"{label}/{rel}\0{closure_file_sha(path)}\n"


def _part_block(index: PluginIndex, ref: PluginRef, *, dependency: bool) -> bytes:
    key = (ref.name, dependency)
    block = index._part_blocks.get(key)
    if block is None:
        block = index._part_blocks[key] = "".join(sorted(_part_lines(index, ref, dependency=dependency))).encode()
    return block


def digest(target: Target, index: PluginIndex | None, union: list[PluginRef]) -> str:
    """``sha256:<hex>`` of the closure — the same value as :func:`~live_trial.closure.pinning.digest_files` over
    :func:`entries` (a test holds them equal) — reusing each plugin's cached, pre-sorted lines.

    Every line starts with ``<label>/`` and labels hold no ``/``, so in the sorted order each plugin's lines form one
    block, blocks ordered by ``label + "/"``: a plugin no skill file adds to is hashed from its cached block.
    """
    if target.plugin_name is None:
        lines = sorted({_line(label, rel, path, index) for label, rel, path in entries(target, index, [])})
        return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()
    assert index is not None
    extra: dict[str, set[str]] = {}
    for (label, rel), path in _skill_collector(target, index, union).files.items():
        extra.setdefault(label, set()).add(_line(label, rel, path, index))
    h = hashlib.sha256()
    for ref, dependency in sorted(((r, i > 0) for i, r in enumerate(union)), key=lambda x: x[0].name + "/"):
        if ref.name in extra:
            part = _part_lines(index, ref, dependency=dependency) | extra[ref.name]
            h.update("".join(sorted(part)).encode("utf-8"))
        else:
            h.update(_part_block(index, ref, dependency=dependency))
    return "sha256:" + h.hexdigest()


def _skill_collector(target: Target, index: PluginIndex, union: list[PluginRef]) -> Collector:
    """A collector holding only the skill's own files (parts are added by the caller)."""
    col = Collector(index, {r.name: str(r.root) for r in union})
    _add_skill(col, target, union[0].name, str(union[0].root))
    return col


def _add_skill(col: Collector, target: Target, label: str, root: str | None) -> None:
    skill_dir, skill_md = str(target.skill_dir), str(target.skill_md)
    col.add(skill_md, label=label)
    col.add(skill_dir + "/scripts", label=label, required=False)
    col.add(skill_dir + "/prompts", label=label, required=False)
    for ref in _refs(target.frontmatter, skill_md):
        if os.path.isabs(ref):
            raise ClosureError(f"absolute path in frontmatter refs: {ref}", where=skill_md,
                               fix="use a path relative to the skill folder")
        col.add(os.path.join(skill_dir, ref), why="frontmatter of SKILL.md")
    hooks: Any = target.frontmatter.get("hooks")
    if root is not None and hooks is not None:
        _add_hook_commands(col, label, root, [hooks], "a skill hook command")


def closure_notes(target: Target, index: PluginIndex | None, union: list[PluginRef]) -> tuple[str, ...]:
    """What a reader of the verdict should know about how the closure of ``target`` over ``union`` was read: one
    note per hook command that could not be read as the shell reads it (:func:`_add_hook_commands`), in plugin
    order. Raises what :func:`entries` raises."""
    notes: list[str] = []
    if target.plugin_name is not None:
        assert index is not None
        for i, ref in enumerate(union):
            plugin_part(index, ref, dependency=i > 0)
            notes += index._part_notes.get((ref.name, i > 0), ())
        notes += _skill_collector(target, index, union).notes
    return tuple(dict.fromkeys(notes))


def entries(target: Target, index: PluginIndex | None, union: list[PluginRef]) -> list[Entry]:
    """Sorted closure entries of ``target`` over ``union`` (empty union = plain skill)."""
    if target.plugin_name is None:
        skill_dir = os.path.realpath(target.skill_dir)
        parent = os.path.dirname(skill_dir)
        base = os.path.dirname(parent) if os.path.basename(parent) == "skills" else skill_dir
        col = Collector(index, {PLAIN_LABEL: base})
        _add_skill(col, Target(None, None, target.skill, skill_dir,  # type: ignore[arg-type]
                               os.path.join(skill_dir, "SKILL.md"), target.frontmatter), PLAIN_LABEL, None)  # type: ignore[arg-type]
        return sorted((label, rel, path) for (label, rel), path in col.files.items())
    assert index is not None
    files = dict(plugin_part(index, union[0], dependency=False))
    for dep in union[1:]:
        files.update(plugin_part(index, dep, dependency=True))
    files.update(_skill_collector(target, index, union).files)
    return sorted((label, rel, path) for (label, rel), path in files.items())
