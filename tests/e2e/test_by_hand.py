"""The steps by hand on the real CLI (README "The steps, one by one"): the README's by-hand block runs as written to a
PASS; a session started by ``boot`` keeps its lease beside a ``run`` and is reaped once its lease ran out, with the
reason; ``evaluate`` prints the real reason it could not judge; ``rehearsal new`` writes scenarios that run to PASS
(the example skill and a fresh skill with another description) or stop at a question."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.run_support import (
    EXAMPLES,
    ROOT,
    final_json,
    listening,
    pid_alive,
    run_cmd,
    tmux_sessions,
    verdict_doc,
)
from tests.e2e.waiting import wait_for

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
HAPPY = EXAMPLES / "scenarios" / "greet-happy.yaml"


def shell(script: str, cwd: Path, timeout: float = 240, **env: str) -> subprocess.CompletedProcess:
    """``script`` run by bash in ``cwd`` with ``live-trial`` on PATH, as a person types it."""
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **env})


def cli(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "live-trial"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- by-hand:start -->", 1)[1].split("<!-- by-hand:end -->", 1)[0]
    return block.split("```bash\n", 1)[1].rsplit("```", 1)[0]


def copy_examples(tmp_path: Path, *, slow_marker_s: float = 0.0) -> None:
    """The examples as the README's block uses them; ``slow_marker_s``: the model of greet-happy waits that long
    before it writes the marker, so a poll of one tick ends TICK_BUDGET and the block's loop calls poll again."""
    shutil.copytree(EXAMPLES / "plugins", tmp_path / "examples" / "plugins")
    shutil.copytree(EXAMPLES / "scenarios", tmp_path / "examples" / "scenarios")
    if slow_marker_s:
        happy = tmp_path / "examples" / "scenarios" / "greet-happy.yaml"
        text = happy.read_text(encoding="utf-8")
        rule = "  - id: write-marker\n    when: {step: 2, last_tool_result: {is_error: false}}\n    reply:\n"
        assert rule in text, "greet-happy.yaml changed: update this test's slowing of it"
        happy.write_text(text.replace(rule, rule + f"      delay_s: {slow_marker_s}\n"), encoding="utf-8")


@pytest.mark.budget(45)
def test_the_readme_by_hand_section_runs_as_written_to_a_pass(tmp_path):
    copy_examples(tmp_path, slow_marker_s=3)       # a turn longer than one tick: the loop must call poll again
    proc = shell(readme_block(), tmp_path)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    out = proc.stdout
    assert "OVERALL: PASS" in out and "COLLECTED: " in out and re.search(r"^DONE: ", out, re.M), out
    assert re.search(r"^TICK_BUDGET", out, re.M), out        # poll was called again with its state file and went on
    assert out.index("TICK_BUDGET") < out.index("\nDONE: ")
    values = dict(line.split("=", 1) for line in (tmp_path / "prepared.txt").read_text().splitlines()
                  if re.match(r"^[A-Z_]+=", line))
    wd = Path(values["WORKDIR"])
    doc = json.loads((wd / "verdict.json").read_text())
    assert (doc["overall"]["verdict"], doc["launch"], doc["completion"], doc["goal_result"]) == (
        "PASS", "PASS", "PASS", "PASS"), doc["overall"]
    assert doc["scenario_origin"] == "rehearsal" and not any("overridden" in n for n in doc["notes"]), doc["notes"]
    assert any(n.startswith("containment: ") for n in doc["notes"]), doc["notes"]   # boot held it as run does
    assert "side-effects/files/greeting.txt" in [e["source"] for e in doc["evidence"]]
    assert (wd / "side-effects" / "files" / "greeting.txt").read_text() == "Hello, World!\n"
    assert json.loads((wd / "evaluation.json").read_text())["judged_by"] == "evaluator"
    # the page a person reads, as run writes it, named on the verdict's output
    assert f"REPORT: {wd / 'report.html'}" in out and "greeting.txt" in (wd / "report.html").read_text(), out
    assert values["SESSION"] not in tmux_sessions()                 # kill-session removed it
    wait_for(lambda: not listening(int(values["PORT"])), what="the rehearsal server to stop after kill %1")
    # a nudge to the session now gone never reaches it: refused, neither written nor counted (seed 001 STALL row 4)
    late = cli("backend", "nudge", values["SESSION"], "--workdir", str(wd), cwd=tmp_path)
    assert late.returncode == 2 and "the session cannot take a nudge" in late.stderr, (late.stdout, late.stderr)
    assert not (wd / "nudge-1.md").exists()
    assert json.loads((wd / "trial-state.json").read_text()).get("nudge_count", 0) == 0


