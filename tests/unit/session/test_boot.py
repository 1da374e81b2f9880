"""boot without tmux: argv, environment, refusals (message, exit code, nothing created) and the screen flow."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from live_trial.errors import BootFail, BootTimeout, ExitCode, RefusedInput
from live_trial.session import boot as bt
from live_trial.session import boot_dialogs
from live_trial.session import screen
from live_trial.session.environment import child_env
from tests.unit.fakes import Clock, FakeBackend

SCREENS = Path(__file__).parents[1] / "screens"
S = "lt-20261130T101500-abcd-boot"
UUID = "12345678-1234-4234-8234-123456789abc"


def cap(name):
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


CLAUDE = "/bin/true"   # any executable stands in for claude here


def req(tmp_path, **kw):
    base = dict(session=S, cwd=tmp_path, claude=CLAUDE, rehearsal=True, timeout_s=30, plugin_dirs=[])
    base.update(kw)
    return bt.BootRequest(**base)


def run(fb, r, env=None):
    clock = Clock()
    return bt.boot(r, fb, base_env=env or {"PATH": "/bin"}, clock=clock, sleep=clock.sleep), clock


BYPASS_FLOW = {"no": (cap("bypass_dialog"), {"Down": "yes"}), "yes": (cap("bypass_dialog_yes"), {"Enter": "ready", "Up": "no"}),
               "ready": (cap("ready_after_bypass"), {})}


# ---------------------------------------------------------------- argv and environment

def test_build_argv_is_a_list_with_pinned_flags(tmp_path):
    r = req(tmp_path, model="claude-opus-4-8", session_id=UUID)
    argv = bt.build_argv(r, "/opt/claude", [Path("/p/tgt"), Path("/p/dep")])
    assert argv == ["/opt/claude", "--model", "claude-opus-4-8", "--session-id", UUID, "--setting-sources", "local",
                    "--plugin-dir", "/p/tgt", "--plugin-dir", "/p/dep", "--dangerously-skip-permissions"]
    assert "--model" not in bt.build_argv(req(tmp_path, session_id=UUID), "/opt/claude")


def test_a_session_as_a_person_starts_it_reads_every_settings_source(tmp_path):
    """Trials keep ``--setting-sources local`` (seed 001 absolute rule 3); ``setting_sources=None`` leaves the flag out,
    so a user-scope plugin install loads (README "Use it from Claude Code")."""
    argv = bt.build_argv(req(tmp_path, session_id=UUID, setting_sources=None), "/opt/claude")
    assert argv == ["/opt/claude", "--session-id", UUID, "--dangerously-skip-permissions"]


def test_child_env_strips_nested_markers_and_sets_sandbox_in_rehearsal():
    base = {"PATH": "/bin", "ANTHROPIC_API_KEY": "user-key", "CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli",
            "CLAUDE_CODE_SSE_PORT": "1234", "CLAUDE_CODE_SESSION_ID": "x", "CLAUDE_CODE_CHILD_SESSION": "1",
            "TMUX": "/tmp/tmux-0/default,1,0", "AI_AGENT": "agent", "CLAUDE_CODE_NO_FLICKER": "1"}
    env = child_env(base, {"CLAUDE_CONFIG_DIR": "/c", "CLAUDECODE": "1"}, rehearsal=True)
    assert env == {"PATH": "/bin", "ANTHROPIC_API_KEY": "user-key", "CLAUDE_CONFIG_DIR": "/c", "IS_SANDBOX": "1",
                   "CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1"}   # the classic renderer, fullscreen never forced
    assert "IS_SANDBOX" not in child_env({"PATH": "/bin"}, {}, rehearsal=False)


def test_root_without_sandbox_refused_one_line():
    with pytest.raises(RefusedInput) as exc:
        bt.check_root_sandbox({}, euid=0)
    assert exc.value.code == "root_needs_sandbox" and "IS_SANDBOX=1" in exc.value.message
    assert "\n" not in exc.value.message
    bt.check_root_sandbox({"IS_SANDBOX": "1"}, euid=0)
    bt.check_root_sandbox({}, euid=1000)


# ---------------------------------------------------------------- refusals: nothing created

@pytest.mark.parametrize("kw,code,words", [
    (dict(session="lt-bad"), "bad_session_name", "bad session name"),
    (dict(model="claude;rm -rf"), "bad_model", "model"),
    (dict(model="--help"), "bad_model", "model"),
    (dict(session_id="not-a-uuid"), "bad_session_id", "not a uuid"),
    (dict(proof=True), "proof_needs_model", "proof trial needs --model"),
    (dict(proof=True, model="sonnet"), "proof_alias", "full model id"),
    (dict(proof=True, model="opus"), "proof_alias", "full model id"),
    (dict(target="x:run-skill-live-trial"), "denied_target", "cannot be a trial target"),
    (dict(target="run-skill-iter-improve"), "denied_target", "cannot be a trial target"),
])
def test_refusals_create_nothing(tmp_path, kw, code, words):
    fb = FakeBackend(BYPASS_FLOW, "no")
    with pytest.raises(RefusedInput) as exc:
        run(fb, req(tmp_path, **kw))
    assert exc.value.code == code and words in exc.value.message and exc.value.exit_code == ExitCode.REFUSED
    assert fb.created == [] and fb.keys == []


def test_missing_cwd_refused(tmp_path):
    fb = FakeBackend(BYPASS_FLOW, "no")
    with pytest.raises(RefusedInput) as exc:
        run(fb, req(tmp_path / "nope"))
    assert exc.value.code == "bad_cwd" and fb.created == []


def test_real_trial_as_root_without_sandbox_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    fb = FakeBackend(BYPASS_FLOW, "no")
    with pytest.raises(RefusedInput) as exc:
        run(fb, req(tmp_path, rehearsal=False), env={"PATH": "/bin"})
    assert exc.value.code == "root_needs_sandbox" and fb.created == []
    fb2 = FakeBackend(BYPASS_FLOW, "no")
    run(fb2, req(tmp_path, rehearsal=False), env={"PATH": "/bin", "IS_SANDBOX": "1"})
    assert fb2.created


def test_tmux_or_claude_missing_is_blocked_and_creates_nothing(tmp_path):
    from live_trial.errors import Blocked

    fb = FakeBackend(BYPASS_FLOW, "no")

    def no_tmux():
        raise Blocked("tmux not found", code="tmux_missing")

    fb.require_tmux = no_tmux
    with pytest.raises(Blocked) as exc:
        run(fb, req(tmp_path))
    assert exc.value.exit_code == ExitCode.BLOCKED and fb.created == []
    fb = FakeBackend(BYPASS_FLOW, "no")
    with pytest.raises(Blocked) as exc:
        run(fb, req(tmp_path, claude=str(tmp_path / "no-claude")))
    assert exc.value.code == "claude_missing" and "not an executable" in exc.value.message and fb.created == []


def test_proof_accepts_full_ids(tmp_path):
    for model in ("claude-opus-4-8", "claude-sonnet-4-5-20250929"):
        assert bt.validate_model(model, proof=True) == model


# ---------------------------------------------------------------- dialog and READY flow

def test_bypass_dialog_accepted_down_then_enter(tmp_path):
    fb = FakeBackend(BYPASS_FLOW, "no")
    result, _ = run(fb, req(tmp_path, session_id=UUID))
    assert fb.keys == ["Down", "Enter"]
    assert result.bypass_dialog_seen is True
    assert result.ready_line().startswith(f"READY: {S} (") and result.ready_line().endswith(
        f"MODEL:default SESSION_ID:{UUID}")
    assert fb.killed == []
    name, argv, cwd, env = fb.created[0]
    assert argv[0] == CLAUDE and env["IS_SANDBOX"] == "1"
    assert fb.meta["session_id"] == UUID


def test_no_dialog_is_fine(tmp_path):
    fb = FakeBackend({"ready": (cap("ready_no_dialog"), {})}, "ready")
    result, _ = run(fb, req(tmp_path))
    assert result.bypass_dialog_seen is False and fb.keys == []


class SlowBootBackend(FakeBackend):
    """A CLI whose screen stays blank until ``ready_at`` seconds on the fake clock, then shows its prompt."""

    def __init__(self, clock, ready_at):
        super().__init__({"ready": (cap("ready_no_dialog"), {})}, "ready")
        self.clock, self.ready_at = clock, ready_at

    def capture(self, name, scrollback=False):
        return super().capture(name) if self.clock() >= self.ready_at else ""


@pytest.mark.parametrize("ready_at,most_probes", [(0.4, 10), (5.0, 50)])
def test_a_slow_boot_is_probed_less_often_and_still_seen_promptly(tmp_path, ready_at, most_probes):
    """Every probe is a tmux client: a CLI that takes 5 s to boot (eight at once on two cores) is probed every 0.2 s
    after the first 1.5 s instead of every 50 ms (about 100 probes), and its prompt is still seen within one probe."""
    clock = Clock()
    fb = SlowBootBackend(clock, ready_at)
    bt.boot(req(tmp_path), fb, base_env={"PATH": "/bin"}, clock=clock, sleep=clock.sleep)
    assert fb.polls <= most_probes
    assert ready_at <= clock() <= ready_at + (bt.POLL_S if ready_at < bt.POLL_FAST_S else bt.POLL_SLOW_S) + 1e-9


def test_the_probe_schedule_counts_from_the_cli_start_not_from_a_slow_plugin_check(tmp_path, monkeypatch):
    """A plugin check that takes 3 s (the CLI's validator, not cached) leaves the CLI's own quick boot probed every
    50 ms: its prompt is seen within 50 ms, not 0.2 s."""
    from live_trial.session import plugin_check

    clock = Clock()
    monkeypatch.setattr(plugin_check, "check_plugins", lambda *a, **k: clock.sleep(3.0) or [])
    fb = SlowBootBackend(clock, 3.33)
    bt.boot(req(tmp_path, plugin_dirs=[tmp_path]), fb, base_env={"PATH": "/bin"}, clock=clock, sleep=clock.sleep)
    assert 3.33 <= clock() <= 3.33 + bt.POLL_S + 1e-9


def test_bypass_cursor_not_on_no_exit_presses_nothing(tmp_path):
    odd = cap("bypass_dialog").replace("  ❯ 1. No, exit", "    1. No, exit").replace("    2. Yes, I accept",
                                                                                      "  ❯ 2. Yes, I accept")
    odd = odd.replace("Yes, I accept", "Maybe later")
    fb = FakeBackend({"odd": (odd, {})}, "odd")
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path))
    assert fb.keys == [] and "bypass-permissions dialog" in exc.value.message
    assert exc.value.details["screen"] == "bypass-permissions dialog" and fb.killed == [S]


def test_bypass_cursor_that_does_not_move_fails(tmp_path):
    fb = FakeBackend({"no": (cap("bypass_dialog"), {})}, "no")
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path))
    # pressed once (the options wrap: a second Down could undo a first one drawn late), never Enter on "No, exit"
    assert fb.keys == ["Down"] and "did not move" in exc.value.message


@pytest.mark.parametrize("screen_name,named", [("trust_question", "folder-trust question"),
                                               ("api_key_approval", "API-key approval"),
                                               ("onboarding", "onboarding screen"), ("not_logged_in", "login screen")])
def test_blocking_screens_fail_fast_naming_the_screen(tmp_path, screen_name, named):
    fb = FakeBackend({"s": (cap(screen_name), {})}, "s")
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path))
    assert named in exc.value.message and exc.value.details["screen"] == named
    assert exc.value.details["tail"] and exc.value.fix
    assert fb.keys == [] and fb.killed == [S]
    assert fb.polls <= 3


def test_exit_at_start_is_boot_fail_with_last_lines(tmp_path):
    fb = FakeBackend({"s": ("", {})}, "s", dead_after=1, dead_tail=cap("dead_root_refused"))
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path))
    assert "exited at start (exit status 1)" in exc.value.message
    assert "root/sudo" in exc.value.message and "IS_SANDBOX=1" in exc.value.fix
    assert exc.value.code == "root_needs_sandbox"          # the environment's, not the skill's (BLOCKED)
    assert fb.killed == [S]


def test_timeout_with_a_prompt_carries_tail(tmp_path):
    busy = cap("ready_no_dialog").replace("❯\u00a0", "❯\u00a0still typing")
    fb = FakeBackend({"busy": (busy, {})}, "busy")
    with pytest.raises(BootTimeout) as exc:
        run(fb, req(tmp_path, timeout_s=5))
    assert exc.value.exit_code == ExitCode.FAIL and exc.value.details["tail"][-3:] == screen.tail(busy)[-3:]
    assert fb.killed == [S]


def test_no_prompt_at_the_timeout_is_an_unknown_screen_named_by_its_first_lines(tmp_path):
    fb = FakeBackend({"blank": ("\nloading…\n\nplease wait", {})}, "blank")
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path, timeout_s=5))
    assert exc.value.code == "unknown_screen" and "no prompt within 5s" in exc.value.message
    assert '"loading… | please wait"' in exc.value.message and "live-trial doctor --cli" in exc.value.message
    assert fb.keys == [] and fb.killed == [S]


def test_an_unknown_dialog_is_named_within_seconds_and_nothing_is_pressed(tmp_path):
    made_up = "\n".join(["", "  Choose your adventure", "", "  ❯ Left door", "    Right door", "",
                          "  Enter to confirm · Esc to cancel"])
    fb = FakeBackend({"odd": (made_up, {})}, "odd")
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path, timeout_s=60))
    assert exc.value.code == "unknown_screen" and "a dialog it has no answer for" in exc.value.message
    assert "Choose your adventure | ❯ Left door | Right door" in exc.value.message
    assert exc.value.details["screen"].startswith("unknown screen: Choose your adventure")
    assert fb.keys == [] and fb.killed == [S]


def test_the_332_bypass_dialog_drawn_without_numbers_is_accepted(tmp_path):
    flow = {"no": (cap("bypass_dialog_332"), {"Down": "yes"}),
            "yes": (cap("bypass_dialog_yes_332"), {"Enter": "ready", "Up": "no"}),
            "ready": (cap("fullscreen_ready_332"), {})}
    result, _ = run(FakeBackend(flow, "no"), req(tmp_path))
    assert result.bypass_dialog_seen is True


class DrawsLate(FakeBackend):
    """A CLI on a busy machine: it takes each key at once but draws the result ``lag`` seconds later (fake clock).
    Its options wrap, as both versions' do: Down on "Yes, I accept" goes back to "No, exit"."""

    def __init__(self, flow, start, clock, lag):
        super().__init__(flow, start)
        self.clock, self.lag, self.drawn = clock, lag, [(0.0, start)]

    def send_keys(self, name, *keys):
        super().send_keys(name, *keys)
        self.drawn.append((self.clock() + self.lag, self.state))

    def capture(self, name, scrollback=False):
        shown = [state for at, state in self.drawn if at <= self.clock()][-1]
        return self.flow[shown][0]


def test_a_down_drawn_late_is_not_pressed_again_so_enter_never_lands_on_no_exit(tmp_path):
    """Seen in CI with four trials booting on two cores (2.1.197): Down drawn after the retry delay, a second Down
    wrapped the cursor back, the screen still showed "Yes" and Enter answered "No, exit": the CLI exited at start."""
    wraps = {"no": (cap("bypass_dialog"), {"Down": "yes"}),
             "yes": (cap("bypass_dialog_yes"), {"Enter": "ready", "Down": "no", "Up": "no"}),
             "ready": (cap("ready_after_bypass"), {})}
    clock = Clock()
    fb = DrawsLate(wraps, "no", clock, lag=2.0)
    result = bt.boot(req(tmp_path), fb, base_env={"PATH": "/bin"}, clock=clock, sleep=clock.sleep)
    assert fb.keys == ["Down", "Enter"] and fb.state == "ready" and result.bypass_dialog_seen is True


def test_rehearsal_flag_settings_reach_the_argv(tmp_path):
    from live_trial.rehearsal.config import seed_config, settings_args

    plain, skip = seed_config(tmp_path / "plain", [tmp_path]), seed_config(tmp_path / "skip", [tmp_path],
                                                                          skip_bypass_dialog=True)
    assert settings_args(plain) == []
    assert settings_args(skip) == ["--settings", str((skip / "flag-settings.json").resolve())]
    assert json.loads((skip / "flag-settings.json").read_text()) == {"skipDangerousModePermissionPrompt": True}
    fb = FakeBackend({"ready": (cap("ready_no_dialog"), {})}, "ready")
    run(fb, req(tmp_path, settings_args=settings_args(skip)), env={"PATH": "/bin", "CLAUDE_CONFIG_DIR": str(skip)})
    argv = fb.created[0][1]
    assert argv[argv.index("--settings") + 1] == str((skip / "flag-settings.json").resolve())
    assert argv.index("--settings") < argv.index("--dangerously-skip-permissions")
    fb = FakeBackend({"ready": (cap("ready_no_dialog"), {})}, "ready")
    run(fb, req(tmp_path, rehearsal=False), env={"PATH": "/bin", "CLAUDE_CONFIG_DIR": str(skip), "IS_SANDBOX": "1"})
    assert "--settings" not in fb.created[0][1]      # a trial is never given a consent it did not ask for


# ---------------------------------------------------------------- plugin pinning (the closure's union)

def _plugin(root: Path, name: str, deps=(), contract=None, skills=("s",)):
    (root / name / ".claude-plugin").mkdir(parents=True)
    (root / name / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name, "dependencies": list(deps)}))
    for s in skills:
        (root / name / "skills" / s).mkdir(parents=True)
        (root / name / "skills" / s / "SKILL.md").write_text(f"---\nname: {s}\ndescription: {s} of {name}\n---\nbody\n")
    if contract:
        (root / name / "references").mkdir()
        (root / name / "references" / "package-contract.json").write_text(json.dumps(contract))


