"""What plan's reuse check reads from an old trial's transcript (its sha256, how many human prompts it holds, whether
the rehearsal server wrote any of its replies), remembered between runs in ``<eval-root>/transcript-cache.json``
(``schemas/transcript-cache.schema.json``).

A transcript is read once, as a stream (one pass for all three). An entry is used again only
when the file's device, inode, size, mtime and ctime are all unchanged, as git's index does with its entries; a
write changes the ctime even when the mtime is set back. A file whose mtime or ctime lies within
:data:`RACY_NS` of the moment it was read is "racily clean" in git's words (a second write in the same clock tick
would leave every stat field as it was) and is read again, so a changed file never hits the cache. A cache file that
is missing, unreadable or does not fit its schema is an empty cache; one that cannot be written is not kept (plan
still plans). What is remembered is a reading of the file under the harness's rules of the day (what counts as a human
prompt changes as the CLI is better understood): the cache records :func:`rules_fingerprint`, the hash of the code
that reads and counts, and a cache written under other rules (or by a harness that did not record them, version 1)
is an empty cache. Rule: README "Planning many skills" (reuse needs the transcript to still hash to
``transcript_sha256`` and to hold exactly one human prompt).
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from live_trial.errors import LiveTrialError
from live_trial.jsonfile import read_json, write_json

CACHE_FILE = "transcript-cache.json"
SCHEMA = "transcript-cache.schema.json"
RACY_NS = 2_000_000_000
CACHE_VERSION = 2

#: The modules whose code decides what an entry holds: how lines become records, what a human prompt is, what a
#: rehearsal reply is, and this module.
RULE_MODULES = ("live_trial.transcript.stream", "live_trial.transcript.summary", "live_trial.transcript.reader",
                "live_trial.transcript.records", "live_trial.acceptance.origin", __name__)


@functools.lru_cache(maxsize=1)
def rules_fingerprint() -> str:
    """``sha256:<hex>`` of the source of :data:`RULE_MODULES`: equal only while the reading and counting rules are."""
    h = hashlib.sha256()
    for name in RULE_MODULES:
        h.update(Path(importlib.import_module(name).__file__ or "").read_bytes())
    return "sha256:" + h.hexdigest()


def may_hold_reply_or_prompt(line: bytes) -> bool:
    r"""False only for a transcript line that can be neither a user nor an assistant record (no ``"user"``, no
    ``assistant``, no ``\u`` escape that could spell them): such lines are hashed, not parsed."""
    return b'"user"' in line or b"assistant" in line or b"\\u" in line


@dataclass(frozen=True)
class TranscriptFacts:
    """``sha256`` (``sha256:<hex>`` of the bytes), ``human_prompts`` (how many), ``scripted`` (a rehearsal reply)."""

    sha256: str
    human_prompts: int
    scripted: bool


class TranscriptCache:
    """The cache of one plan run: :meth:`facts` per transcript, :meth:`save` at the end."""

    def __init__(self, eval_root: Path) -> None:
        self.root = Path(eval_root)
        self.root_abs = os.path.abspath(self.root)
        self.path = self.root / CACHE_FILE
        self.old: dict[str, dict[str, Any]] = {}
        self.used: dict[str, dict[str, Any]] = {}
        if self.path.is_file():
            try:
                doc = read_json(self.path, SCHEMA)
            except LiveTrialError:
                doc = {}
            self.old = doc["entries"] if doc and doc["rules"] == rules_fingerprint() else {}

    def scripted(self, transcript: Path) -> bool:
        """Whether ``transcript`` holds a reply of the rehearsal server (for
        :func:`live_trial.acceptance.origin.workdir_origin`). Raises OSError when it cannot be read."""
        return self.facts(transcript).scripted

    def facts(self, transcript: Path) -> TranscriptFacts:
        """What ``transcript`` holds (see :class:`TranscriptFacts`). Raises OSError when it cannot be read."""
        from live_trial.acceptance.origin import is_rehearsal_reply
        from live_trial.transcript.reader import hashed_fold
        from live_trial.transcript.records import is_human_prompt

        transcript = Path(transcript)
        path = os.path.abspath(transcript)         # the key only names the entry: the file's identity decides
        key = os.path.relpath(path, self.root_abs) if path.startswith(self.root_abs + os.sep) else path
        st = os.stat(transcript)
        ident = {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                 "ctime_ns": st.st_ctime_ns}
        entry = self.used.get(key)                     # read earlier in this run
        if entry is None or any(entry[k] != v for k, v in ident.items()):
            entry = self.old.get(key)
            if entry is not None and (any(entry[k] != v for k, v in ident.items())
                                      or max(st.st_mtime_ns, st.st_ctime_ns) >= entry["read_at_ns"] - RACY_NS):
                entry = None
        if entry is None:
            read_at = time.time_ns()
            seen = {"prompts": 0, "scripted": False}

            def fold(rec: dict[str, Any]) -> None:
                seen["prompts"] += is_human_prompt(rec)
                seen["scripted"] = seen["scripted"] or is_rehearsal_reply(rec)
            sha = hashed_fold(transcript, fold, select=may_hold_reply_or_prompt)
            entry = {**ident, "read_at_ns": read_at, "sha256": sha, "human_prompts": seen["prompts"],
                     "scripted": seen["scripted"]}
            after = os.stat(transcript)
            if (after.st_size, after.st_mtime_ns, after.st_ctime_ns) != (st.st_size, st.st_mtime_ns, st.st_ctime_ns):
                self.used.pop(key, None)                  # it changed while it was read: never remembered
                return TranscriptFacts(sha, entry["human_prompts"], entry["scripted"])
        self.used[key] = entry
        return TranscriptFacts(entry["sha256"], entry["human_prompts"], entry["scripted"])

    def save(self) -> None:
        """Write the entries used in this run (schema-validated, atomic, 0600) when they differ from the file's;
        nothing when the eval root does not exist or cannot be written."""
        if self.used == self.old or not self.root.is_dir():
            return
        try:
            write_json(self.path, {"version": CACHE_VERSION, "rules": rules_fingerprint(), "entries": self.used},
                       SCHEMA)
        except OSError:
            pass
