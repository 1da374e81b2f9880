"""The pinned CLI's own plugin validator, run on every plugin boot will load, before anything starts.

``claude plugin validate <plugin dir>`` (2.1.197) checks the manifest and every skill's frontmatter with the CLI's
own rules, which this project does not re-implement (README "Troubleshooting"). Seen on 2.1.197 (about 0.4 to 2 s per
plugin; references/transcript-jsonl.md "Plugins"): exit 1 with ``✘ Found 1 error:`` / ``  ❯ version: Invalid input:
expected string, received number`` / ``✘ Validation failed`` for ``"version": 1``; exit 0 with ``⚠ Found 2
warnings:`` / ``  ❯ description: No description provided…`` for a plugin the CLI loads with remarks. Each check runs
with a fresh empty ``CLAUDE_CONFIG_DIR`` (the validator writes ``.claude.json`` and ``backups/`` there), so a trial
never touches the user's configuration for it.

An error is a malformed manifest in seed 001's sense (rule 3: fail closed before start): :class:`BootFail` with code
``plugin_not_loaded``, quoting the CLI's line and the file. Warnings are returned for the verdict. A validator that
cannot run or prints nothing it recognises is a warning, never a failure (another CLI version may lack it).

The validator is a node process of about 0.6-1 s of CPU: its answers are kept in ``<cache dir>/plugin-validate.json``
(``schemas/plugin-validate-cache.schema.json``; cache dir: env ``LIVE_TRIAL_CACHE_DIR``, else
``$XDG_CACHE_HOME/live-trial``, else ``~/.cache/live-trial``), keyed by the claude executable and the plugin files the
validator reads (:func:`validator_key`), so repeated trials of an unchanged plugin do not run it again. Seen with
strace on 2.1.197: it opens the plugin folder, ``.claude-plugin/plugin.json`` and ``marketplace.json``, ``agents/``,
``commands/``, ``hooks/hooks.json``, ``skills/`` and each ``skills/*/SKILL.md`` (references/transcript-jsonl.md
"Plugins"). An unreadable or invalid cache is treated as empty.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from live_trial.errors import BootFail, LiveTrialError

VALIDATE_TIMEOUT_S = 60.0
_FILE_RE = re.compile(r"^Validating (?:plugin manifest|skill|[\w -]+?): (?P<path>\S.*)$")
_SECTION_RE = re.compile(r"^[✘⚠]\s+Found \d+ (?P<kind>error|warning)s?:?")
_ITEM_RE = re.compile(r"^\s*❯\s+(?P<text>\S.*)$")
#: Environment the validator runs with besides the caller's (no update check, no telemetry: it may run offline).
QUIET_ENV = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}
CACHE_SCHEMA = "plugin-validate-cache.schema.json"
CACHE_FILE = "plugin-validate.json"
CACHE_MAX_ENTRIES = 256
#: Files whose content the digest covers (every other file counts by its path only).
_READ_SUFFIXES = (".md", ".json")
_SKIP_DIRS = (".git", "node_modules", "__pycache__")


@dataclass
class Validation:
    """What the validator said about one plugin folder: ``errors`` / ``warnings`` as ``(file, text)`` pairs,
    ``exit_code``, ``duration_s`` and ``problem`` when it could not be run or read."""

    plugin_dir: Path
    exit_code: int | None = None
    duration_s: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    problem: str | None = None
    cached: bool = False


def cache_dir(env: Mapping[str, str]) -> Path:
    """Where the validator's answers are kept: ``LIVE_TRIAL_CACHE_DIR``, ``$XDG_CACHE_HOME/live-trial`` or
    ``~/.cache/live-trial``."""
    if env.get("LIVE_TRIAL_CACHE_DIR"):
        return Path(env["LIVE_TRIAL_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(base) / "live-trial"


def validator_key(claude_path: str, plugin_dir: Path) -> str | None:
    """``sha256:<hex>`` over the claude executable (real path, size, modification time) and the plugin's files: every
    path under ``plugin_dir`` (so a path the manifest names appearing or going changes it) and the bytes of each
    ``.json``, ``.md`` and ``.claude-plugin/`` file. None when the executable cannot be read (no caching then)."""
    try:
        real = os.path.realpath(claude_path)
        st = os.stat(real)
    except OSError:
        return None
    digest = hashlib.sha256(f"{real}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    root = Path(plugin_dir)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            if name.endswith(_READ_SUFFIXES) or rel.startswith(".claude-plugin/"):
                try:
                    digest.update(hashlib.sha256(path.read_bytes()).digest())
                except OSError:
                    digest.update(b"unreadable")
    return "sha256:" + digest.hexdigest()


def _load_cache(path: Path) -> dict:
    from live_trial.jsonfile import read_json

    try:
        return read_json(path, CACHE_SCHEMA)
    except LiveTrialError:          # missing, unreadable or not of this schema: start afresh
        return {"version": 1, "entries": {}}


def _store(path: Path, doc: dict, fresh: dict[str, Validation]) -> None:
    """Add the validator's own answers (never a validator that could not be used) and write the cache. Never raises."""
    from live_trial.jsonfile import utc_now, write_json

    entries = doc["entries"]
    for key, result in fresh.items():
        if result.problem is None and result.exit_code is not None:
            entries[key] = {"plugin_dir": str(result.plugin_dir), "exit_code": result.exit_code,
                            "errors": [list(e) for e in result.errors], "warnings": [list(w) for w in result.warnings],
                            "checked_at": utc_now(), "duration_s": result.duration_s}
    for key in sorted(entries, key=lambda k: entries[k]["checked_at"])[:max(0, len(entries) - CACHE_MAX_ENTRIES)]:
        del entries[key]
    try:
        write_json(path, doc, CACHE_SCHEMA)
    except (OSError, LiveTrialError):
        pass