@pytest.mark.budget(60)
def test_a_run_beside_a_by_hand_session_leaves_it_alive_and_reap_expired_says_why(tmp_path):
    copy_examples(tmp_path)
    plugins = str(tmp_path / "examples" / "plugins")
    # prepare and boot from short-lived shells (their owner is gone at once): only the lease keeps the session
    # (a shell that runs more than one command: a lone command would be exec'd in the shell's place)
    prep = shell(f"live-trial prepare hello:greet --plugins-root {plugins} --args World --rehearsal {HAPPY} "
                 "--ttl 600 --json; true", tmp_path)
    assert prep.returncode == 0, prep.stderr
    held = json.loads(prep.stdout)
    v = held["values"]
    server = subprocess.Popen([str(BIN / "live-trial"), "rehearsal", "serve", str(HAPPY), "--port", v["PORT"],
                               "--cwd", v["CWD"], "--config-dir", v["CONFIG_DIR"]], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{v['PORT']}"
        short = "lt-20261201T000000-beef-greet"
        (tmp_path / "short").mkdir()
        boots = [subprocess.Popen(["bash", "-c", cmd], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"})
                 for cmd in (f"live-trial boot {v['SESSION']} {v['CWD']} --workdir {v['WORKDIR']} --target-skill "
                             f"hello:greet --plugins-root {plugins} --session-id {v['SESSION_ID']} "
                             f"--rehearsal-server {url} --config-dir {v['CONFIG_DIR']}; true",
                             f"live-trial boot {short} {tmp_path / 'short'} --ttl 2 --rehearsal-server {url} "
                             f"--config-dir {tmp_path / 'short-config'}; true")]
        for b in boots:
            out, err = b.communicate(timeout=120)
            assert b.returncode == 0 and out.startswith("READY: "), (out, err)
        state = json.loads((Path(v["WORKDIR"]) / "trial-state.json").read_text())
        assert state["pane_pid"] and state["lease_ttl_s"] == 600
        assert not pid_alive(held["owner_pid"])                  # the shell that prepared it is gone

        def alive(name: str) -> bool:
            """The session is listed and its pane (the by-hand claude) still runs."""
            return bool(re.search(rf"^{name}\talive\t", cli("backend", "list", cwd=tmp_path).stdout, re.M))

        # the short lease runs out 2 s after its boot; the held one lasts: reap --expired removes one, keeps the other
        def lease_left(name: str) -> int | None:
            listed = cli("backend", "list", cwd=tmp_path).stdout
            found = re.search(rf"^{name}\t.*\tlease (\d+) s left", listed, re.M)
            return int(found.group(1)) if found else None

        wait_for(lambda: lease_left(short) == 0, what="the 2 s lease of the short session to run out")
        reaped = cli("reap", "--expired", cwd=tmp_path)
        assert reaped.returncode == 0, reaped.stderr
        assert re.search(rf"^removed {short}: its lease ran out at .*: no step renewed it for 2 s and its owner pid "
                         rf"\d+ is gone$", reaped.stdout, re.M), reaped.stdout
        assert re.search(rf"^kept {v['SESSION']}: its lease holds until .*each step renews it", reaped.stdout,
                         re.M), reaped.stdout
        assert short not in tmux_sessions() and alive(v["SESSION"]), reaped.stdout   # its claude was not ended either

        # a whole run on the same socket (its cleanup reaps) leaves the by-hand session alive
        proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", plugins, "--args", "World", "--rehearsal",
                       str(HAPPY))
        assert verdict_doc(final_json(proc))["overall"]["verdict"] == "PASS", proc.stdout[-2000:]
        assert alive(v["SESSION"])
        assert cli("reap", cwd=tmp_path).stdout.startswith("REAPED: 0 session(s), 0 leftover process(es)")
        assert alive(v["SESSION"])
        # each step renews the lease for its time-to-live: collect is one
        left = lease_left(v["SESSION"])
        wait_for(lambda: lease_left(v["SESSION"]) < left, what="a second of the held lease to pass")
        before = lease_left(v["SESSION"])
        assert cli("collect", "--workdir", v["WORKDIR"], cwd=tmp_path).returncode in (0, 1)
        assert before < lease_left(v["SESSION"]) <= 600
    finally:
        cli("backend", "kill-session", v["SESSION"], cwd=tmp_path)
        server.terminate()
        server.wait(timeout=30)
    assert v["SESSION"] not in tmux_sessions()


@pytest.mark.budget(25)
def test_evaluate_prints_the_real_reason_it_could_not_judge(tmp_path):
    """The real CLI with no login (evaluate without --rehearsal, an empty config): evaluate's first line gives the CLI's
    own words, exit 3 (not "no valid judgement")."""
    copy_examples(tmp_path)
    prep = cli("prepare", "hello:greet", "--plugins-root", str(tmp_path / "examples" / "plugins"), "--rehearsal",
               str(HAPPY), "--json", cwd=tmp_path)
    assert prep.returncode == 0, prep.stderr
    wd = Path(json.loads(prep.stdout)["workdir"])
    (tmp_path / "empty-config").mkdir()
    env = {k: val for k, val in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run([str(BIN / "live-trial"), "evaluate", "--workdir", str(wd), "--timeout", "60"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=200,
                          env={**env, "CLAUDE_CONFIG_DIR": str(tmp_path / "empty-config")})
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    first = proc.stdout.splitlines()[0]
    assert first.startswith("BLOCKED: the evaluator could not judge: ") and "Not logged in" in first, first
    assert json.loads((wd / "evaluation.json").read_text())["judged_by"] == "fallback"


SKILL_MD = """---
name: summarize
description: Reads notes.txt and writes a summary to summary.md with one bullet per topic. Use when asked to summarize.
allowed-tools: Skill, Read, Write
---
Read notes.txt in the working folder and write summary.md with one bullet per topic.
"""


@pytest.mark.budget(75)
def test_rehearsal_new_runs_to_pass_for_the_example_and_a_fresh_skill_and_gate_stops_at_a_question(tmp_path):
    copy_examples(tmp_path)
    fresh = tmp_path / "mine"
    (fresh / "notes" / ".claude-plugin").mkdir(parents=True)
    (fresh / "notes" / ".claude-plugin" / "plugin.json").write_text('{"name": "notes", "version": "0.1.0"}')
    (fresh / "notes" / "skills" / "summarize").mkdir(parents=True)
    (fresh / "notes" / "skills" / "summarize" / "SKILL.md").write_text(SKILL_MD)
    cases = [("hello:greet", tmp_path / "examples" / "plugins", [], "greeting.txt", 0, "PASS"),
             ("notes:summarize", fresh, [], "summary.md", 0, "PASS"),
             ("hello:greet", tmp_path / "examples" / "plugins", ["--gate"], None, 1, "FAIL")]
    for n, (target, root, flags, written, code, overall) in enumerate(cases):
        out = tmp_path / f"scenario-{n}.yaml"
        made = cli("rehearsal", "new", target, "--plugins-root", str(root), *flags, "-o", str(out), cwd=tmp_path)
        assert made.returncode == 0 and out.is_file(), made.stderr
        before = out.read_bytes()
        again = cli("rehearsal", "new", target, "--plugins-root", str(root), "-o", str(out), cwd=tmp_path)
        assert again.returncode == 2 and out.read_bytes() == before, again.stdout + again.stderr   # never overwritten
        proc = run_cmd(tmp_path / f"t{n}", target, "--plugins-root", str(root), "--rehearsal", str(out),
                       "--stall-limit", "5")
        doc = verdict_doc(final_json(proc))
        assert (proc.returncode, doc["overall"]["verdict"], doc["launch"]) == (code, overall, "PASS"), (
            target, flags, doc["overall"], doc["notes"])
        if written:
            assert f"side-effects/files/{written}" in [e["source"] for e in doc["evidence"]], doc["evidence"]
        else:
            assert any("question" in r for r in doc["overall"]["reasons"]), doc["overall"]


def printed_steps(tmp_path: Path, scenario: Path, *, env: dict[str, str], evaluate: bool, target: str = "trialkit:mark",
                  plugins_root: Path | None = None, extra: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """A trial of ``target`` (default ``trialkit:mark`` of the test plugins) by hand, as the plugin's skill drives it:
    ``prepare --json`` (with ``extra``), then each command it printed, in order, as written (the rehearsal server as
    a background process in place of ``&`` / ``kill %1``; poll again on TICK_BUDGET; ``evaluate`` only when
    ``evaluate``). ``env``: added to every step's environment (the CLI ``boot`` starts inherits it). Returns
    ``(prepare's JSON, {step: CompletedProcess})``."""
    import shlex

    from tests.e2e.run_support import PLUGINS

    def step(line: str, timeout: float = 120) -> subprocess.CompletedProcess:
        argv = shlex.split(line)
        assert argv[0] == "live-trial", line
        return subprocess.run([str(BIN / "live-trial"), *argv[1:]], cwd=tmp_path, capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, **env})

    env = {"LIVE_TRIAL_LANG": "en", **env}
    prep = cli("prepare", target, "--plugins-root", str(plugins_root or PLUGINS), "--rehearsal", str(scenario),
               *extra, "--json", cwd=tmp_path)
    assert prep.returncode == 0, prep.stderr
    held = json.loads(prep.stdout)
    assert not any("--launch" in line or "--completion" in line for line in held["commands"]), held["commands"]
    serve, *lines = [line for line in held["commands"] if not line.startswith("#") and line != "kill %1"]
    server = subprocess.Popen([str(BIN / "live-trial"), *shlex.split(serve.rstrip(" &"))[1:]], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done: dict[str, subprocess.CompletedProcess] = {}
    try:
        for line in lines:
            name = shlex.split(line)[1]
            if name == "evaluate" and not evaluate:
                continue
            done[name] = step(line)
            while name == "poll" and done[name].returncode == 5:         # TICK_BUDGET: the same command again
                done[name] = step(line)
            if name in ("boot", "send"):
                assert done[name].returncode == 0, (name, done[name].stdout, done[name].stderr)
    finally:
        cli("backend", "kill-session", held["session"], cwd=tmp_path)
        server.terminate()
        server.wait(timeout=30)
    return held, done


@pytest.mark.budget(10)
def test_by_hand_a_model_service_outage_is_blocked_as_run_blocks_it_not_the_skills_failure(tmp_path):
    """Every request after the Skill call is answered 529: poll stops at STALL ``api_error: …`` as soon as the CLI gave
    up (the STALL limit is far away), and the verdict the printed command writes is BLOCKED model_unavailable with
    the CLI's own line, as ``run``'s (tests/e2e/test_model_service.py), never FAIL (README "Whose failure it is")."""
    held, done = printed_steps(tmp_path, ROOT / "tests" / "e2e" / "scenarios" / "mark-overloaded.yaml",
                               env={"CLAUDE_CODE_MAX_RETRIES": "1", "STALL_LIMIT": "600"}, evaluate=False)
    poll = done["poll"]
    assert poll.returncode == 2 and "api_error: the CLI gave up on the model's service (model_unavailable" in (
        poll.stdout), (poll.stdout, poll.stderr)
    verdict = done["verdict"]
    assert verdict.returncode == 0, (verdict.stdout, verdict.stderr)
    doc = json.loads((Path(held["workdir"]) / "verdict.json").read_text())
    assert (doc["overall"]["verdict"], doc["stop_reason"], doc["blocked"], doc["launch"]) == (
        "BLOCKED", "model_unavailable", True, "PASS"), doc["overall"]
    assert any("529" in n and "Overloaded" in n for n in doc["notes"]), doc["notes"]      # the CLI's own line
    assert "not the skill's fault" in doc["summary"], doc["summary"]


@pytest.mark.budget(10)
def test_by_hand_an_evaluator_with_no_valid_answer_is_blocked_as_run_blocks_it(tmp_path):
    """The scripted evaluator breaks the answer's form on both attempts: ``evaluate`` exits 3, and the verdict the
    printed command writes is BLOCKED evaluator_failed, the goal not judged, as ``run``'s, never DEGRADED."""
    held, done = printed_steps(tmp_path, ROOT / "tests" / "e2e" / "scenarios" / "mark-judge-invalid.yaml",
                               env={"STALL_LIMIT": "4"}, evaluate=True)
    assert done["poll"].returncode == 0, done["poll"].stdout
    assert done["evaluate"].returncode == 3, (done["evaluate"].stdout, done["evaluate"].stderr)
    assert done["verdict"].returncode == 0, (done["verdict"].stdout, done["verdict"].stderr)
    doc = json.loads((Path(held["workdir"]) / "verdict.json").read_text())
    assert (doc["overall"]["verdict"], doc["stop_reason"], doc["goal_result"], doc["launch"], doc["completion"]) == (
        "BLOCKED", "evaluator_failed", None, "PASS", "PASS"), doc["overall"]
    assert any("error_max_structured_output_retries" in n for n in doc["notes"]), doc["notes"]
    assert "was not judged" in doc["summary"] and "not the skill's fault" in doc["summary"], doc["summary"]


@pytest.mark.budget(12)
def test_by_hand_a_stand_in_mcp_server_takes_the_plugins_place_as_in_run(tmp_path):
    """``prepare --mcp-fixture``: the printed ``boot`` starts the stand-in in place of the plugin's dead server and
    waits for it before ``send``; the verdict's ledger names the stand-in and its one call (README "Stand-in MCP
    servers"), as ``run``'s does (tests/e2e/test_plugin_activity.py)."""
    from tests.e2e.run_support import PLUGINS

    root = tmp_path / "plugins"
    shutil.copytree(PLUGINS / "mcpkit", root / "mcpkit")
    server = root / "mcpkit" / "bin" / "echo_server.py"
    held, done = printed_steps(tmp_path, ROOT / "tests" / "e2e" / "scenarios" / "needs-standin.yaml",
                               env={"STALL_LIMIT": "4"}, evaluate=True, target="mcpkit:needs", plugins_root=root,
                               extra=("--mcp-fixture", f"dead=python3 {server}"))
    assert done["verdict"].returncode == 0, (done["verdict"].stdout, done["verdict"].stderr)
    doc = json.loads((Path(held["workdir"]) / "verdict.json").read_text())
    assert doc["overall"]["verdict"] == "PASS", json.dumps(doc)[-3000:]
    [dead] = [s for s in doc["plugin_activity"]["mcp_servers"] if s["name"] == "plugin:mcpkit:dead"]
    assert dead["stand_in"]["name"] == "dead" and dead["command"] == ["python3", str(server)], dead
    assert (dead["at_start"], dead["calls"]) == ("connected", {"mcp__plugin_mcpkit_dead__echo": 1}), dead
