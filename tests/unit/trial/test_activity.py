"""What a trial does for its plugins' record (live_trial/trial/activity.py): the debug log and stand-in flags of its
claude, the stand-ins checked before anything exists, and the early stop of a trial whose needed MCP server failed to
start (README "Whose failure it is")."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.acceptance.verdict_doc import sha256_file
from live_trial.errors import PluginFailed, RefusedInput
from live_trial.trial.activity import (
    check_servers,
    parse_fixture,
    resolve_fixtures,
    session_flags,
    watch_for,
    write_fixtures,
)
from live_trial.workdir_files import Workdir


def _logged(tmp_path: Path, log: str) -> Workdir:
    """A trial's workdir under ``tmp_path`` whose claude wrote the debug log ``log``."""
    wd = Workdir.of(tmp_path / "wd")
    wd.debug_log.parent.mkdir(parents=True)
    wd.debug_log.write_text(log)
    return wd


def _plugin(tmp_path: Path, name: str = "kit") -> list[tuple[str, Path]]:
    root = tmp_path / name
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "python3", "args": ["real.py"]}}}))
    return [(name, root)]


def test_a_stand_in_replaces_the_plugins_server_of_its_name_and_another_is_added(tmp_path):
    plugins = _plugin(tmp_path)
    script = tmp_path / "fake_db.py"
    script.write_text("print('db')\n")
    fixtures = resolve_fixtures([("db", f"python3 {script} --port 0"), ("github", "node -e 'serve()'")], plugins)
    assert [f.to_doc() for f in fixtures] == [
        {"name": "db", "server": "plugin:kit:db", "command": ["python3", str(script), "--port", "0"],
         "replaces": "plugin:kit:db", "contract": ["python3", sha256_file(script), "--port", "0"]},
        {"name": "github", "server": "github", "command": ["node", "-e", "serve()"], "replaces": None,
         "contract": ["node", "-e", "serve()"]}]
    wd = Workdir.of(tmp_path / "wd")
    wd.root.mkdir()
    write_fixtures(wd, fixtures)
    assert json.loads(wd.mcp_fixtures.read_text()) == {"mcpServers": {
        "plugin:kit:db": {"command": "python3", "args": [str(script), "--port", "0"]},
        "github": {"command": "node", "args": ["-e", "serve()"]}}}
    assert session_flags(wd) == ["--debug-file", str(wd.debug_log), "--mcp-config", str(wd.mcp_fixtures)]
    assert oct(wd.debug_log.parent.stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("fixtures, says", [
    ([("bad name", "x")], "needs a name"), ([("db", "")], "command is empty"), ([("db", "python3 'open")], "split"),
    ([("db", "true"), ("plugin:kit:db", "true")], "two stand-ins"),
    ([("db", "no-such-program-here --port 0")], "a program not found on PATH: no-such-program-here"),
    ([("db", "./echo_servr.py")], "a program file that does not exist"),
    ([("db", "python3 ./echo_servr.py")], "a script that does not exist"),
    ([("db", "python3 fake_db.py")], "a script named without a folder: fake_db.py (write ./fake_db.py for the one "
                                     "in this folder)"),
    ([("db", "python3 -u")], "an interpreter with no script to run: python3 -u"),
    ([("plugin:other:db", "true")], "no loaded plugin declares the MCP server plugin:other:db (the loaded plugins' "
                                    "servers: plugin:kit:db)")])
def test_a_bad_stand_in_is_refused_before_anything_is_created(tmp_path, fixtures, says):
    with pytest.raises(RefusedInput) as err:
        resolve_fixtures(fixtures, _plugin(tmp_path))
    assert says in err.value.message and err.value.code == "bad_mcp_fixture"


def test_a_stand_in_of_inline_code_or_a_module_names_no_script_to_look_for(tmp_path):
    """`python3 -c '...'` and `python3 -m pkg` run no script file: only their program must exist."""
    plugins = _plugin(tmp_path)
    for command in ("python3 -c 'open(\"/tmp/x\")'", "python3 -m json.tool", "sh -c 'exec cat'"):
        assert resolve_fixtures([("db", command)], plugins)[0].command[0] in ("python3", "sh")


def test_run_mcp_fixture_is_name_equals_command_with_its_relative_words_taken_from_here(tmp_path):
    assert parse_fixture("db=python3 ./fake.py --x ../y", tmp_path / "a") == (
        "db", f"python3 {tmp_path / 'a' / 'fake.py'} --x {tmp_path / 'y'}")
    with pytest.raises(RefusedInput):
        parse_fixture("no-equals-sign", tmp_path)


def test_a_needed_server_that_failed_to_start_stops_the_trial_and_one_nobody_names_is_not_watched(tmp_path):
    plugins = _plugin(tmp_path)
    wd = Workdir.of(tmp_path / "wd")
    wd.debug_log.parent.mkdir(parents=True)
    assert watch_for(wd, {"allowed-tools": "Skill, Write"}, plugins) is None
    watch = watch_for(wd, {"allowed-tools": "Skill, mcp__plugin_kit_db__query"}, plugins)
    assert watch is not None and watch.servers == ("plugin:kit:db",)
    check_servers(watch)                                     # no log yet: nothing known, nothing raised
    wd.debug_log.write_text('2026-12-05T23:09:06.531Z [ERROR] MCP server "plugin:kit:db" Server stderr: no db\n'
                            '2026-12-05T23:09:06.532Z [DEBUG] MCP server "plugin:kit:db": Connection failed after '
                            '374ms, 374ms of it awake (CONNECTION_CLOSED): Connection closed\n')
    with pytest.raises(PluginFailed) as err:
        check_servers(watch)
    assert err.value.code == "mcp_failed" and "plugin:kit:db failed to start" in err.value.message
    assert "stderr: no db" in err.value.message


def test_the_stop_a_poll_makes_of_a_failed_start_and_the_ledgers_note_are_one_line_said_once(tmp_path):
    """The poll's early stop and the ledger at the end describe the same failed start: one note, one form (a reason
    listed twice with different punctuation reads as two failures), and the CLI's error code said once, not
    "ENOENT: ENOENT: ..." (2.1.332 repeats the code at the head of its error)."""
    from live_trial.closure.declared import plugin_servers
    from live_trial.session.activity_judgement import judge_activity
    from live_trial.session.plugin_activity import build_activity
    from live_trial.transcript.debug_log import read_debug_log
    from live_trial.transcript.hook_records import HookRecords

    plugins = _plugin(tmp_path)
    wd = _logged(tmp_path, '2026-12-06T00:51:38.724Z [ERROR] MCP server "plugin:kit:db" Server stderr: no db\n'
                            '2026-12-06T00:51:38.724Z [DEBUG] MCP server "plugin:kit:db": Connection failed after 12ms, '
                            "13ms of it awake (ENOENT): ENOENT: no such file or directory, posix_spawn 'stdio'\n")
    frontmatter = {"allowed-tools": "Skill, mcp__plugin_kit_db__query"}
    with pytest.raises(PluginFailed) as err:
        check_servers(watch_for(wd, frontmatter, plugins))
    name, root = plugins[0]
    servers = plugin_servers(name, root, {"name": name})
    ledger = build_activity([], servers, (), HookRecords(), read_debug_log(wd.debug_log), target_plugin=name,
                            roots={name: str(root)})
    [note] = judge_activity(ledger, frontmatter["allowed-tools"]).notes
    assert err.value.message == note, (err.value.message, note)
    assert note == ("mcp_failed: the MCP server plugin:kit:db failed to start (ENOENT: no such file or directory, "
                    "posix_spawn 'stdio'; stderr: no db); the skill's allowed-tools name its tools")


def test_a_needed_server_that_connected_is_watched_no_more(tmp_path):
    plugins = _plugin(tmp_path)
    wd = _logged(tmp_path, '2026-12-05T23:09:06.360Z [DEBUG] MCP server "plugin:kit:db": Successfully connected '
                            '(transport: stdio) in 203ms\n')
    watch = watch_for(wd, {"allowed-tools": ["mcp__plugin_kit_db__*"]}, plugins)
    check_servers(watch)
    assert watch is not None and watch.settled == {"plugin:kit:db"}
    offset = watch.tail.offset
    with open(wd.debug_log, "a") as fh:
        fh.write("more lines nobody needs to read\n")
    check_servers(watch)
    assert watch.tail.offset == offset


def test_the_task_waits_for_the_servers_the_cli_started_connecting_never_past_its_bound(tmp_path):
    from live_trial.trial.activity import await_servers

    wd = Workdir.of(tmp_path)
    wd.debug_log.parent.mkdir(parents=True)
    start = '2026-12-05T23:09:06.165Z [DEBUG] MCP server "plugin:kit:{0}": Starting connection with timeout of 30000ms\n'
    wd.debug_log.write_text(start.format("a") + start.format("b"))
    now = [0.0]

    def sleep(s):       # the CLI reports one server per wait
        now[0] += s
        lines = {1: ('2026-12-05T23:09:06.3Z [DEBUG] MCP server "plugin:kit:a": Successfully connected '
                     '(transport: stdio) in 203ms\n'),
                 2: ('2026-12-05T23:09:06.5Z [DEBUG] MCP server "plugin:kit:b": Connection failed after 374ms: MCP '
                     'error -32000: Connection closed\n')}
        with open(wd.debug_log, "a") as fh:
            fh.write(lines.get(round(now[0] / 0.05), ""))
    assert await_servers(wd, timeout_s=10, sleep=sleep, clock=lambda: now[0]) == (["plugin:kit:a", "plugin:kit:b"], [])
    wd.debug_log.write_text(start.format("slow"))
    now[0] = 0.0
    settled, pending = await_servers(wd, timeout_s=1, sleep=lambda s: now.__setitem__(0, now[0] + s),
                                     clock=lambda: now[0])
    assert (settled, pending) == ([], ["plugin:kit:slow"]) and now[0] >= 1


def test_the_task_waits_for_the_declared_servers_a_late_debug_log_has_not_shown_yet(tmp_path):
    """2.1.197 under load: the debug log showed no server when the trial first looked, the task was pasted, and the
    skill's MCP call was answered "still connecting". The servers the session was declared are waited for too."""
    from live_trial.trial.activity import await_servers

    wd = Workdir.of(tmp_path)
    wd.debug_log.parent.mkdir(parents=True)
    wd.debug_log.write_text("")
    now = [0.0]
    late = {0.5: '2026-12-05T23:09:06.1Z [DEBUG] MCP server "plugin:kit:a": Starting connection with timeout\n',
            0.75: '2026-12-05T23:09:06.3Z [DEBUG] MCP server "plugin:kit:a": Successfully connected (transport: '
                  'stdio) in 203ms\n'}

    def sleep(s):
        now[0] = round(now[0] + s, 2)
        with open(wd.debug_log, "a") as fh:
            fh.write(late.get(now[0], ""))
    assert await_servers(wd, timeout_s=10, sleep=sleep, clock=lambda: now[0],
                         expected=["plugin:kit:a"]) == (["plugin:kit:a"], [])
    assert now[0] == 0.75
    # a declared server the CLI never starts is waited for through the start grace only, and named as pending
    wd.debug_log.write_text("")
    now[0] = 0.0
    settled, pending = await_servers(wd, timeout_s=60, sleep=lambda s: now.__setitem__(0, now[0] + s),
                                     clock=lambda: now[0], expected=["plugin:kit:never"])
    assert (settled, pending) == ([], ["plugin:kit:never"]) and 5 <= now[0] < 5.1


def test_the_servers_a_session_is_declared_are_named_as_the_cli_names_them(tmp_path):
    from live_trial.trial.activity import server_names

    root = tmp_path / "kit"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "kit"}')
    (root / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "true"}, "b": {"command": "true"}}}')
    fixtures = [{"server": "plugin:kit:a"}, {"server": "github"}]
    assert server_names([("kit", root)], fixtures) == ["plugin:kit:a", "plugin:kit:b", "github"]


