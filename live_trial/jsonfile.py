"""Schema-validated, atomic JSON files (CONVENTIONS.md "Files"; ARCHITECTURE invariant 4).

Every JSON the harness writes goes through :func:`write_json`; every JSON it reads back goes
through :func:`read_json`. A document that fails its schema is never written, and a refused
write leaves the disk byte-for-byte unchanged.
"""
from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

from live_trial.errors import RefusedInput, SchemaInvalid
from live_trial.resources import load_schema


def utc_now() -> str:
    """Current time as UTC ISO 8601 with ``Z`` and millisecond precision."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@lru_cache(maxsize=None)
def _validator(schema_name: str):
    """One validator per schema for the process (building one costs more than most validations). jsonschema is
    imported here, on the first validation, so commands that validate nothing never load it."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(schema_name))


def schema_errors(doc: Any, schema_name: str) -> list[str]:
    """Return every schema error of ``doc`` against ``schemas/<schema_name>``, sorted by path; empty when valid."""
    validator = _validator(schema_name)
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in errors]


def validate(doc: Any, schema_name: str, *, what: str = "document") -> None:
    """Raise :class:`SchemaInvalid` listing all errors at once when ``doc`` does not fit its schema."""
    errs = schema_errors(doc, schema_name)
    if errs:
        raise SchemaInvalid(f"{what} does not fit {schema_name}: " + "; ".join(errs[:5])
                            + (f" (+{len(errs) - 5} more)" if len(errs) > 5 else ""),
                            fix="this is a harness bug or a hand-edited file; nothing was written")


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same folder, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json(path: Path, doc: Any, schema_name: str | None) -> None:
    """Validate ``doc`` against ``schemas/<schema_name>`` (when given), then write it atomically.

    Raises :class:`SchemaInvalid` before touching the disk when the document does not fit.
    """
    if schema_name:
        validate(doc, schema_name, what=Path(path).name)
    write_text_atomic(Path(path), json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def read_json(path: Path, schema_name: str | None) -> Any:
    """Read a JSON file and validate it; raise :class:`RefusedInput` naming the file when it is unreadable or invalid."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RefusedInput("file not found", where=str(path), code="not_found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RefusedInput(f"not valid JSON: {exc}", where=str(path), code="bad_json",
                           fix="fix or remove the file") from None
    if schema_name:
        validate(doc, schema_name, what=str(path))
    return doc


def append_jsonl(path: Path, record: dict) -> None:
    """Append one JSON line to ``path`` (logs: trial log, notifications). Appends are single write() calls."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
