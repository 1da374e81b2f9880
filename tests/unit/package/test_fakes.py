"""The shared fakes (tests/unit/fakes.py) and the dialogs send's tests answer (tests/unit/session/test_send.py) stand
for what the code is given, method for method and parameter for parameter: each implements its Protocol (``session.protocols.Backend``, ``judge.evaluator.Runner``), and every method
a fake has of the real tmux backend (which boot and send are typed with) or of ``session.proctree`` takes that
method's parameters. A Protocol that grows a method, or a parameter renamed, moved, or added without a default,
fails here, not as a test that passes on a fake the code could no longer be given."""
from __future__ import annotations

import inspect
from typing import Protocol

import pytest

from live_trial.judge.evaluator import Runner, run_process
from live_trial.session import proctree, protocols
from live_trial.session.backend import Backend as TmuxBackend
from tests.unit import fakes
from tests.unit.session import test_send as send_tests

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
VARIADIC = (P.VAR_POSITIONAL, P.VAR_KEYWORD)
#: The kinds a parameter of the fake may have for each kind the real one has (a call written against the real one
#: must still work).
ACCEPTS = {P.POSITIONAL_ONLY: POSITIONAL, P.POSITIONAL_OR_KEYWORD: (P.POSITIONAL_OR_KEYWORD,),
           P.KEYWORD_ONLY: (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD)}


def protocol_members(protocol: type) -> list[str]:
    """The methods a Protocol declares in its own body (``__call__`` included)."""
    return sorted(n for n, v in vars(protocol).items()
                  if inspect.isfunction(v) and (not n.startswith("_") or n == "__call__"))


def own_methods_of(fake: type, real: object) -> list[str]:
    """The methods ``fake`` defines itself that ``real`` (a class or a module) also has."""
    return sorted(n for n, v in vars(fake).items() if inspect.isfunction(v) and n != "__init__" and hasattr(real, n))


def parameters(owner: object, name: str) -> list[inspect.Parameter]:
    """The parameters of ``owner.name``, without ``self`` when ``owner`` is a class."""
    params = list(inspect.signature(getattr(owner, name)).parameters.values())
    return params[1:] if inspect.isclass(owner) else params


def parameter_problems(got: list[inspect.Parameter], want: list[inspect.Parameter]) -> list[str]:
    """Why a callable with parameters ``got`` cannot take every call written against ``want`` (empty: it can)."""
    problems = []
    got_positional = [p.name for p in got if p.kind in POSITIONAL]
    want_positional = [p.name for p in want if p.kind in POSITIONAL]
    if got_positional[:len(want_positional)] != want_positional:
        problems.append(f"positional parameters {got_positional}, not {want_positional}")
    named = {p.name: p for p in got if p.kind not in VARIADIC}
    for w in want:
        if w.kind in VARIADIC:
            if not any(p.kind == w.kind for p in got):
                problems.append(f"no {'*' if w.kind == P.VAR_POSITIONAL else '**'}{w.name}")
            continue
        g = named.get(w.name)
        if g is None:
            problems.append(f"no parameter {w.name!r}")
        elif g.kind not in ACCEPTS[w.kind]:
            problems.append(f"{w.name!r} is {g.kind.description}, not {w.kind.description}")
        elif w.default is not P.empty and g.default is P.empty:
            problems.append(f"{w.name!r} has no default")
    wanted = {w.name for w in want}
    problems += [f"{p.name!r} is required and not a parameter of what it stands for" for p in got
                 if p.kind not in VARIADIC and p.name not in wanted and p.default is P.empty]
    return problems


def incompatibilities(impl: object, spec: object, names: list[str]) -> list[str]:
    """What keeps ``impl`` from standing in for ``spec`` on the methods ``names``: a method it lacks, or one that
    cannot take a call written against ``spec``."""
    problems = []
    for name in names:
        if not callable(getattr(impl, name, None)):
            problems.append(f"{name}: missing")
            continue
        problems += [f"{name}: {p}" for p in parameter_problems(parameters(impl, name), parameters(spec, name))]
    return problems


@pytest.mark.parametrize("fake,protocol", [(fakes.FakeBackend, protocols.Backend), (fakes.FakeRunner, Runner)],
                         ids=["FakeBackend", "FakeRunner"])
def test_each_fake_implements_its_protocol(fake, protocol):
    names = protocol_members(protocol)
    assert names and incompatibilities(fake, protocol, names) == []


def test_the_send_dialogs_take_the_protocol_s_parameters():
    for fake in (send_tests.GateCLI, send_tests.Late, send_tests.Dropping):
        assert incompatibilities(fake, protocols.Backend, ["capture"]) == [], fake.__name__


def test_the_fake_backend_is_a_backend_and_the_real_runner_a_runner():
    assert isinstance(fakes.FakeBackend(), protocols.Backend)
    assert parameter_problems(list(inspect.signature(run_process).parameters.values()),
                              parameters(Runner, "__call__")) == []


@pytest.mark.parametrize("fake,real", [(fakes.FakeBackend, TmuxBackend), (fakes.FakeCLI, TmuxBackend),
                                       (fakes.FakeTmux, TmuxBackend), (fakes.NoProcesses, proctree),
                                       (send_tests.GateCLI, TmuxBackend), (send_tests.Late, TmuxBackend),
                                       (send_tests.Dropping, TmuxBackend)],
                         ids=["FakeBackend", "FakeCLI", "FakeTmux", "NoProcesses", "GateCLI", "Late", "Dropping"])
def test_every_method_a_fake_has_of_the_real_one_takes_its_parameters(fake, real):
    names = own_methods_of(fake, real)
    assert names and incompatibilities(fake, real, names) == []


# ----------------------------------------------------------------- the check can fail

def test_a_protocol_that_grows_a_method_or_changes_a_parameter_is_caught():
    class Grown(Protocol):
        def capture(self, name: str, scrollback: bool = False) -> str: ...
        def pane_size(self, name: str) -> tuple[int, int]: ...

    class Changed(Protocol):
        def probe(self, session: str, pane_id: str | None = None) -> tuple[bool, str]: ...
        def capture(self, name: str, scrollback: bool = False, *, lines: int = 50) -> str: ...
        def pane_alive(self, name: str, /) -> bool: ...
        def send_keys(self, name: str, *keys: str, literal: bool) -> None: ...

    assert incompatibilities(fakes.FakeBackend, Grown, protocol_members(Grown)) == ["pane_size: missing"]
    assert incompatibilities(fakes.FakeBackend, Changed, protocol_members(Changed)) == [
        "capture: no parameter 'lines'",
        "probe: positional parameters ['name', 'pane_id'], not ['session', 'pane_id']",
        "probe: no parameter 'session'",
        "probe: 'name' is required and not a parameter of what it stands for",
        "send_keys: no parameter 'literal'",
    ]


def test_a_fake_that_asks_more_than_the_real_one_is_caught():
    class Strict:
        def capture(self, name, scrollback):
            return ""

        def probe(self, name, pane_id=None, *, wait):
            return False, ""

        def pane_alive(self, *, name):
            return True

    assert incompatibilities(Strict, protocols.Backend, ["capture", "pane_alive", "probe"]) == [
        "capture: 'scrollback' has no default",
        "pane_alive: positional parameters [], not ['name']",
        "pane_alive: 'name' is keyword-only, not positional or keyword",
        "probe: 'wait' is required and not a parameter of what it stands for",
    ]
