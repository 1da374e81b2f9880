"""The trial's records, sealed at collect and checked before they are used (README "What a trial
leaves behind", "Whose failure it is").

The session's folder is ``<workdir>/cwd`` by default and the session runs as the same user as the harness, so a
process it started can write anywhere in the workdir, also after collect: a "side effect" the skill never made
(``side-effects/files/<promised file>`` and a ``files.json`` listing it) would be shown to the evaluator as the skill's
output. Moving the folder elsewhere would not stop that; a check does:

- :class:`Sealer` takes the ``sha256`` of each record as collect writes it (of the text written, or of the file read
  back at once): ``pane.txt``, ``transcript.jsonl``, ``subagents/``, ``moved-from/``, ``side-effects/`` (``files.json``,
  the copies under ``files/``, the git files); later ``evaluation.json`` once the evaluator wrote it. ``out/`` is not
  sealed: it is the session's (the marker), shown to the evaluator as never evidence, and a session still at work
  while collect runs may write there. :func:`write_seal` keeps them in ``records-seal.json`` (schema
  ``records-seal.schema.json``, atomic) and returns the seal's own digest, which the trial keeps in memory and in
  ``trial-state.json`` (``records_seal``).
- :func:`differences` compares the workdir with the seal: a sealed file changed or gone, a file added where the seal
  covers (``side-effects/``, ``subagents/``, ``moved-from/``), or the seal itself changed. The trial checks it
  right before the evaluator starts and when the verdict is written; a difference stops the trial as
  ``records_tampered`` (the skill's doing: FAIL).
- :func:`outside_writes` lists what the session wrote in the workdir outside its own folder and the one completion
  marker, found from the transcript's Write/Edit/Bash calls and from a scan of the workdir against the names the
  harness writes: for the verdict's notes, never for the evaluator.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from live_trial import workdir_files as wf
from live_trial.clock import utc_now
from live_trial.jsonfile import read_json, write_json

SCHEMA = "records-seal.schema.json"
SEAL_VERSION = 1
#: Folders of the workdir where every file is a record collect wrote: any file there that the seal does not name was
#: added after collect.
SEALED_FOLDERS = (wf.SIDE_EFFECTS, wf.SUBAGENTS, wf.MOVED_FROM)
#: Every name the harness itself writes directly in a workdir (README "What a trial leaves behind"), besides the
#: session's folder ``cwd/``; ``nudge-<n>.md`` are matched by :data:`_NUDGE_RE`.
HARNESS_NAMES = frozenset({
    wf.TASK, wf.OUT, wf.PANE, wf.TRANSCRIPT, wf.SUBAGENTS, wf.MOVED_FROM, wf.SIDE_EFFECTS, wf.EVALUATION, wf.VERDICT,
    wf.TRIAL_STATE, wf.POLL_STATE, wf.TRIAL_LOG, wf.REPORT, wf.CWD_SNAPSHOT, wf.TRIAL_LOCK, wf.CWD_BASELINE,
    wf.CLAUDE_CONFIG, wf.REHEARSAL_WATCHES, wf.RECORDS_SEAL, wf.MODEL_TAPE, wf.REPLAY_LOG, wf.DEBUG_LOG_DIR,
    wf.MCP_FIXTURES})
_NUDGE_RE = re.compile(r"nudge-\d+\.md")
#: A temp file of an atomic write in progress (:func:`live_trial.jsonfile.write_text_atomic`).
_TEMP_RE = re.compile(r"\..+\.[^.]+\.tmp")
_WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
_PATH_RE = re.compile(r"""(?:(?<=[\s'"=<>|&;(])|^)((?:/|\.\./|\./)[^\s'"`;|&<>()$]*)""")


def text_digest(text: str) -> str:
    """``sha256:<hex>`` of ``text`` as :func:`live_trial.jsonfile.write_text_atomic` writes it (UTF-8, a lone
    surrogate as its backslash escape)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


def file_digest(path: Path) -> str:
    """``sha256:<hex>`` of the bytes of the file at ``path`` (of the link text for a symlink). Raises OSError."""
    h = hashlib.sha256()
    if Path(path).is_symlink():
        h.update(os.fsencode(os.readlink(path)))
    else:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return "sha256:" + h.hexdigest()


@dataclass
class Sealer:
    """The records collect wrote, by workdir-relative POSIX path, with the digest taken as each was written."""

    root: Path
    files: dict[str, str] = field(default_factory=dict)

    def text(self, path: Path, text: str) -> None:
        """Seal the record at ``path`` (in the workdir) as the ``text`` just written there."""
        self.files[self._rel(path)] = text_digest(text)

    def file(self, path: Path) -> None:
        """Seal the record at ``path`` as it is now (read back right after it was copied); a file that is gone is left
        out."""
        try:
            self.files[self._rel(path)] = file_digest(path)
        except OSError:
            pass

    def tree(self, folder: Path) -> None:
        """Seal every file under ``folder`` as it is now (records an earlier collect kept)."""
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file() or path.is_symlink():
                self.file(path)

    def _rel(self, path: Path) -> str:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(self.root)).as_posix()


def seal_digest(files: dict[str, str]) -> str:
    """The digest of a seal's ``files`` map (its JSON with sorted keys): what the trial keeps of the seal."""
    return text_digest(json.dumps(files, sort_keys=True, ensure_ascii=False))


def write_seal(workdir: Path, files: dict[str, str]) -> str:
    """Write ``records-seal.json`` (``{version, sealed_at, files: {path: sha256}}``, schema-checked, atomic) and return
    :func:`seal_digest` of ``files``. Raises SchemaInvalid and OSError."""
    doc = {"version": SEAL_VERSION, "sealed_at": utc_now(), "files": dict(sorted(files.items()))}
    write_json(wf.Workdir.of(workdir).records_seal, doc, SCHEMA)
    return seal_digest(files)


def seal_records(workdir: Path, sealer: Sealer, moved: Iterable[str], *, keep: Callable[[str], None]) -> str:
    """Seal what collect wrote (``sealer``) and the transcripts it kept under ``moved-from/`` right after it (``moved``:
    their file names, :func:`live_trial.trial.moves.collect_moved`, with their subagents): any other file there is
    not a record and is told at the check. Hand the digest to ``keep`` (the trial's state) before
    ``records-seal.json`` is written, so a seal that could not be written is told at the check as gone; return the
    digest. Raises SchemaInvalid and OSError."""
    folder = wf.Workdir.of(workdir).moved_from
    for name in moved:
        sealer.file(folder / name)
        sealer.tree(folder / Path(name).stem)
    digest = seal_digest(sealer.files)
    keep(digest)
    write_seal(workdir, sealer.files)
    return digest


def read_seal(workdir: Path) -> dict[str, str] | None:
    """The ``files`` map of the workdir's ``records-seal.json``; None when it is missing or does not fit its schema."""
    try:
        return dict(read_json(wf.Workdir.of(workdir).records_seal, SCHEMA)["files"])
    except Exception:  # noqa: BLE001 - a missing or rewritten seal is a difference, told by the caller
        return None


def add_to_seal(workdir: Path, digest: str, paths: Iterable[Path]) -> str:
    """Seal ``paths`` (records written after collect, e.g. ``evaluation.json``) too; return the new digest. The seal on
    disk must still be the one of ``digest``: else nothing is added and ``digest`` is returned, so the check that
    follows reports it."""
    files = read_seal(workdir)
    if files is None or seal_digest(files) != digest:
        return digest
    sealer = Sealer(Path(workdir), files)
    for path in paths:
        sealer.file(path)
    return write_seal(workdir, sealer.files)


def _present(root: Path, sealed: Iterable[str]) -> dict[str, Path]:
    """The files of the sealed folders now, and the sealed files elsewhere that still exist, by relative path."""
    found: dict[str, Path] = {}
    for name in SEALED_FOLDERS:
        for path in sorted((root / name).rglob("*")):
            if (path.is_file() or path.is_symlink()) and not _TEMP_RE.fullmatch(path.name):
                found[path.relative_to(root).as_posix()] = path
    for rel in sealed:
        path = root / rel
        if rel not in found and (path.is_file() or path.is_symlink()):
            found[rel] = path
    return found


def differences(workdir: Path, digest: str | None) -> list[str]:
    """What changed in the workdir's records since they were sealed with ``digest`` (the trial's own copy of the
    seal's digest), one phrase each, sorted: ``"<path> changed after collect"``, ``"<path> removed after collect"``,
    ``"<path> is there but collect never wrote it"``, or that the seal itself is gone or was rewritten.
    Empty when nothing changed or nothing was sealed (``digest`` None: a trial collected before seals existed)."""
    if digest is None:
        return []
    root = Path(workdir)
    files = read_seal(root)
    if files is None:
        return [f"{wf.RECORDS_SEAL} was removed or rewritten after collect"]
    if seal_digest(files) != digest:
        return [f"{wf.RECORDS_SEAL} changed after collect"]
    out = []
    for rel, path in _present(root, files).items():
        if rel not in files:
            out.append(f"{rel} is there but collect never wrote it")
            continue
        try:
            same = file_digest(path) == files[rel]
        except OSError:
            same = False
        if not same:
            out.append(f"{rel} changed after collect")
    out += [f"{rel} removed after collect" for rel in files if not (root / rel).is_file()]
    return sorted(out)


def _harness_name(name: str) -> bool:
    return name in HARNESS_NAMES or bool(_NUDGE_RE.fullmatch(name) or _TEMP_RE.fullmatch(name))


def _inside(path: str, root: Path) -> str | None:
    """``path`` (absolute) relative to ``root`` when it lies in it (lexically), else None."""
    try:
        rel = Path(os.path.normpath(path)).relative_to(os.path.normpath(root)).as_posix()
    except ValueError:
        return None
    return None if rel in (".", "") else rel


def _call_paths(block: dict[str, Any], folder: Path) -> list[tuple[str, str]]:
    """``(absolute path, tool)`` of what a tool_use block writes (Write/Edit) or names in a Bash command (a path after
    a space, quote or redirection; ``../`` and ``./`` read from the session's folder)."""
    name, inp = block.get("name"), block.get("input")
    if not isinstance(inp, dict):
        return []
    if name in _WRITE_TOOLS:
        return [(str(inp[k]), str(name)) for k in ("file_path", "notebook_path") if isinstance(inp.get(k), str)]
    if name == "Bash" and isinstance(inp.get("command"), str):
        out = []
        for m in _PATH_RE.finditer(inp["command"]):
            text = m.group(1)
            out.append((text if text.startswith("/") else os.path.join(folder, text), "Bash"))
        return out
    return []


def outside_writes(workdir: Path, folder: Path | None, records: Iterable[dict[str, Any]]) -> list[str]:
    """What the session wrote in the workdir outside its own ``folder`` and the completion marker, sorted, one phrase
    each: ``"<path> (Write)"``, ``"<path> (named by a Bash command)"`` from the tool calls in ``records`` (transcript
    records), and ``"<name> (found in the workdir)"`` for each entry of the workdir the harness does not write
    (:data:`HARNESS_NAMES`) and each file of ``out/`` other than the marker. ``folder`` None: the session's folder is
    not inside the workdir (a copy removed, in place). Never raises for an unreadable folder."""
    root = Path(os.path.abspath(workdir))
    own = Path(os.path.abspath(folder)) if folder is not None else None
    found: dict[str, str] = {}
    for rec in records:
        content = (rec.get("message") or {}).get("content") if isinstance(rec, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            for path, tool in _call_paths(block, own or root / wf.CWD):
                rel = _inside(path, root)
                if rel is None or rel == wf.MARKER_PATH or (own is not None and _inside(path, own) is not None):
                    continue
                if own is not None and Path(os.path.normpath(path)) == own:
                    continue
                found.setdefault(rel, "Write" if tool != "Bash" else "named by a Bash command")
    try:
        entries = sorted(p.name for p in root.iterdir())
        extra_out = sorted(p.relative_to(root).as_posix() for p in (root / wf.OUT).rglob("*")
                           if p.is_file() and p.relative_to(root).as_posix() != wf.MARKER_PATH)
    except OSError:
        entries, extra_out = [], []
    for name in entries:
        if name != wf.CWD and not _harness_name(name):
            found.setdefault(name, "found in the workdir")
    for rel in extra_out:
        found.setdefault(rel, "found in the workdir")
    return [f"{rel} ({how})" for rel, how in sorted(found.items())]


def outside_note(writes: list[str]) -> str:
    """The verdict's note for :func:`outside_writes` (at most 10 named)."""
    shown = "; ".join(writes[:10]) + (f"; and {len(writes) - 10} more" if len(writes) > 10 else "")
    return (f"the session wrote in the workdir outside its own folder and the completion marker: {shown}; none of it "
            "was shown to the evaluator as the skill's output")


def tamper_note(found: list[str]) -> str:
    """The verdict's note for :func:`differences` (at most 10 named)."""
    shown = "; ".join(found[:10]) + (f"; and {len(found) - 10} more" if len(found) > 10 else "")
    return f"the trial's records were changed after collect, by something the session started: {shown}"
