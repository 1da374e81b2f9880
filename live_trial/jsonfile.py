"""Schema-validated, atomic JSON files (CONVENTIONS.md "Files"; ARCHITECTURE invariant 4).

Every JSON the harness writes goes through :func:`write_json`; every JSON it reads back goes
through :func:`read_json`. A document that fails its schema is never written, and a refused
write leaves the disk byte-for-byte unchanged.

Files the harness writes are readable by their owner only (0600) and the folders it creates are 0700: its logs and
state carry the screen's text and the transcript's. Text that cannot be encoded as UTF-8 (a lone surrogate from a
transcript's ``\ud800`` escape) is written as its escape (``\ud800``, which JSON reads back as the same string),
never raised. :func:`parse_json` reads JSON from outside (plugin manifests) with a depth and an integer limit.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from live_trial.errors import RefusedInput, SchemaInvalid
from live_trial.resources import load_schema

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only: jsonschema is imported on the first validation
    from jsonschema import Draft202012Validator


@functools.lru_cache(maxsize=None)
def _validator(schema_name: str) -> Draft202012Validator:
    """One validator per shipped schema for the life of the process (building one costs more than most
    validations). jsonschema is imported here, on the first validation, so commands that validate nothing never
    load it."""
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


PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
MAX_JSON_DEPTH = 64


def make_private_dirs(path: Path) -> None:
    """Create the folder ``path`` and its missing parents, each readable by its owner only (0700). Existing folders
    are left as they are. Raises OSError."""
    path = Path(path)
    missing = []
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise


def parse_json(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON from outside the harness. Raises ValueError with a one-line reason for text that is not JSON,
    an integer of more than 4300 digits (Python's int/str conversion limit) or nesting deeper than ``max_depth``."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise ValueError(str(exc)) from None
    except ValueError as exc:   # "Exceeds the limit (4300 digits) for integer string conversion"
        raise ValueError(f"an integer is too long ({str(exc).split(':')[0]})") from None
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > max_depth:
                raise ValueError(f"nested deeper than {max_depth} levels")
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))
    return doc


def write_text_atomic(path: Path, text: str) -> None:
    r"""Write ``text`` to ``path`` (0600) through a temp file in the same folder, fsync, rename. Missing folders are
    created 0700; a lone surrogate is written as its ``\udXXX`` escape."""
    path = Path(path)
    make_private_dirs(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
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


def copy_file_private(src: Path, dst: Path) -> None:
    """Copy the bytes of ``src`` to ``dst`` (created 0600, its missing folders 0700). Raises OSError."""
    make_private_dirs(Path(dst).parent)
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    with open(src, "rb") as fin, os.fdopen(fd, "wb") as fout:
        shutil.copyfileobj(fin, fout)


def write_json(path: Path, doc: Any, schema_name: str | None) -> None:
    """Validate ``doc`` against ``schemas/<schema_name>`` (when given), then write it atomically.

    Raises :class:`SchemaInvalid` before touching the disk when the document does not fit.
    """
    if schema_name:
        validate(doc, schema_name, what=Path(path).name)
    write_text_atomic(Path(path), json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def read_json(path: Path, schema_name: str | None) -> Any:
    """Read a JSON file and validate it; raise :class:`RefusedInput` naming the file when it is unreadable or
    invalid."""
    path = Path(path)
    try:
        doc = parse_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RefusedInput("file not found", where=str(path), code="not_found") from None
    except IsADirectoryError:
        raise RefusedInput("a folder where a file was expected", where=str(path), code="bad_json",
                           fix="remove the folder") from None
    except OSError as exc:
        raise RefusedInput(f"cannot read: {exc.strerror or exc}", where=str(path), code="unreadable",
                           fix="make the file readable") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RefusedInput(f"not valid JSON: {str(exc).splitlines()[0][:200]}", where=str(path), code="bad_json",
                           fix="fix or remove the file") from None
    if schema_name:
        validate(doc, schema_name, what=str(path))
    return doc


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line to ``path`` (logs: trial log, notifications; 0600, folders 0700). Appends are single
    write() calls. A file an older version left readable by others is made 0600."""
    path = Path(path)
    make_private_dirs(path.parent)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o077:
            try:
                os.fchmod(fd, PRIVATE_FILE_MODE)
            except OSError:
                pass
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
