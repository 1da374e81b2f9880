"""``backend nudge`` (seed 001 STALL table row 4): the fixed nudge text in the notices' language goes to
nudge-<n>.md, is counted in trial-state.json before it is pasted, and is refused past nudge_max with nothing written;
``run`` nudges with the same text."""
from __future__ import annotations

import pytest

from live_trial.errors import RefusedInput
from live_trial.notices.catalogue import nudge_text
from live_trial.trial.nudge import nudge_by_hand
from live_trial.trial.state import TrialState
from tests.unit.acceptance.test_verdict_cmd import snapshot
from tests.unit.fakes import trial_state

SESSION = "lt-20261130T101500-abcd-greet"


@pytest.fixture
def workdir(tmp_path):
    trial_state(phase="prepared", policy={"nudge_max": 2, "stall_limit_s": 300, "hard_cap_s": 7200,
                                          "poll_interval_s": 0.5, "done_stable_ticks": 2, "boot_timeout_s": 60,
                                          "hard_cap_warn_ratio": 0.8, "copy_max_bytes": 1, "max_cost_usd": None,
                                          "plan_max_cost_usd": None}).save(tmp_path / "trial-state.json")
    return tmp_path


def test_the_seeds_fixed_text_is_in_both_catalogues():
    assert nudge_text("ja") == "task.md の指示どおり質問せず自走で続行し、完了条件を満たしてください\n"
    assert nudge_text("en").startswith("Follow the instructions of task.md: go on on your own without asking")


def test_each_nudge_is_written_counted_and_pasted_then_refused_past_nudge_max(workdir, monkeypatch):
    monkeypatch.setenv("LIVE_TRIAL_LANG", "en")
    pasted = []
    for n in (1, 2):
        sent = nudge_by_hand(workdir, SESSION, deliver=pasted.append)
        assert (sent.n, sent.nudge_max, sent.path) == (n, 2, workdir / f"nudge-{n}.md")
        assert sent.path.read_text() == nudge_text("en")
        assert TrialState.load(workdir / "trial-state.json").nudge_count == n
    assert pasted == [workdir / "nudge-1.md", workdir / "nudge-2.md"]
    before = snapshot(workdir)
    with pytest.raises(RefusedInput) as caught:
        nudge_by_hand(workdir, SESSION, deliver=pasted.append)
    assert caught.value.code == "nudge_limit" and snapshot(workdir) == before and len(pasted) == 2


def test_a_nudge_that_may_have_reached_the_session_is_counted_even_when_its_delivery_fails(workdir, monkeypatch):
    monkeypatch.delenv("LIVE_TRIAL_LANG", raising=False)

    def fail(path):
        raise RuntimeError("delivery failed")

    with pytest.raises(RuntimeError):
        nudge_by_hand(workdir, SESSION, deliver=fail)
    assert TrialState.load(workdir / "trial-state.json").nudge_count == 1
    assert (workdir / "nudge-1.md").read_text() == nudge_text("ja")          # the default language


def test_another_session_is_refused(workdir):
    with pytest.raises(RefusedInput) as caught:
        nudge_by_hand(workdir, "lt-20261130T101500-abcd-other", deliver=lambda p: None)
    assert caught.value.code == "session_mismatch" and not (workdir / "nudge-1.md").exists()


def test_a_session_that_cannot_take_a_nudge_is_refused_and_nothing_is_written_nor_counted(workdir):
    """A nudge that cannot be pasted (no such tmux session, or its CLI exited) never reaches the session: counting it
    would make the verdict say the skill needed a nudge it never got (seed 001 STALL row 4)."""
    before = snapshot(workdir)
    pasted: list = []
    with pytest.raises(RefusedInput) as caught:
        nudge_by_hand(workdir, SESSION, deliver=pasted.append, reachable=lambda: f"no tmux session named {SESSION}")
    assert caught.value.code == "session_gone" and f"no tmux session named {SESSION}" in caught.value.message
    assert snapshot(workdir) == before and pasted == []
    assert TrialState.load(workdir / "trial-state.json").nudge_count == 0
