"""The Protocols poll is typed with (live_trial.session.protocols) match what implements them: the real tmux backend,
the screen module, and the shared fake backend of the unit tests, method for method and parameter for parameter."""
from __future__ import annotations

import inspect

import pytest

from live_trial.session import backend as real_backend
from live_trial.session import screen
from live_trial.session.protocols import Backend, Screen
from tests.unit.fakes import FakeBackend


def members(protocol: type) -> list[str]:
    return sorted(n for n, v in vars(protocol).items() if inspect.isfunction(v) and not n.startswith("_"))


def parameters(fn, *, drop_self: bool) -> list[tuple[str, object]]:
    params = list(inspect.signature(fn).parameters.values())
    return [(p.name, p.default) for p in (params[1:] if drop_self else params)]


def test_the_protocols_name_what_poll_reads():
    assert members(Backend) == ["capture", "pane", "pane_alive", "pane_pid", "probe"]
    assert members(Screen) == ["api_retry", "background_work", "dialog", "is_busy", "mask_volatile"]


@pytest.mark.parametrize("impl", [real_backend.Backend, FakeBackend], ids=["tmux", "fake"])
def test_every_backend_implements_the_protocol(impl):
    for name in members(Backend):
        assert parameters(getattr(impl, name), drop_self=True) == parameters(getattr(Backend, name), drop_self=True), name
    assert isinstance(FakeBackend(), Backend)


def test_the_screen_module_implements_the_screen_protocol():
    assert isinstance(screen, Screen)
    for name in members(Screen):
        assert parameters(getattr(screen, name), drop_self=False) == parameters(getattr(Screen, name), drop_self=True)


def test_a_backend_missing_a_method_is_not_one():
    class Partial:
        def pane(self, name):
            return None
    assert not isinstance(Partial(), Backend)
