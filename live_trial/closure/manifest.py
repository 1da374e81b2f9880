"""Reading plugin manifests, package contracts and SKILL.md frontmatter.

Every problem is a :class:`ClosureError` (status BOOT_FAIL, exit 2) naming the file and the reason (seed 001 rule 3:
fail closed).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from live_trial.errors import BootFail

try:  # libyaml is much faster; the pure-python loader gives the same result
    _YAML_LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _YAML_LOADER = yaml.SafeLoader

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class ClosureError(BootFail):
    """The plugin set or the behaviour closure cannot be built safely. Status BOOT_FAIL, exit 2."""

    code = "closure"



def read_frontmatter(path: Path) -> dict:
    """Return the YAML frontmatter of a SKILL.md as a dict ({} when the file has none).

    Raises :class:`ClosureError` when the file is unreadable, the block is not closed, the YAML is
    malformed or is not a mapping.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ClosureError(f"cannot read SKILL.md: {exc.__class__.__name__}", where=str(path),
                           fix="make the file readable UTF-8") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return {}
    match = re.search(r"^---[ \t]*\r?$", text[4:], re.MULTILINE)
    if not match:
        raise ClosureError("frontmatter is not closed by a '---' line", where=str(path),
                           fix="end the YAML block with a line '---'")
    block = text[4:4 + match.start()]
    try:
        data = yaml.load(block, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 2}" if mark is not None else ""
        raise ClosureError(f"frontmatter is not valid YAML{at}", where=str(path),
                           fix="fix the YAML between the '---' lines") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ClosureError("frontmatter is not a mapping", where=str(path), fix="write 'key: value' lines")
    return data


def read_json_object(path: Path, what: str) -> dict:
    """The JSON object in ``path`` (``what`` names it in messages, e.g. "plugin.json"). Raises
    :class:`ClosureError` when the file is missing, unreadable, not JSON or not an object."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ClosureError(f"{what} is missing", where=str(path), fix=f"create {what}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
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
