"""Find the files that ship with the package: ``schemas/`` and ``references/``.

In a wheel they live inside the package (``live_trial/schemas``); in a source checkout or an
editable install they are the top-level folders of the repository. Both are found here.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any

_REPO_ROOT = Path(__file__).resolve().parent.parent


def resource_path(kind: str, name: str) -> Path:
    """Return the path of ``<kind>/<name>`` (kind is ``schemas`` or ``references``).

    Raises FileNotFoundError naming both places looked at.
    """
    packaged = resources.files("live_trial") / kind / name
    candidates = [Path(str(packaged)), _REPO_ROOT / kind / name]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"{kind}/{name} not found in {candidates[0]} or {candidates[1]}")


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    """Load ``schemas/<name>`` (e.g. ``live-trial-verdict.schema.json``) as a dict."""
    schema: dict[str, Any] = json.loads(resource_path("schemas", name).read_text(encoding="utf-8"))
    return schema


def read_reference(name: str) -> str:
    """Return the text of ``references/<name>``."""
    return resource_path("references", name).read_text(encoding="utf-8")


def reference_names(pattern: str) -> list[str]:
    """The names of the files in ``references/`` that match the glob ``pattern`` (e.g. ``notifications.*.json``),
    sorted, from both places :func:`resource_path` looks in."""
    folders = [Path(str(resources.files("live_trial") / "references")), _REPO_ROOT / "references"]
    return sorted({p.name for folder in folders if folder.is_dir() for p in folder.glob(pattern) if p.is_file()})


def repo_root() -> Path:
    """The source checkout root (meaningful only when running from a checkout or editable install)."""
    return _REPO_ROOT