def test_plugin_dirs_are_the_dependency_union(tmp_path):
    from live_trial.closure.pinning import dependency_union
    from live_trial.closure.target import resolve_target

    root = tmp_path / "plugins"
    _plugin(root, "tgt", deps=["depa"], skills=("run", "other"),
            contract={"entry_points": {"skills": ["run", "other"]}, "depends_on": ["depb", "depc"],
                      "skill_dependencies": {"run": ["depb"], "other": ["depc"]}})
    for n in ("depa", "depb", "depc", "unrelated"):
        _plugin(root, n)
    dirs = bt.resolve_plugin_dirs("tgt:run", root)
    assert [d.name for d in dirs] == ["tgt", "depa", "depb"]
    union = dependency_union(resolve_target("tgt:run", root), root)
    assert dirs == [ref.root for ref in union]
    assert bt.resolve_plugin_dirs("plainskill", root) == [] and bt.resolve_plugin_dirs(None, root) == []


def test_missing_dependency_fails_closed_before_start(tmp_path):
    root = tmp_path / "plugins"
    _plugin(root, "tgt", deps=["ghost"])
    fb = FakeBackend(BYPASS_FLOW, "no")
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path, target="tgt:s", plugins_root=root, plugin_dirs=None))
    assert "ghost" in exc.value.message and exc.value.exit_code == 2
    assert fb.created == []