SUPPRESSED = ('2026-12-06T05:17:13.328Z [DEBUG] Suppressing plugin MCP server "plugin:kit:db": duplicates '
              'manually-configured "helper"\n')


def test_a_stand_in_with_the_command_of_a_needed_server_blocks_the_trial_as_the_persons_input(tmp_path):
    """Both CLIs keep a server of the session's own config (a stand-in) and never start a plugin's server of the same
    command: the skill's tools are missing through the person's stand-in, BLOCKED before any model turn."""
    from live_trial.errors import Blocked

    plugins = _plugin(tmp_path)
    wd = _logged(tmp_path, SUPPRESSED)
    fixture = {"name": "helper", "server": "helper", "command": ["python3", "real.py"], "replaces": None}
    watch = watch_for(wd, {"allowed-tools": "mcp__plugin_kit_db__query"}, plugins, [fixture])
    with pytest.raises(Blocked) as err:
        check_servers(watch, stand_ins_only=True)
    assert err.value.code == "mcp_fixture_failed", err.value.code
    assert err.value.message.startswith("mcp_fixture_failed: the stand-in MCP server helper (python3 real.py) added "
                                        "as helper, given to the trial"), err.value.message
    assert "the CLI never started plugin:kit:db" in err.value.message and "command of its own" in err.value.message


