"""backend on real tmux: exact targets, reap by owner, remain-on-exit, exact environment, no user tmux.conf."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from live_trial.session.backend import Backend
from live_trial.session.rules import owner_alive, owner_token

from .session_support import TrackingBackend, session_name
from .waiting import wait_for

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root")}


@pytest.fixture
def backend():
    b = TrackingBackend()
    yield b
    b.cleanup()


@pytest.mark.budget(6)
def test_killing_a1_never_removes_a12(backend, tmp_path):
    run_id = session_name("x")[3:23]
    a1, a12 = f"lt-{run_id}-a1", f"lt-{run_id}-a12"
    backend.new_session(a12, ["sleep", "120"], cwd=tmp_path, env=ENV, owner_pid=os.getpid())
    assert backend.has_session(a12) and not backend.has_session(a1)
    assert backend.kill_session(a1) is False                  # quiet, touches nothing
    assert backend.has_session(a12)
    # what a naive harness would do: a bare -t matches by prefix and kills the wrong session
    naive = subprocess.run(["tmux", "-L", backend.socket, "has-session", "-t", a1], capture_output=True)
    assert naive.returncode == 0
    assert backend.kill_session(a12) is True and not backend.has_session(a12)
    assert backend.kill_session(a12) is False


@pytest.mark.budget(6)
def test_reap_keeps_live_owner_and_removes_orphan(backend, tmp_path):
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live_s, orphan_s = session_name("live"), session_name("orphan")
    try:
        backend.new_session(live_s, ["sleep", "120"], cwd=tmp_path, env=ENV, owner_pid=owner.pid)
        backend.new_session(orphan_s, ["sleep", "120"], cwd=tmp_path, env=ENV, owner_pid=dead.pid)
        orphan_pid = backend.pane_pid(orphan_s)
        orphan_proc = owner_token(orphan_pid)           # pid + start time: a reused pid is not taken for it
        assert orphan_pid and owner_alive(orphan_proc)
        assert backend.reap() == [orphan_s]
        assert backend.has_session(live_s) and not backend.has_session(orphan_s)
        # kill_session ends the pane's process tree (SIGHUP from tmux, SIGTERM, SIGKILL after 5 s); the pane's
        # process may stay a zombie until tmux reaps it, which owner_alive counts as ended
        assert wait_for(lambda: not owner_alive(orphan_proc), what="not owner_alive(orphan_proc)", timeout_s=30), f"pane process {orphan_pid} still runs"
        owner.terminate()
        owner.wait()
        assert backend.reap() == [live_s]
    finally:
        owner.kill()


@pytest.mark.budget(6)
def test_pane_kept_after_exit_shows_last_lines_and_status(backend, tmp_path):
    name = session_name("exit")
    # (the short sleep: tmux 3.3a can drop the last output of a process that exits within microseconds
    # of writing it; seen once in a full-suite run)
    backend.new_session(name, ["sh", "-c", "echo last words here; sleep 0.3; exit 3"], cwd=tmp_path, env=ENV,
                        owner_pid=os.getpid())
    assert wait_for(lambda: not backend.pane_alive(name), what="not backend.pane_alive(name)")
    assert backend.has_session(name)                          # remain-on-exit keeps it readable
    # the exit status follows #{pane_dead} once tmux has reaped the process. In 2 of ~15 full-suite runs
    # tmux 3.3a never reported a status for such a pane (neither #{pane_dead_status} nor its "Pane is dead
    # (status N" line); boot then says "exit status unknown", so only a wrong status fails here.
    status = wait_for(lambda: backend.pane_dead_status(name), what="the pane's exit status", timeout_s=10,
                      required=False)
    assert status in (3, None)
    assert "last words here" in backend.capture(name, scrollback=True)


@pytest.mark.budget(6)
def test_pane_environment_is_exactly_the_given_one(backend, tmp_path):
    backend._run("set-environment", "-g", "LT_LEAK_FROM_SERVER", "1")   # only if the server already runs
    name = session_name("env")
    out = tmp_path / "env.txt"
    backend.new_session(name, ["sh", "-c", f"env > {out}; sleep 60"], cwd=tmp_path,
                        env={**ENV, "LT_GIVEN": "yes"}, owner_pid=os.getpid())
    assert wait_for(lambda: out.exists() and "LT_GIVEN" in out.read_text(), what="out.exists() and 'LT_GIVEN' in out.read_text()")
    names = {line.split("=", 1)[0] for line in out.read_text().splitlines()}
    assert "LT_GIVEN" in names and "LT_LEAK_FROM_SERVER" not in names and "CLAUDECODE" not in names
    assert backend.pane_pid(name) > 0


@pytest.mark.budget(6)
def test_user_tmux_conf_is_not_read(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".tmux.conf").write_text("set -g prefix C-a\nset -g extended-keys always\n")
    monkeypatch.setenv("HOME", str(home))
    b = Backend(f"lt-conf-{os.getpid()}")
    name = session_name("conf")
    try:
        b.new_session(name, ["sleep", "60"], cwd=tmp_path, env={**ENV, "HOME": str(home)}, owner_pid=os.getpid())
        assert b._run("show-options", "-gv", "prefix").stdout == ["C-b"]
        assert b._run("show-options", "-sv", "extended-keys").stdout == ["off"]
        w, h = b._run("display-message", "-p", "-t", b._pane_id(name), "#{pane_width} #{pane_height}").stdout[0].split()
        assert int(w) >= 200 and int(h) >= 50
    finally:
        b.kill_session(name)
        b._run("kill-server")


@pytest.mark.budget(6)
def test_cli_verbs_paste_keys_capture_reap(backend, tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    name = session_name("verbs")
    backend.new_session(name, ["cat", "-v"], cwd=tmp_path, env=ENV, owner_pid=os.getpid())
    f = tmp_path / "text.md"
    f.write_text("pasted; $(not run) `nor this`\n")
    run = lambda *a: subprocess.run([sys.executable, "-m", "live_trial", "backend", *a], capture_output=True,
                                    text=True, cwd=root, timeout=60)
    pasted = run("paste-file", name, str(f))
    assert pasted.returncode == 0 and pasted.stdout.startswith(f"PASTED: {name} text.md (buffer lt-buf-")
    assert run("send-keys", name, "Enter").returncode == 0
    assert wait_for(lambda: "pasted; $(not run) `nor this`" in run("capture-pane", name).stdout, what="'pasted; $(not run) `nor this`' in run('capture-pane', name).stdout")
    refused = run("send-keys", name, "echo hi")
    assert refused.returncode == 2 and refused.stderr.startswith("REFUSED: send-keys only sends short fixed keys")
    assert run("reap").stdout.strip() == "REAPED: none"          # the owner (this test) is alive
    assert backend.has_session(name)
    assert backend._run("list-buffers").stdout == []


def _lines(backend, name):
    return [line.rstrip() for line in backend.capture(name).split("\n")]


@pytest.mark.budget(6)
def test_text_paths_and_cwd_ending_in_semicolon_arrive_intact(backend, tmp_path):
    # tmux ends a command at an argument ending in ";" (and drops it) unless it is written "\;"
    cwd = tmp_path / "cwd;"
    cwd.mkdir()
    name = session_name("semi")
    backend.new_session(name, ["sh", "-c", 'printf "cwd=%s arg=%s\\n" "$PWD" "$0"; exec cat -v', "zero;"],
                        cwd=cwd, env=ENV, owner_pid=os.getpid())
    assert wait_for(lambda: f"cwd={cwd} arg=zero;" in _lines(backend, name), what="f'cwd={cwd} arg=zero;' in _lines(backend, name)"), _lines(backend, name)
    backend.set_meta(name, cwd=f"{cwd}", note="x;")
    assert backend.get_meta(name, "cwd") == str(cwd) and backend.get_meta(name, "note") == "x;"
    for text in ("abc;", "a;b;", "back\\;", "x;;"):
        backend.send_line(name, text)
        # cat -v shows the line twice: the terminal's echo, then cat's copy
        assert wait_for(lambda: _lines(backend, name).count(text) == 2, what="_lines(backend, name).count(text) == 2"), (text, _lines(backend, name))
    backend.send_keys(name, ";", "Enter")
    assert wait_for(lambda: _lines(backend, name).count(";") == 2, what="_lines(backend, name).count(';') == 2"), _lines(backend, name)
    f = tmp_path / "task;"
    f.write_text("pasted from a path ending in a semicolon;\n")
    backend.paste_file(name, f)
    assert wait_for(lambda: _lines(backend, name).count("pasted from a path ending in a semicolon;") == 2, what="_lines(backend, name).count('pasted from a path ending in a semicolon;') == 2"), \
        _lines(backend, name)
    assert backend._run("list-buffers").stdout == []


@pytest.mark.budget(6)
def test_hashes_in_the_cwd_and_the_pasted_path_are_never_format_expanded(backend, tmp_path):
    """tmux format-expands the load-buffer file and the new-session folder: ``#(cmd)`` there would run ``cmd``
    and ``#{session_name}`` would become the name. Both must reach tmux as plain text: an expanded path names
    another file, and the paste fails."""
    cwd = tmp_path / "C#proj ## #{session_name}"
    cwd.mkdir()
    name = session_name("hash")
    backend.new_session(name, ["sh", "-c", 'printf "cwd=%s\\n" "$PWD"; exec cat -v'], cwd=cwd, env=ENV,
                        owner_pid=os.getpid())
    assert wait_for(lambda: f"cwd={cwd}" in _lines(backend, name), what="f'cwd={cwd}' in _lines(backend, name)"), _lines(backend, name)
    folder = tmp_path / "#(echo expanded)"
    folder.mkdir()
    f = folder / "task ## #{pane_id}.md"
    f.write_text("pasted through a path full of hashes\n")
    backend.paste_file(name, f)
    assert wait_for(lambda: _lines(backend, name).count("pasted through a path full of hashes") == 2, what="_lines(backend, name).count('pasted through a path full of hashes') == 2"), \
        _lines(backend, name)
    assert backend._run("list-buffers").stdout == []


@pytest.mark.budget(6)
def test_a_server_another_harness_is_starting_is_waited_for_and_one_that_stays_unmarked_is_refused(tmp_path):
    """A server that runs with neither the harness's mark nor a session is one a harness is starting (its first command
    sets both; a second trial can ask in between): the check waits for the mark instead of refusing it. A server that
    never gets the mark is refused once the wait is over, and its options stay untouched."""
    import threading
    import time

    from live_trial.errors import RefusedInput

    socket = f"lt-starting-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run(tmux + ["start-server", ";", "set-option", "-g", "exit-empty", "off"], check=True)
    try:
        mark = threading.Timer(0.3, lambda: subprocess.run(tmux + ["set-option", "-g", "@live_trial_server", "1"]))
        mark.start()
        started = time.monotonic()
        Backend(socket).refuse_foreign_server()                 # no refusal: the mark comes
        mark.join()
        assert time.monotonic() - started >= 0.3
        subprocess.run(tmux + ["set-option", "-gu", "@live_trial_server"], check=True)
        before = subprocess.run(tmux + ["show-options", "-g"], capture_output=True).stdout
        with pytest.raises(RefusedInput) as refused:
            Backend(socket).refuse_foreign_server()
        assert refused.value.code == "foreign_tmux_server"
        assert subprocess.run(tmux + ["show-options", "-g"], capture_output=True).stdout == before
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)