def parse_output(text: str, plugin_dir: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(errors, warnings)`` from the validator's output: each ``❯`` line under ``✘ Found N errors`` /
    ``⚠ Found N warnings``, paired with the file named by the ``Validating …: <path>`` line above it."""
    errors: list[tuple[str, str]] = []
    warnings: list[tuple[str, str]] = []
    current, kind = str(plugin_dir), None
    for line in text.splitlines():
        if m := _FILE_RE.match(line.strip()):
            current, kind = m.group("path").strip(), None
        elif m := _SECTION_RE.match(line.strip()):
            kind = m.group("kind")
        elif (m := _ITEM_RE.match(line)) and kind:
            (errors if kind == "error" else warnings).append((current, m.group("text").strip()))
        elif line.strip().startswith(("✔", "✘ Validation")):
            kind = None
    return errors, warnings


def validate_plugins(claude_path: str, plugin_dirs: Sequence[Path], env: Mapping[str, str], *,
                     timeout_s: float = VALIDATE_TIMEOUT_S, cache: bool = True) -> list[Validation]:
    """Run ``claude plugin validate`` on every folder at once and return one :class:`Validation` each (same order).

    ``env``: the trial's child environment (its ``CLAUDE_CONFIG_DIR`` is replaced by a fresh temporary folder per
    plugin, removed afterwards). With ``cache``, a plugin whose :func:`validator_key` is in the cache gets the kept
    answer (``Validation.cached``; no process). Never raises for the validator's own failures (see
    ``Validation.problem``).
    """
    cache_path = cache_dir(env) / CACHE_FILE
    doc = _load_cache(cache_path) if cache else {"version": 1, "entries": {}}
    keys = [validator_key(claude_path, Path(d)) if cache else None for d in plugin_dirs]
    known: dict[int, Validation] = {}
    for i, (plugin_dir, key) in enumerate(zip(plugin_dirs, keys)):
        entry = doc["entries"].get(key) if key else None
        if entry is not None:
            known[i] = Validation(Path(plugin_dir), exit_code=entry["exit_code"], cached=True,
                                  errors=[tuple(e) for e in entry["errors"]],
                                  warnings=[tuple(w) for w in entry["warnings"]])
    ran = _run_validator(claude_path, [d for i, d in enumerate(plugin_dirs) if i not in known], env, timeout_s)
    out, fresh = [], {}
    for i, key in enumerate(keys):
        if i in known:
            out.append(known[i])
            continue
        result = ran.pop(0)
        out.append(result)
        if key:
            fresh[key] = result
    if cache and fresh:
        _store(cache_path, doc, fresh)
    return out


def _run_validator(claude_path: str, plugin_dirs: Sequence[Path], env: Mapping[str, str],
                   timeout_s: float) -> list[Validation]:
    """One validator process per folder, all at once; their results in the same order."""
    runs = []
    for plugin_dir in plugin_dirs:
        config = tempfile.mkdtemp(prefix="lt-validate-")
        child = {**env, **QUIET_ENV, "CLAUDE_CONFIG_DIR": config}
        started = time.monotonic()
        try:
            proc = subprocess.Popen([claude_path, "plugin", "validate", str(plugin_dir)], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, env=child)
        except OSError as exc:
            proc = None
            runs.append((Validation(Path(plugin_dir), problem=f"could not start: {exc}"), None, config, started))
            continue
        runs.append((Validation(Path(plugin_dir)), proc, config, started))
    out = []
    for result, proc, config, started in runs:
        try:
            if proc is not None:
                try:
                    text, _ = proc.communicate(timeout=timeout_s)
                    result.exit_code = proc.returncode
                    result.errors, result.warnings = parse_output(text or "", result.plugin_dir)
                    if result.exit_code != 0 and not result.errors:
                        tail = " | ".join(ln.strip() for ln in (text or "").splitlines() if ln.strip())[-300:]
                        result.problem = f"exit {result.exit_code} without a validation error line: {tail or '(no output)'}"
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.communicate()
                    result.problem = f"no answer within {timeout_s:.0f}s"
            result.duration_s = round(time.monotonic() - started, 3)
        finally:
            shutil.rmtree(config, ignore_errors=True)
        out.append(result)
    return out


def check_plugins(claude_path: str, plugin_dirs: Sequence[Path], env: Mapping[str, str],
                  checks: list[dict] | None = None) -> list[str]:
    """Validate every plugin boot will load; return the warnings (one line each) for the verdict. ``checks`` (when
    given) gets ``{plugin, cached, duration_s}`` per plugin: whether the kept answer was used, and how long the
    validator process took.

    Raises :class:`BootFail` (code ``plugin_not_loaded``, exit 2) naming the plugin, the file and the CLI's own line
    for the first plugin with an error: the CLI would drop it silently (seed 001 rule 3: fail closed before start).
    """
    warnings: list[str] = []
    for result in validate_plugins(claude_path, plugin_dirs, env):
        if checks is not None:
            checks.append({"plugin": result.plugin_dir.name, "cached": result.cached, "duration_s": result.duration_s})
        if result.errors:
            path, text = result.errors[0]
            more = f" (+{len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
            raise BootFail(f"the CLI would not load plugin {result.plugin_dir.name}: `claude plugin validate` says "
                           f"\"{text}\"{more} in {path}", where=str(result.plugin_dir),
                           fix="fix the named field (the CLI drops a plugin whose manifest it rejects, without a word "
                               "on screen), then run again", code="plugin_not_loaded",
                           details={"validator": [f"{p}: {t}" for p, t in result.errors],
                                    "duration_s": result.duration_s})
        warnings += [f"plugin {result.plugin_dir.name}: {text} ({os.path.basename(path)})"
                     for path, text in result.warnings]
        if result.problem:
            warnings.append(f"plugin {result.plugin_dir.name}: the CLI's plugin validator could not be used "
                            f"({result.problem})")
    return warnings
