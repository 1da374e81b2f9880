"""Benchmark of a trial's own folder (``run --cwd DIR``): a generated dirty git work tree of 2,000 files, 40 MB.

Prints, each the median of ``--repeat`` runs, against ``cp -a`` of the same work tree (``.git`` included) measured
in the same run:

- ``plan``: listing what the copy takes and its size (``git ls-files``), the refusal check of the size limit;
- ``copy``: the private copy (``git clone --shared --no-checkout``, refs, index, the working files);
- ``start``: what the trial records once the folder is ready (content-hash snapshot + the git tree at start in a
  private object store);
- ``end``: the side effects at the end, after the session added, changed and removed a few files.

Goal: ``copy`` within a small factor of ``cp -a`` (it copies the working files, not the object store); ``start`` and
``end`` read every byte once (hashing), so they grow with the folder's size, which the size limit bounds.

Usage: ``python benchmarks/folder.py [--repeat 5] [--files 2000] [--mb 40]``
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def generate(base: Path, files: int, total_mb: int) -> Path:
    """A repository with ``files`` committed files of ``total_mb`` MB in all, then a dirty state on top."""
    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    size = total_mb * 1_000_000 // files
    for i in range(files):
        path = repo / f"pkg{i % 40:02d}" / f"mod{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(size // 2).hex().encode()[:size])
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=b@example.com", "-c", "user.name=B", "commit", "-qm", "generated")
    for i in range(0, files, 100):                       # a dirty tree: staged, unstaged, untracked, deleted
        target = repo / f"pkg{i % 40:02d}" / f"mod{i:05d}.py"
        if i % 400 == 0:
            target.write_text("staged\n")
            git(repo, "add", str(target))
        elif i % 400 == 100:
            target.write_text("unstaged\n")
        elif i % 400 == 200:
            target.unlink()
        else:
            (repo / f"new{i:05d}.txt").write_text("untracked\n")
    return repo


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    from live_trial.trial import changes, folder

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--mb", type=int, default=40)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="lt-bench-folder-"))
    try:
        repo = generate(base, args.files, args.mb)
        eval_root = base / "eval"
        times: dict[str, list[float]] = {"cp -a (baseline)": [], "plan": [], "copy": [], "start": [], "end": []}
        for n in range(args.repeat):
            wd = base / f"wd{n}"
            wd.mkdir()
            times["cp -a (baseline)"].append(timed(lambda: subprocess.run(
                ["cp", "-a", str(repo), str(base / f"cp{n}")], check=True)))
            plan = None

            def do_plan():
                nonlocal plan
                plan = folder.plan_folder("copy", repo, eval_root, max_bytes=10**10)
            times["plan"].append(timed(do_plan))
            times["copy"].append(timed(lambda: folder.make_folder(plan, wd)))
            copy = wd / "cwd"
            state: dict = {}

            def start():
                state["snap"] = changes.snapshot_cwd(copy, exclude=[wd])
                state["base"] = changes.record_baseline(wd, copy, exclude=[wd])
            times["start"].append(timed(start))
            (copy / "made-by-session.txt").write_text("new\n")
            (copy / "pkg01" / "mod00001.py").write_text("changed\n")
            (copy / "pkg02" / "mod00002.py").unlink()
            times["end"].append(timed(lambda: changes.record_side_effects(
                wd, copy, state["snap"], [wd], baseline=state["base"])))
            shutil.rmtree(wd)
            shutil.rmtree(base / f"cp{n}")
        baseline = statistics.median(times["cp -a (baseline)"])
        print(f"work tree: {len(plan.files)} files, {plan.bytes / 1e6:.1f} MB to copy; repeat {args.repeat}")
        for name, values in times.items():
            med = statistics.median(values)
            print(f"{name:18s} {med * 1000:8.1f} ms   ratio to cp -a: {med / baseline:5.2f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
