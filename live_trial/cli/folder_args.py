"""The options of ``run`` that choose a trial's own working folder (README "Running a real trial"): the default (a new
empty folder), ``--cwd DIR`` (a private copy of DIR), ``--in-place DIR`` (DIR itself, locked), ``--keep-cwd`` and
``--include-ignored``. Shared by one trial and ``run --plan``."""
from __future__ import annotations

import argparse
from pathlib import Path

from live_trial.errors import RefusedInput


def add_folder_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--cwd`` and ``--in-place`` (mutually exclusive: both is a usage error, exit 64), ``--keep-cwd`` and
    ``--include-ignored`` to the ``run`` parser."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--cwd", type=Path, default=None, metavar="DIR",
                       help="start from DIR: the trial runs in a private copy of DIR (a git work tree as you have it "
                            "on disk, uncommitted changes included), removed at the end (default: a new empty folder "
                            "<workdir>/cwd)")
    where.add_argument("--in-place", type=Path, default=None, metavar="DIR",
                       help="run in DIR itself, locked for the trial's life (a second trial there is refused)")
    p.add_argument("--keep-cwd", action="store_true", help="with --cwd: keep the copy after the trial")
    p.add_argument("--include-ignored", action="store_true",
                   help="with --cwd: copy what .gitignore ignores too (never .git, .venv, node_modules, the eval root)")


def folder_options(args) -> dict:
    """The TrialRequest keywords of the trial's own folder from ``--cwd`` / ``--in-place`` / ``--keep-cwd`` /
    ``--include-ignored`` (README "Running a real trial"). Raises :class:`RefusedInput` when ``--keep-cwd`` or
    ``--include-ignored`` is given without ``--cwd`` (they only mean something for a copy)."""
    if args.cwd is None:
        extra = [flag for flag, given in (("--keep-cwd", args.keep_cwd), ("--include-ignored", args.include_ignored))
                 if given]
        if extra:
            raise RefusedInput(f"{' and '.join(extra)} {'is' if len(extra) == 1 else 'are'} only for a copy made with "
                               "--cwd DIR", where=extra[0],
                               code="copy_option_without_cwd",
                               fix="add --cwd DIR, or drop the option (the default folder starts empty and is kept)")
    if args.in_place is not None:
        return {"folder": "in_place", "source": args.in_place}
    if args.cwd is not None:
        return {"folder": "copy", "source": args.cwd, "keep_cwd": args.keep_cwd,
                "include_ignored": args.include_ignored}
    return {"folder": "fresh"}
