"""What a ``live-trial`` process pays before any work of its own: the interpreter's start and the imports of the
libraries the project requires on that path (jsonschema for every JSON it writes or reads back, libtmux for every
tmux call, pyyaml for frontmatter and scenarios). The benchmarks print it next to their goals, so a ratio that
cannot hold while those libraries are used says so, with the number.

Measured as processes, like the commands: ``python -c "import <modules>"`` with the same interpreter and
environment, median of ``repeat`` runs; ``python -c pass`` is the interpreter alone.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time


def process_cost(modules: tuple[str, ...], repeat: int = 9, env: dict | None = None) -> tuple[float, float]:
    """``(median wall s, median CPU s)`` of a process that starts the interpreter and imports ``modules`` (none:
    the interpreter alone), then exits."""
    code = "import " + ", ".join(modules) if modules else "pass"
    walls, cpus = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code], env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        if status != 0:
            raise SystemExit(f"python -c {code!r} failed")
        walls.append(time.perf_counter() - t0)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def describe(label: str, modules: tuple[str, ...], repeat: int = 9, env: dict | None = None) -> tuple[float, float]:
    """Print one ``FLOOR`` line for ``modules`` and return :func:`process_cost`'s pair."""
    wall, cpu = process_cost(modules, repeat, env)
    print(f"FLOOR {label}: python + import {', '.join(modules) or '(nothing)'}: {wall * 1000:.1f} ms wall, "
          f"{cpu * 1000:.1f} ms CPU (median of {repeat} processes)")
    return wall, cpu
