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
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from live_trial.errors import BootFail

VALIDATE_TIMEOUT_S = 60.0
_FILE_RE = re.compile(r"^Validating (?:plugin manifest|skill|[\w -]+?): (?P<path>\S.*)$")
_SECTION_RE = re.compile(r"^[✘⚠]\s+Found \d+ (?P<kind>error|warning)s?:?")
_ITEM_RE = re.compile(r"^\s*❯\s+(?P<text>\S.*)$")
#: Environment the validator runs with besides the caller's (no update check, no telemetry: it may run offline).
QUIET_ENV = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}


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
                     timeout_s: float = VALIDATE_TIMEOUT_S) -> list[Validation]:
    """Run ``claude plugin validate`` on every folder at once and return one :class:`Validation` each (same order).

    ``env``: the trial's child environment (its ``CLAUDE_CONFIG_DIR`` is replaced by a fresh temporary folder per
    plugin, removed afterwards). Never raises for the validator's own failures (see ``Validation.problem``).
    """
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


def check_plugins(claude_path: str, plugin_dirs: Sequence[Path], env: Mapping[str, str]) -> list[str]:
    """Validate every plugin boot will load; return the warnings (one line each) for the verdict.

    Raises :class:`BootFail` (code ``plugin_not_loaded``, exit 2) naming the plugin, the file and the CLI's own line
    for the first plugin with an error: the CLI would drop it silently (seed 001 rule 3: fail closed before start).
    """
    warnings: list[str] = []
    for result in validate_plugins(claude_path, plugin_dirs, env):
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
