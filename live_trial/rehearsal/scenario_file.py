r"""Reading a rehearsal scenario file safely (README Troubleshooting): one line naming the file for anything that
could make loading slow, big or crash, before the schema is checked by :mod:`live_trial.rehearsal.scenario`.

Limits: :data:`SCENARIO_MAX_BYTES` of UTF-8 text; YAML aliases may be used, but what they expand to is counted
(once per shared object, never by expanding it) and refused past :data:`MAX_EXPANDED_VALUES` values or when an alias
refers to itself; nesting up to :data:`MAX_NESTING`; no lone surrogate in any string or key. libyaml (PyYAML's
CSafeLoader) parses; it refuses ``\ud800``-style escapes and nesting past its own limit itself.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from live_trial.errors import RefusedInput, require_utf8

try:  # libyaml is much faster; the pure-python loader gives the same result
    _YAML_LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _YAML_LOADER = yaml.SafeLoader

SCENARIO_MAX_BYTES = 1024 * 1024
MAX_EXPANDED_VALUES = 10_000
MAX_NESTING = 64


def read_yaml(path: Path, where: str) -> Any:
    """The YAML document of the scenario file ``path`` (``where`` names it in messages). Raises :class:`RefusedInput`
    (exit 2) when it is missing or unreadable, larger than :data:`SCENARIO_MAX_BYTES`, not UTF-8, not YAML (libyaml
    also refuses a lone surrogate escape), nested past libyaml's limit or holds an integer of more than 4300
    digits."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(SCENARIO_MAX_BYTES + 1)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise RefusedInput("scenario file not found", where=where, code="scenario_not_found",
                           fix="pass a path to a scenario YAML file") from None
    except OSError as exc:
        raise RefusedInput(f"scenario file cannot be read ({exc.strerror or type(exc).__name__})", where=where,
                           code="scenario_not_found", fix="pass a readable scenario YAML file") from None
    if len(raw) > SCENARIO_MAX_BYTES:
        raise RefusedInput(f"scenario is larger than {SCENARIO_MAX_BYTES // 1024} KiB", where=where,
                           code="scenario_invalid", fix="split it or shorten its replies")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RefusedInput(f"scenario is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                           where=where, code="scenario_invalid", fix="save the scenario as UTF-8") from None
    try:
        doc = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        pos = f" at line {mark.line + 1}" if mark else ""
        raise RefusedInput(f"scenario is not valid YAML{pos}: {getattr(exc, 'problem', exc)}", where=where,
                           code="scenario_invalid") from None
    except (RecursionError, ValueError) as exc:     # deep nesting; Python's 4300-digit int limit
        why = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
        raise RefusedInput(f"scenario cannot be read: {why}", where=where, code="scenario_invalid",
                           fix="simplify the YAML") from None
    return doc


def check_text(doc: Any, where: str) -> None:
    """Refuse a document whose aliases expand to more than :data:`MAX_EXPANDED_VALUES` values or refer to themselves,
    that nests deeper than :data:`MAX_NESTING`, or that holds a string that is not valid UTF-8 (a lone surrogate
    escape). YAML aliases share one object, so the expanded size is counted once per object (linear in the file), never
    by expanding it."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, str, bool]] = [(doc, "<root>", False)]
    open_ids: set[int] = set()
    while stack:
        node, field_path, done = stack.pop()
        if len(open_ids) > MAX_NESTING:
            raise RefusedInput(f"scenario nests deeper than {MAX_NESTING} levels (at {field_path})", where=where,
                               code="scenario_invalid", fix="flatten the YAML")
        if isinstance(node, str):
            require_utf8(node, f"scenario field {field_path}", where=where,
                         fix="write the character itself, not a \\ud800-\\udfff escape")
            continue
        if not isinstance(node, (dict, list)):
            continue
        key = id(node)
        if done:
            open_ids.discard(key)
            children = node.values() if isinstance(node, dict) else node
            sizes[key] = 1 + sum(sizes.get(id(c), 1) for c in children)
            if sizes[key] > MAX_EXPANDED_VALUES:
                raise RefusedInput(f"scenario aliases expand to more than {MAX_EXPANDED_VALUES} values", where=where,
                                   code="scenario_invalid",
                                   fix="write the replies out instead of nesting '*name' aliases")
            continue
        if key in sizes:
            continue
        if key in open_ids:
            raise RefusedInput(f"scenario field {field_path} refers to itself through an alias", where=where,
                               code="scenario_invalid", fix="remove the recursive '*name' alias")
        open_ids.add(key)
        stack.append((node, field_path, True))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if isinstance(k, str):
                require_utf8(k, f"scenario key {field_path}/{k!r}", where=where)
            stack.append((v, f"{field_path}/{k}".replace("<root>/", ""), False))
