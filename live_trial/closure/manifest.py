"""Reading plugin manifests, package contracts and SKILL.md frontmatter.

Every problem is a :class:`ClosureError` (status BOOT_FAIL, exit 2) naming the file and the reason (seed 001 rule 3:
fail closed).
"""
from __future__ import annotations

import errno
import re
from pathlib import Path
from typing import Any

import yaml

from live_trial.errors import BootFail
from live_trial.jsonfile import parse_json

try:  # libyaml is much faster; the pure-python loader gives the same result
    _YAML_LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _YAML_LOADER = yaml.SafeLoader

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class ClosureError(BootFail):
    """The plugin set or the behaviour closure cannot be built safely. Status BOOT_FAIL, exit 2."""

    code = "closure"



#: Limits on what a plugin gives us to parse (seed 001 rule 3: fail closed, never hang or bloat).
FRONTMATTER_MAX_BYTES = 64 * 1024
MANIFEST_MAX_BYTES = 1024 * 1024
MAX_NESTING = 32


def _read_head(path: Path, limit: int, what: str) -> bytes:
    """At most ``limit`` + 1 bytes of ``path``; ClosureError naming the file when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read(limit + 1)
    except FileNotFoundError:
        raise ClosureError(f"{what} is missing", where=str(path), fix=f"create {what}") from None
    except OSError as exc:
        reason = "a symlink loop" if exc.errno == errno.ELOOP else (exc.strerror or type(exc).__name__)
        raise ClosureError(f"cannot read {what}: {reason}", where=str(path),
                           fix="make the file a readable regular file") from None


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def read_frontmatter(path: Path) -> dict:
    """Return the YAML frontmatter of a SKILL.md as a dict ({} when the file has none).

    Raises :class:`ClosureError` when the file is unreadable (a symlink loop, a folder, no permission), the block is
    not closed within :data:`FRONTMATTER_MAX_BYTES`, is not UTF-8, uses a YAML alias (``*name``: an alias can expand
    a few lines into gigabytes, and frontmatter never needs one), nests deeper than :data:`MAX_NESTING`, holds an
    integer of more than 4300 digits, is malformed YAML or is not a mapping.
    """
    path = Path(path)
    raw = _read_head(path, FRONTMATTER_MAX_BYTES + 8, "SKILL.md")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not (raw.startswith(b"---\n") or raw.startswith(b"---\r\n")):
        return {}
    match = re.search(rb"^---[ \t]*\r?$", raw[4:], re.MULTILINE)
    if not match:
        if len(raw) > FRONTMATTER_MAX_BYTES:
            raise ClosureError(f"frontmatter is longer than {FRONTMATTER_MAX_BYTES // 1024} KiB", where=str(path),
                               fix="keep the YAML block between the '---' lines short")
        raise ClosureError("frontmatter is not closed by a '---' line", where=str(path),
                           fix="end the YAML block with a line '---'")
    try:
        block = raw[4:4 + match.start()].decode("utf-8")
    except UnicodeDecodeError:
        raise ClosureError("frontmatter is not UTF-8 text", where=str(path), fix="save SKILL.md as UTF-8") from None
    try:
        # An alias is written "*name": a block without "*" has none, and is parsed once instead of twice.
        if "*" in block and any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(block, Loader=_YAML_LOADER)):
            raise ClosureError("aliases are not allowed in frontmatter", where=str(path),
                               fix="write the value out instead of '*name'")
        data = yaml.load(block, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 2}" if mark is not None else ""
        raise ClosureError(f"frontmatter is not valid YAML{at}", where=str(path),
                           fix="fix the YAML between the '---' lines") from None
    except RecursionError:
        raise ClosureError(f"frontmatter nests deeper than {MAX_NESTING} levels", where=str(path),
                           fix="flatten the YAML") from None
    except ValueError as exc:             # Python's int/str conversion limit (4300 digits)
        raise ClosureError(f"frontmatter holds a value that cannot be read ({str(exc).split(':')[0]})",
                           where=str(path), fix="shorten the number") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ClosureError("frontmatter is not a mapping", where=str(path), fix="write 'key: value' lines")
    if _depth(data) > MAX_NESTING:
        raise ClosureError(f"frontmatter nests deeper than {MAX_NESTING} levels", where=str(path),
                           fix="flatten the YAML")
    return data


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in ``path`` (``what`` names it in messages, e.g. "plugin.json"). Raises
    :class:`ClosureError` when the file is missing, unreadable, larger than :data:`MANIFEST_MAX_BYTES`, not UTF-8
    JSON, nested deeper than :data:`MAX_NESTING`, holds an integer of more than 4300 digits, or is not an object."""
    raw = _read_head(path, MANIFEST_MAX_BYTES, what)
    if len(raw) > MANIFEST_MAX_BYTES:
        raise ClosureError(f"{what} is larger than {MANIFEST_MAX_BYTES // (1024 * 1024)} MiB", where=str(path),
                           fix=f"keep {what} small")
    try:
        doc = parse_json(raw.decode("utf-8"), max_depth=MAX_NESTING)
    except UnicodeDecodeError:
        raise ClosureError(f"{what} is malformed: not UTF-8 text", where=str(path), fix="save it as UTF-8") from None
    except ValueError as exc:
        raise ClosureError(f"{what} is malformed: {exc}", where=str(path), fix=f"fix the JSON of {what}") from None
    if not isinstance(doc, dict):
        raise ClosureError(f"{what} is malformed: not a JSON object", where=str(path), fix="write a JSON object")
    return doc


