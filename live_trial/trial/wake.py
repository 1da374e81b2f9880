"""Waking poll as soon as a file it decides on changes, instead of only on its timed tick.

Poll decides DONE from the transcript (and the file a ``/clear`` moved the session to), the CLI's
``sessions/<pid>.json`` and the completion marker. It sleeps until one of them changes or its tick interval passes,
whichever comes first; the timed tick stays, for the screen (which cannot be watched), the STALL and HARD_CAP clocks,
and wherever file events are not available. On 2.1.197 the CLI writes ``turn_duration`` as the turn's last record,
about 0.1 s after its status turned ``idle`` (references/transcript-jsonl.md "poll"), so the tick that the
``turn_duration`` write wakes can say DONE at once.

Linux inotify through ``inotify_simple``: a thin wrapper of the three system calls, one file descriptor read with a
timeout, no thread; its only job here is to end a sleep early. (``watchdog`` would add an observer thread per poll
and a queue to bring its events back, for portability the timed tick already gives.) Without inotify (another
system, or the per-user watch limit reached) :meth:`FileWake.wait` sleeps the whole interval, as poll always did.

A folder is watched, not the file: the CLI creates files after poll starts (the transcript at the first prompt, a
moved transcript) and may replace them. Events are filtered by file name, so poll's own state file, another
session's status file or another trial's transcript never wake it.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Protocol

#: At least this long between two ticks that a file change woke: the CLI writes a few records in a row.
MIN_GAP_S = 0.03


class _Event(Protocol):
    """One inotify event as ``inotify_simple`` reads it (its ``Event`` named tuple)."""

    @property
    def wd(self) -> int: ...

    @property
    def mask(self) -> int: ...

    @property
    def name(self) -> str: ...


class _INotify(Protocol):
    """The part of ``inotify_simple.INotify`` a wake uses (paths are str, masks ints, timeouts milliseconds)."""

    def add_watch(self, path: str, mask: int) -> int: ...

    def rm_watch(self, wd: int) -> None: ...

    def read(self, timeout: int | None = None) -> list[_Event]: ...

    def close(self) -> None: ...


class FileWake:
    """Sleep until one of the watched files changes or a timeout passes (see the module docstring).

    ``watch(paths)`` sets the files (absolute paths); ``wait(timeout_s)`` sleeps; ``close()`` releases the inotify
    descriptor. ``available`` is False when file events cannot be had (then ``wait`` only sleeps). Never raises for
    a missing folder or an inotify failure.
    """

    def __init__(self, *, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sleep, self._clock = sleep, clock
        self._names: dict[str, set[str]] = {}          # watched folder -> file names that count
        self._wd: dict[str, int] = {}                   # watched folder -> watch descriptor
        self._folder_of: dict[int, str] = {}
        self._last_wake = float("-inf")
        self._inotify: _INotify | None = None
        self.available = False
        try:
            from inotify_simple import INotify, flags

            self._inotify = INotify()
            self._mask = flags.MODIFY | flags.CREATE | flags.MOVED_TO | flags.CLOSE_WRITE
            self.available = True
        except (ImportError, OSError, AttributeError):
            self._inotify = None

    def watch(self, paths: Iterable[os.PathLike[str] | str | None]) -> None:
        """Watch exactly these files from now on (None entries are skipped). A file whose folder does not exist
        yet is left out until a later call finds the folder."""
        if self._inotify is None:
            return
        wanted: dict[str, set[str]] = {}
        for path in paths:
            if path is None:
                continue
            folder, name = os.path.split(os.path.abspath(os.fspath(path)))
            wanted.setdefault(folder, set()).add(name)
        for folder in [f for f in self._wd if f not in wanted]:
            self._remove(folder)
        for folder, names in wanted.items():
            if folder not in self._wd:
                try:
                    wd = self._inotify.add_watch(folder, self._mask)
                except OSError:           # not there yet, or no watches left: the timed tick covers it
                    continue
                self._wd[folder], self._folder_of[wd] = wd, folder
            self._names[folder] = names

    def _remove(self, folder: str) -> None:
        wd = self._wd.pop(folder)
        self._names.pop(folder, None)
        self._folder_of.pop(wd, None)
        if self._inotify is None:
            return
        try:
            self._inotify.rm_watch(wd)
        except OSError:                   # the folder went away: its watch went with it
            pass

    def wait(self, timeout_s: float) -> bool:
        """Sleep up to ``timeout_s`` seconds; return True as soon as a watched file changed (False on timeout).

        Two wakes are at least :data:`MIN_GAP_S` apart, so a burst of writes costs one tick, not one per record."""
        if self._inotify is None or not self._wd:
            self._sleep(max(0.0, timeout_s))
            return False
        deadline = self._clock() + max(0.0, timeout_s)
        while True:
            left = deadline - self._clock()
            if left <= 0:
                return False
            try:
                events = self._inotify.read(timeout=max(1, int(left * 1000)))
            except OSError:
                self._sleep(max(0.0, deadline - self._clock()))
                return False
            if any(self._counts(ev) for ev in events):
                gap = self._last_wake + MIN_GAP_S - self._clock()
                if gap > 0:
                    self._sleep(min(gap, max(0.0, deadline - self._clock())))
                    self._drain()
                self._last_wake = self._clock()
                return True

    def _counts(self, event: _Event) -> bool:
        folder = self._folder_of.get(event.wd)
        if folder is None:
            return event.mask & 0x4000 != 0            # IN_Q_OVERFLOW: events were lost, look at everything
        return event.name in self._names.get(folder, ())

    def _drain(self) -> None:
        if self._inotify is None:
            return
        try:
            self._inotify.read(timeout=0)
        except OSError:
            pass

    def close(self) -> None:
        """Release the inotify descriptor (the object then only sleeps)."""
        if self._inotify is not None:
            try:
                self._inotify.close()
            except OSError:
                pass
            self._inotify, self._wd, self._names, self._folder_of = None, {}, {}, {}
