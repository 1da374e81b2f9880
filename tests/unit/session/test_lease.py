"""The lease of a session started by ``boot`` (README "The steps, one by one"): reap and run keep it while its owner
lives or its time-to-live holds; each step renews it; ``reap --expired`` removes it once the time ran out and says
why. The decision is pure (session.rules); the tmux side is checked on the backend's in-memory fake."""
from __future__ import annotations

import os
import subprocess
import sys

from live_trial.session import backend as bk
from live_trial.session import rules
from live_trial.session.rules import Lease, PaneRow, reap_decisions, sessions_to_reap
from tests.unit.fakes import FakeTmux

NOW = 2_000_000_000.0
HAND = "lt-20261130T101500-abcd-hand"
RUN = "lt-20261130T101500-abcd-run"


def dead_owner() -> str:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return f"{proc.pid}:1"          # a start time no process has: gone whatever pid it is


def row(name: str, owner: str, lease: Lease | None = None, created: int = 0) -> PaneRow:
    return PaneRow(session=name, pane_id="%1", pane_pid=1, dead=False, dead_status=None, owner=owner,
                   created=created, lease=lease.text() if lease else "")


def test_lease_text_round_trip_and_renewal():
    lease = Lease(expires=NOW + 60, ttl_s=60)
    assert Lease.parse(lease.text()) == lease and lease.text() == f"{int(NOW) + 60}:60"
    assert lease.renewed(NOW + 100) == Lease(expires=NOW + 160, ttl_s=60)
    for bad in ("", None, "12", "a:b", "12:", ":5", "1.5:3"):
        assert Lease.parse(bad) is None


def test_a_session_whose_owner_is_gone_is_kept_while_its_lease_holds():
    """The by-hand session of a short-lived shell: its owner exits at once, the lease keeps it."""
    held = row(HAND, dead_owner(), Lease(expires=NOW + 10, ttl_s=7200))
    assert sessions_to_reap([held], NOW) == []
    [d] = reap_decisions([held], NOW)
    assert not d.remove and "its lease holds until" in d.why and "each step renews it" in d.why
    ran_out = row(HAND, dead_owner(), Lease(expires=NOW - 1, ttl_s=7200))
    [d] = reap_decisions([ran_out], NOW)
    assert d.remove and "is gone and its lease ran out at" in d.why


def test_a_session_whose_owner_lives_is_kept_even_when_its_lease_ran_out_unless_expired_is_asked():
    me = rules.owner_token(os.getpid())
    ran_out = row(HAND, me, Lease(expires=NOW - 1, ttl_s=30))
    [d] = reap_decisions([ran_out], NOW)
    assert not d.remove and d.why == f"its owner pid {os.getpid()} runs"
    [d] = reap_decisions([ran_out], NOW, expired=True)
    assert d.remove and "its lease ran out at" in d.why and "no step renewed it for 30 s" in d.why
    assert f"owner pid {os.getpid()} still runs" in d.why
    held = row(HAND, me, Lease(expires=NOW + 1, ttl_s=30))
    assert sessions_to_reap([held], NOW, expired=True) == []


def test_a_run_session_has_no_lease_and_goes_with_its_harness():
    """``run``'s sessions are unchanged: kept while the harness lives, removed once it is gone, also by --expired."""
    me = rules.owner_token(os.getpid())
    assert sessions_to_reap([row(RUN, me)], NOW, expired=True) == []
    [d] = reap_decisions([row(RUN, dead_owner())], NOW)
    assert d.remove and "its harness pid" in d.why and "is gone" in d.why
    young = row(RUN, "", created=int(NOW) - 5)
    assert reap_decisions([young], NOW)[0].remove is False
    assert sessions_to_reap([row(RUN, "", created=int(NOW) - 60)], NOW) == [RUN]
    assert sessions_to_reap([row("not-ours", dead_owner())], NOW) == []