# ---------------------------------------------------------------- CLI

def test_cli_boot_refusals_exit_2_one_line(tmp_path, capsys, monkeypatch):
    from live_trial.cli.main import main

    created = []
    monkeypatch.setattr("live_trial.session.backend.Backend.new_session", lambda *a, **k: created.append(a))
    cases = [(["boot", "bad", str(tmp_path)], "REFUSED: bad session name"),
             (["boot", S, str(tmp_path), "--proof"], "REFUSED: a proof trial needs --model"),
             (["boot", S, str(tmp_path), "--proof", "--model", "sonnet"], "REFUSED: proof trials need a full model id"),
             (["boot", S, str(tmp_path), "--target-skill", "p:run-skill-live-trial"], "REFUSED: run-skill-live-trial"),
             (["boot", S, str(tmp_path), "--model", "a b"], "REFUSED: model 'a b'"),
             (["boot", S, str(tmp_path), "--rehearsal-server", "http://127.0.0.1:1"], "REFUSED: --rehearsal-server needs")]
    for argv, start in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(start) and "\n" not in err, err
    assert created == [] and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- the folder-trust question of a folder the harness made

LONG = Path("/tmp/trustx/T/" + "/".join(["a-rather-long-folder-name-for-wrapping"] * 5) + "/repo")
TRUST_FLOW = {"no": (cap("trust_question_long_path_332"), {"Down": "yes"}),
              "yes": (cap("trust_question_yes_332"), {"Enter": "ready", "Down": "no", "Up": "no"}),
              "ready": (cap("ready_after_trust_332"), {})}