def test_before_the_paste_only_a_stand_in_is_told_a_plugins_own_failure_waits_for_the_poll(tmp_path):
    plugins = _plugin(tmp_path)
    wd = _logged(tmp_path, '2026-12-06T00:51:38.724Z [DEBUG] MCP server "plugin:kit:db": Connection failed after '
                            '12ms: MCP error -32000: Connection closed\n')
    watch = watch_for(wd, {"allowed-tools": "mcp__plugin_kit_db__query"}, plugins)
    check_servers(watch, stand_ins_only=True)
    with pytest.raises(PluginFailed):
        check_servers(watch)


def test_a_suppressed_server_is_settled_for_the_wait_and_named_in_its_ledger(tmp_path):
    from live_trial.closure.declared import plugin_servers
    from live_trial.session.plugin_activity import build_activity, server_line
    from live_trial.transcript.debug_log import read_debug_log
    from live_trial.transcript.hook_records import HookRecords
    from live_trial.trial.activity import await_servers

    plugins = _plugin(tmp_path)
    wd = _logged(tmp_path, SUPPRESSED)
    assert await_servers(wd, timeout_s=10, sleep=pytest.fail, expected=["plugin:kit:db"]) == (["plugin:kit:db"], [])
    name, root = plugins[0]
    ledger = build_activity([], plugin_servers(name, root, {"name": name}), (), HookRecords(),
                            read_debug_log(wd.debug_log), target_plugin=name, roots={name: str(root)})
    [db] = ledger.servers
    assert (db.at_start, db.error) == ("suppressed", "the CLI kept helper, a server of the session's own config with "
                                                     "the same command, in its place"), db
    assert "never started: the CLI kept helper" in server_line(db), server_line(db)