def _fake_with_lease() -> FakeTmux:
    t = FakeTmux()
    original = t._run

    def run(*args, env=None):
        result = original(*args, env=env)
        out = list(result.stdout)
        if args and args[0] == "list-panes":
            out = [line + "|" + t.sessions[line.split("|")[0]].get("lease", "") for line in out]
        for cmd in " ".join(args).split(" ; "):
            words = cmd.split(" ")
            if words[0] == "set-option" and bk.LEASE_OPTION in words:
                name = words[words.index("-t") + 1].lstrip("=").rstrip(":")
                if name in t.sessions:
                    t.sessions[name]["lease"] = words[-1]
        return bk.TmuxResult(argv=result.argv, returncode=result.returncode, stdout=out, stderr=result.stderr,
                             duration_s=0.0)

    t._run = run
    return t


def test_new_session_sets_the_lease_in_the_same_tmux_call_and_renew_moves_it(tmp_path, monkeypatch):
    t = _fake_with_lease()
    lease = Lease(expires=NOW, ttl_s=120)
    t.new_session(HAND, ["/bin/claude", "--x"], cwd=tmp_path, env={}, owner_pid=os.getpid(), lease=lease)
    chain = next(c for c in t.calls if "new-session" in c)
    assert chain[-3:] == (f"={HAND}:", bk.LEASE_OPTION, lease.text())       # no reap can fall between the two
    monkeypatch.setattr(bk.time, "time", lambda: NOW + 500)
    assert t.renew_lease(HAND) == Lease(expires=NOW + 620, ttl_s=120)
    assert Lease.parse(t.sessions[HAND]["lease"]) == Lease(expires=NOW + 620, ttl_s=120)
    t.add(RUN, owner=rules.owner_token(os.getpid()))
    assert t.renew_lease(RUN) is None and "lease" not in t.sessions[RUN]       # a run session gets none
    assert t.renew_lease("lt-20261130T101500-abcd-gone") is None


def test_reap_keeps_a_held_lease_and_removes_an_expired_one_with_its_reason():
    t = _fake_with_lease()
    t.add(HAND, owner=rules.owner_token(os.getpid()))
    t.sessions[HAND]["lease"] = Lease(expires=1, ttl_s=5).text()                # ran out long ago
    t.add(RUN, owner=dead_owner())
    assert t.reap() == [RUN] and HAND in t.sessions                           # its owner (this test) runs
    decisions = t.reap_with_reasons(expired=True)
    assert [(d.session, d.remove) for d in decisions] == [(HAND, True)] and HAND not in t.sessions
    assert "no step renewed it for 5 s" in decisions[0].why


def test_reap_never_ends_the_processes_of_a_trial_whose_session_it_kept(tmp_path, monkeypatch):
    """A prepared trial's owner (the shell that ran prepare) is gone, but its session's lease holds: its claude is no
    leftover. The trial beside it, whose session reap did not keep, has its tagged processes ended."""
    import json

    from live_trial.session import proctree
    from live_trial.trial import orphans
    from tests.unit.fakes import write_state

    gone = int(dead_owner().split(":")[0])
    names = {}
    for run_id, skill in (("20261130T101500-abcd", "hand"), ("20261130T101500-abcd", "run")):
        wd = tmp_path / "p" / skill / "live-trial" / run_id
        wd.mkdir(parents=True)
        write_state(wd, "p", skill)
        state = json.loads((wd / "trial-state.json").read_text())
        (wd / "trial-state.json").write_text(json.dumps({**state, "owner_pid": gone}))
        names[skill] = state["session"]
    assert set(names.values()) == {HAND, RUN}
    procs = {HAND: [proctree.Proc(11, "1")], RUN: [proctree.Proc(22, "2")]}
    ended: list = []
    monkeypatch.setattr(orphans.proctree, "all_tagged", lambda: procs)
    monkeypatch.setattr(orphans.proctree, "alive", lambda p: True)
    monkeypatch.setattr(orphans.proctree, "end", lambda ps, find_more=None: ended.extend(ps) or [])
    out = orphans.end_orphans(tmp_path, keep={HAND})
    assert ended == [proctree.Proc(22, "2")] and [o["session"] for o in out] == [RUN]
    ended.clear()
    orphans.end_orphans(tmp_path)                   # without the kept session, both trials' processes are leftovers
    assert sorted(p.pid for p in ended) == [11, 22]