def test_the_folder_a_trust_question_names_is_read_whole_when_its_path_wraps():
    assert boot_dialogs.trust_folder_shown(cap("trust_question_long_path_332")) == LONG
    assert boot_dialogs.trust_folder_shown(cap("trust_question_332")) == Path("/tmp/obs-screen/t-332/cwd")
    assert boot_dialogs.trust_folder_shown(cap("trust_question")) is not None          # 2.1.197's numbered one
    assert boot_dialogs.trust_folder_shown(cap("bypass_dialog_332")) is None
    assert boot_dialogs.trust_folder_shown(cap("ready_after_trust_332")) is None


def test_the_trust_question_of_the_folder_boot_was_told_the_person_trusts_is_answered_yes(tmp_path):
    """2.1.332 asks about a git work tree below a trusted folder (references/transcript-jsonl.md "Folder trust"): for
    the one folder the trial made there, boot answers "Yes, I trust this folder" (Down, then one Enter once the
    question has been up for half a second, as a gate's Enter) and says so."""
    fb = FakeBackend(TRUST_FLOW, "no")
    result, clock = run(fb, req(tmp_path, trusted_folder=LONG))
    assert fb.keys == ["Down", "Enter"] and fb.state == "ready"
    assert result.trust_answered == LONG and fb.killed == []


@pytest.mark.parametrize("trusted", [None, Path("/tmp/another/folder")])
def test_a_trust_question_of_any_other_folder_is_never_answered(tmp_path, trusted):
    """No folder given (a rehearsal, ``--in-place DIR``: the person's own answer is asked for), or another folder
    than the one the question names: nothing is pressed, boot stops at the blocking screen and names it."""
    fb = FakeBackend(TRUST_FLOW, "no")
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path, trusted_folder=trusted))
    assert fb.keys == [] and exc.value.details["screen"] == "folder-trust question" and fb.killed == [S]


def test_a_trust_question_whose_cursor_does_not_move_presses_no_enter(tmp_path):
    fb = FakeBackend({"no": (cap("trust_question_long_path_332"), {})}, "no")
    with pytest.raises(BootFail) as exc:
        run(fb, req(tmp_path, trusted_folder=LONG))
    assert fb.keys == ["Down"] and "did not move" in exc.value.message and fb.killed == [S]
