"""What a command loads when it starts: a command imports only what it uses (README "How the code is laid out").

``live-trial status`` is what a script calls between other work; it reads a transcript and classifies it, so it must
not pay for the schema validator, YAML, the terminal UI, the report templates, tmux, an HTTP server or the packages of
later stages.
"""
from __future__ import annotations

import json
import subprocess
import sys

from live_trial.cli import main as cli_main

#: Modules ``status`` never needs (prefixes of ``sys.modules`` names).
NOT_FOR_STATUS = ("jsonschema", "yaml", "rich", "jinja2", "libtmux", "http.server", "http.client", "inotify_simple",
                  "typing", "dataclasses", "hashlib",
                  "live_trial.rehearsal", "live_trial.judge", "live_trial.acceptance", "live_trial.notices",
                  "live_trial.session", "live_trial.trial", "live_trial.report")

_RUN_AND_LIST = """
import json, sys
from live_trial.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules_after(*argv: str) -> tuple[int, list[str]]:
    """Run ``live-trial ARGV`` in a fresh interpreter; its exit code and every module it had loaded at the end."""
    proc = subprocess.run([sys.executable, "-c", _RUN_AND_LIST, *argv], capture_output=True, text=True, timeout=120)
    doc = json.loads(proc.stderr.strip().splitlines()[-1])
    return doc["code"], doc["modules"]


def _loaded(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def test_status_imports_nothing_it_does_not_use(tmp_path, transcript_builder):
    b = transcript_builder()
    b.turn()
    path = b.write(tmp_path / "t.jsonl")
    code, modules = _modules_after("status", "--transcript", str(path), "--json")
    assert code == 0
    assert "live_trial.transcript.status" in modules             # it did classify
    assert _loaded(modules, NOT_FOR_STATUS) == []
    # the other commands' modules are not even imported to build the parser
    assert _loaded(modules, ("live_trial.cli",)) == ["live_trial.cli", "live_trial.cli.main", "live_trial.cli.poll_cmd"]


def test_the_table_of_commands_names_every_command_and_its_module():
    import importlib

    parser = cli_main.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert sorted(sub.choices) == sorted(cli_main.COMMANDS)
    for command, module in cli_main.COMMANDS.items():
        only = cli_main.build_parser(command)
        names = next(a for a in only._actions if a.dest == "command").choices
        assert command in names, (command, module)
        assert set(names) == {c for c, m in cli_main.COMMANDS.items() if m == module}
        importlib.import_module(module)


def test_help_and_an_unknown_command_still_list_every_command(capsys):
    import pytest

    with pytest.raises(SystemExit) as info:
        cli_main.main(["stauts"])
    assert info.value.code == 64
    err = capsys.readouterr().err
    assert "invalid choice: 'stauts'" in err and all(f"'{c}'" in err for c in cli_main.COMMANDS)


def test_plan_as_a_script_runs_it_loads_no_terminal_ui_tmux_templates_or_http_client(tmp_path):
    """``plan --json`` is what CI calls before every trial run: it reads skills and verdicts and writes a plan."""
    plugin = tmp_path / "p"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "p"}')
    (plugin / "skills" / "a").mkdir(parents=True)
    (plugin / "skills" / "a" / "SKILL.md").write_text("---\nname: a\ndescription: greet\n---\nSay hello.\n")
    code, modules = _modules_after("plan", "--plugin-dir", str(plugin), "--eval-root", str(tmp_path / "e"), "--json")
    assert code == 0
    assert "live_trial.acceptance.plan" in modules                # it did plan
    assert _loaded(modules, ("rich", "libtmux", "jinja2", "http.client", "urllib.request", "ssl",
                             "live_trial.trial", "live_trial.report")) == []


def test_a_reader_that_goes_away_ends_the_command_quietly_with_141():
    """``live-trial reasons | head -1``: no traceback when the pipe closes, the shell's number for SIGPIPE."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "live_trial", "reasons", "--lang", "en"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()                                    # the reader is gone before the first line is written
    stderr = proc.stderr.read()
    assert proc.wait(timeout=30) == 141
    assert stderr == b""


def test_an_unknown_option_is_said_with_the_commands_own_usage_and_exit_64(capsys):
    """A typo in a command's option shows that command's usage line (its real options), not the list of commands."""
    import pytest as _pytest

    from live_trial.cli.main import main

    with _pytest.raises(SystemExit) as exited:
        main(["run", "--budget-usd", "1"])
    err = capsys.readouterr().err
    assert exited.value.code == 64 and err.startswith("usage: live-trial run ") and "--max-cost-usd" in err
    assert "live-trial run: error: unrecognized arguments: --budget-usd" in err
