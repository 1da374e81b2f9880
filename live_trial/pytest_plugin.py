"""pytest fixtures of live_trial, loaded through the ``pytest11`` entry point (``live_trial = live_trial.pytest_plugin``).

For skill authors and for our own tests: a rehearsal server, an isolated claude configuration and a synthetic
transcript builder, one block each. Fixtures here hold no production logic.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

# ---------------------------------------------------------------- the rehearsal server


@pytest.fixture
def rehearsal_server() -> Iterator[Callable[..., Any]]:
    """Factory fixture: ``rehearsal_server(scenario, **kw) -> RehearsalServer`` (already started).

    ``scenario`` is a YAML path, a dict in the scenario format, or a loaded ``Scenario``; ``kw`` go to
    :class:`live_trial.rehearsal.server.RehearsalServer` (``port``, ``dump_dir``). Every server started through
    the factory is stopped at teardown. A malformed scenario raises ``RefusedInput`` at the call.
    """
    from live_trial.rehearsal.server import RehearsalServer

    started: list[RehearsalServer] = []

    def factory(scenario: Any, **kw: Any) -> RehearsalServer:
        server = RehearsalServer(scenario, **kw).start()
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()


@pytest.fixture
def rehearsal_config(tmp_path: Path) -> Callable[..., Path]:
    """Factory fixture: ``rehearsal_config(*trusted_cwds, skip_bypass_dialog=False) -> Path``.

    A fresh ``CLAUDE_CONFIG_DIR`` under ``tmp_path`` seeded by :func:`live_trial.rehearsal.config.seed_config`
    (onboarding done, the rehearsal key approved, the given folders trusted). Combine with
    ``rehearsal_env(server.url, config_dir)``.
    """
    from live_trial.rehearsal.config import seed_config

    counter = [0]

    def factory(*trusted_cwds: Path, skip_bypass_dialog: bool = False) -> Path:
        counter[0] += 1
        return seed_config(tmp_path / f"claude-config-{counter[0]}", list(trusted_cwds),
                           skip_bypass_dialog=skip_bypass_dialog)

    return factory



# ---------------------------------------------------------------- synthetic transcripts


@pytest.fixture
def transcript_builder() -> Callable[..., Any]:
    """Factory fixture: ``transcript_builder(**kw) -> TranscriptBuilder`` (live_trial.transcript.builder)."""
    from live_trial.transcript.builder import TranscriptBuilder

    return TranscriptBuilder