def _dep_name(entry: Any, where: str, field_name: str) -> str:
    """Plugin name of one dependency entry: "name", "name@marketplace", "name@^1.2" or {"name": ...}."""
    if isinstance(entry, dict):
        entry = entry.get("name")
    if isinstance(entry, str):
        name = entry.split("@", 1)[0].strip()
        if NAME_RE.match(name):
            return name
    raise ClosureError(f"malformed entry in {field_name}: {entry!r}", where=where,
                       fix="use a plugin name (\"name\" or \"name@marketplace\" or {\"name\": ...})")


def name_list(value: Any, where: str, field_name: str) -> list[str]:
    """``value`` as a list of plugin names (None -> []). Raises :class:`ClosureError` naming ``field_name`` and
    ``where`` when it is not a list of non-empty strings."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ClosureError(f"{field_name} must be a list", where=where, fix="write a JSON list of plugin names")
    out: list[str] = []
    for entry in value:
        name = _dep_name(entry, where, field_name)
        if name not in out:
            out.append(name)
    return out


def validate_contract(doc: dict, path: Path) -> dict:
    """The package contract ``doc`` (read from ``path``) checked and normalised to ``{"depends_on": [names],
    "skills": [names] | None (not declared), "narrowing": {skill: [names]} | None}``. Raises :class:`ClosureError`
    naming the field for any malformed part (a contract that fails is never half-used: seed 001 rule 3, fail closed)."""
    where = str(path)
    depends_on = name_list(doc.get("depends_on"), where, "depends_on")
    entry = doc.get("entry_points", {})
    if not isinstance(entry, dict):
        raise ClosureError("entry_points must be an object", where=where, fix='write {"skills": [...]}')
    raw_skills = entry.get("skills")
    skills: list[str] | None
    if raw_skills is None:
        skills = None
    elif isinstance(raw_skills, dict):
        skills = [str(k) for k in raw_skills]
    elif isinstance(raw_skills, list):
        skills = []
        for item in raw_skills:
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, str) or not name:
                raise ClosureError(f"malformed entry in entry_points.skills: {item!r}", where=where,
                                   fix="list skill names")
            skills.append(name)
    else:
        raise ClosureError("entry_points.skills must be a list", where=where, fix="list skill names")
    narrowing = doc.get("skill_dependencies")
    if narrowing is not None:
        if not isinstance(narrowing, dict):
            raise ClosureError("skill_dependencies must be an object", where=where, fix='write {"<skill>": [...]}')
        for skill, deps in narrowing.items():
            if skills is None or skill not in skills:
                raise ClosureError(f"skill_dependencies key '{skill}' is not in entry_points.skills", where=where,
                                   fix="add the skill to entry_points.skills or remove the key")
            for dep in name_list(deps, where, f"skill_dependencies.{skill}"):
                if dep not in depends_on:
                    raise ClosureError(f"skill_dependencies.{skill} names '{dep}', which is not in depends_on",
                                       where=where, fix="add it to depends_on or remove it")
    return {"depends_on": depends_on, "skills": skills,
            "narrowing": None if narrowing is None else
            {k: name_list(v, where, f"skill_dependencies.{k}") for k, v in narrowing.items()}}
