"""The files and folders of one trial's workdir, each name spelled once (README "What a trial leaves behind").

A workdir is ``<eval-root>/<plugin>/<skill>/live-trial/<run-id>/`` (:func:`live_trial.acceptance.evallog.workdir_path`).
The constants are the names of its entries: directly in the workdir unless a comment says where, and ``*_PATH`` ones
workdir-relative POSIX paths (the spelling an evidence source or a report link uses). :class:`Workdir` gives the
absolute path of each. Who writes what:

- the task and the session: ``task.md`` and ``nudge-<n>.md`` (what was pasted), ``out/`` with its one completion
  marker ``out/status.json``;
- collect: ``pane.txt``, ``transcript.jsonl`` (and ``subagents/``), ``moved-from/<session-id>.jsonl`` (a transcript
  the session left for a new one), ``side-effects/`` (``files.json``, the copies under ``files/``, and in a git work
  tree ``git-status.txt``, ``git-diff.patch``, ``git-commits.txt``);
- the harness's own records: ``trial-state.json``, ``poll-state.json``, ``trial-log.jsonl``, ``cwd-snapshot.json``,
  ``records-seal.json`` (the digest of each record collect wrote, checked before the evaluator and the verdict),
  ``.trial.lock``, ``cwd/`` (the trial's own folder, when it is the default one) and ``cwd-baseline/`` (the private
  git store of a folder's start, removed at the end);
- the evaluator ``evaluation.json``, the verdict ``verdict.json``, the page ``report.html``;
- a rehearsal also its isolated ``claude-config/`` and its own watch ledger ``rehearsal-watches/``;
- a recorded trial (``run --record``) its ``model-tape.jsonl``; a replayed one (``run --replay``) its
  ``replay-log.jsonl``.
- the session's claude its debug log ``claude-debug/session.log`` (sealed at collect), and a trial with stand-in MCP
  servers the harness's ``mcp-fixtures.json`` (the ``--mcp-config`` its claude is started with).
- a trial delivered to a person first (``prepare --delivery``): ``delivery.json``, ``verdict-first.json``, and for the
  improvement loop ``improvement.json`` and ``ticket-<n>.md``.

Bottom floor: every subpackage may import it; it imports nothing of the package.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TASK = "task.md"
#: A nudge's text, ``NUDGE.format(n)`` for the n-th nudge (1-based).
NUDGE = "nudge-{}.md"
NUDGE_GLOB = NUDGE.format("*")
OUT = "out"
#: The completion marker, in ``out/``.
MARKER = "status.json"
MARKER_PATH = f"{OUT}/{MARKER}"
PANE = "pane.txt"
TRANSCRIPT = "transcript.jsonl"
SUBAGENTS = "subagents"
MOVED_FROM = "moved-from"
SIDE_EFFECTS = "side-effects"
#: In ``side-effects/``: the added, changed, removed and copied files.
SIDE_EFFECTS_LIST = "files.json"
#: In ``side-effects/``: the copies of the added and changed files, by their path in the trial's folder.
SIDE_EFFECTS_COPIES = "files"
#: In ``side-effects/`` (a folder in a git work tree): what changed, as git shows it.
GIT_STATUS = "git-status.txt"
GIT_DIFF = "git-diff.patch"
GIT_COMMITS = "git-commits.txt"
SIDE_EFFECTS_LIST_PATH = f"{SIDE_EFFECTS}/{SIDE_EFFECTS_LIST}"
SIDE_EFFECTS_COPIES_PATH = f"{SIDE_EFFECTS}/{SIDE_EFFECTS_COPIES}"
GIT_DIFF_PATH = f"{SIDE_EFFECTS}/{GIT_DIFF}"
EVALUATION = "evaluation.json"
VERDICT = "verdict.json"
TRIAL_STATE = "trial-state.json"
POLL_STATE = "poll-state.json"
TRIAL_LOG = "trial-log.jsonl"
REPORT = "report.html"
#: The variable of the session's environment naming its completion marker (a plugin's hook that guards where the
#: session writes can allow it: README "Whose failure it is").
MARKER_ENV = "LIVE_TRIAL_MARKER"
CWD_SNAPSHOT = "cwd-snapshot.json"
#: The digest of every record collect wrote (:mod:`live_trial.trial.seal`), checked before the records are used.
RECORDS_SEAL = "records-seal.json"
TRIAL_LOCK = ".trial.lock"
#: The verdict over the trials of one case run, in the case run's own folder
#: (``<eval-root>/<plugin>/<skill>/live-trial-cases/<case-run-id>/``, references/suite-format.md "Repeats"),
#: beside its ``report.html``.
CASE_VERDICT = "case-verdict.json"
# an activation run's folder (<eval-root>/<plugin>/<skill>/live-trial-activation/<id>): its result, and the folder
# holding one workdir per session of its prompts (README "Does it start by itself?")
ACTIVATION = "activation.json"
PROMPTS = "prompts"
CWD = "cwd"
CWD_BASELINE = "cwd-baseline"
CLAUDE_CONFIG = "claude-config"
#: The CLI's debug log (``claude --debug-file``), in a folder of its own: the CLI puts a ``latest`` link beside it.
DEBUG_LOG_DIR = "claude-debug"
DEBUG_LOG = "session.log"
DEBUG_LOG_PATH = f"{DEBUG_LOG_DIR}/{DEBUG_LOG}"
#: The stand-in MCP servers of a trial (``--mcp-config`` of its claude): suite ``mcp_fixtures``, ``run --mcp-fixture``.
MCP_FIXTURES = "mcp-fixtures.json"
REHEARSAL_WATCHES = "rehearsal-watches"
#: The model's side of a recorded trial, one line per request and response (live_trial/tape/file.py).
MODEL_TAPE = "model-tape.jsonl"
#: How a replayed trial's tape answered each request (live_trial/tape/replay.py).
REPLAY_LOG = "replay-log.jsonl"
# The delivery of the first artifact to a person and the improvement loop (seed 001 artifact_delivery).
DELIVERY = "delivery.json"                      # the state of the delivery (acceptance.delivery_state)
FIRST_VERDICT = "verdict-first.json"            # the first artifact's verdict (goal not judged), kept when completed
IMPROVEMENT = "improvement.json"                # the loop's ledger: each round's ticket, changed files, verdict
#: The diff ticket of round n (1-based), ``TICKET.format(n)``.
TICKET = "ticket-{}.md"
# The eval root's own files (a rehearsal keeps its own in <workdir>/rehearsal-watches/).
NOTIFICATIONS_FILE = "notifications.jsonl"      # every notification sent, one record per line (notices.notify)
LEDGER_FILE = "watches.json"                    # the watch ledger (notices.watch)
QUEUE_FILE = "queue.json"                       # the plan's defer queue (acceptance.queue)


@dataclass(frozen=True)
class Workdir:
    """One trial's folder: ``root`` (absolute when it came from :func:`live_trial.trial.workdir.create_workdir` or
    :func:`~live_trial.trial.workdir.open_workdir`) and its ``run_id``. Each property is the path of one entry; nothing
    here touches the disk."""

    root: Path
    run_id: str

    @classmethod
    def of(cls, path: str | Path) -> Workdir:
        """The workdir at ``path`` as given (not resolved, not checked); its run id is the folder's name."""
        root = Path(path)
        return cls(root=root, run_id=root.name)

    @property
    def task(self) -> Path:
        """``task.md``: the task as pasted into the session."""
        return self.root / TASK

    def nudge(self, n: int) -> Path:
        """``nudge-<n>.md``: the text of the n-th nudge (1-based)."""
        return self.root / NUDGE.format(n)

    @property
    def out(self) -> Path:
        """``out/``: where the skill writes the completion marker and its artifacts."""
        return self.root / OUT

    @property
    def marker(self) -> Path:
        """``out/status.json``: the one completion marker the task asks for (seed 001, task.md contract item 2)."""
        return self.out / MARKER

    @property
    def pane(self) -> Path:
        """``pane.txt``: the last screen with scrollback."""
        return self.root / PANE

    @property
    def transcript(self) -> Path:
        """``transcript.jsonl``: the session's transcript, the one it ended in."""
        return self.root / TRANSCRIPT

    @property
    def subagents(self) -> Path:
        """``subagents/``: the transcripts of the session's subagents."""
        return self.root / SUBAGENTS

    @property
    def moved_from(self) -> Path:
        """``moved-from/``: the transcripts the session left (``/clear``), as ``<session-id>.jsonl``."""
        return self.root / MOVED_FROM

    @property
    def moved_transcripts(self) -> list[Path]:
        """The transcripts the session left (``moved-from/*.jsonl``), sorted by name (session id); may be empty."""
        return sorted(self.moved_from.glob("*.jsonl"))

    @property
    def session_transcripts(self) -> list[Path]:
        """Every transcript of the session, the one it ended in last: :attr:`moved_transcripts`, then
        :attr:`transcript` (listed whether or not it exists; a reader skips a missing one)."""
        return [*self.moved_transcripts, self.transcript]

    @property
    def side_effects(self) -> Path:
        """``side-effects/``: what changed in the trial's own folder."""
        return self.root / SIDE_EFFECTS

    @property
    def side_effects_list(self) -> Path:
        """``side-effects/files.json``: the added, changed, removed and copied files."""
        return self.side_effects / SIDE_EFFECTS_LIST

    @property
    def side_effects_copies(self) -> Path:
        """``side-effects/files/``: the copies of the added and changed files."""
        return self.side_effects / SIDE_EFFECTS_COPIES

    @property
    def git_status(self) -> Path:
        """``side-effects/git-status.txt``."""
        return self.side_effects / GIT_STATUS

    @property
    def git_diff(self) -> Path:
        """``side-effects/git-diff.patch``."""
        return self.side_effects / GIT_DIFF

    @property
    def git_commits(self) -> Path:
        """``side-effects/git-commits.txt``."""
        return self.side_effects / GIT_COMMITS

    @property
    def evaluation(self) -> Path:
        """``evaluation.json``: the evaluator's request, answers and session id."""
        return self.root / EVALUATION

    @property
    def verdict(self) -> Path:
        """``verdict.json``."""
        return self.root / VERDICT

    @property
    def trial_state(self) -> Path:
        """``trial-state.json``: the harness's state of the trial."""
        return self.root / TRIAL_STATE

    @property
    def poll_state(self) -> Path:
        """``poll-state.json``: the poll's state file."""
        return self.root / POLL_STATE

    @property
    def trial_log(self) -> Path:
        """``trial-log.jsonl``: every decision of the harness with its evidence."""
        return self.root / TRIAL_LOG

    @property
    def report(self) -> Path:
        """``report.html``: the trial as one page."""
        return self.root / REPORT

    @property
    def cwd_snapshot(self) -> Path:
        """``cwd-snapshot.json``: the trial's folder right after it was made ready."""
        return self.root / CWD_SNAPSHOT

    @property
    def records_seal(self) -> Path:
        """``records-seal.json``: the digest of each record collect wrote (:mod:`live_trial.trial.seal`)."""
        return self.root / RECORDS_SEAL

    @property
    def trial_lock(self) -> Path:
        """``.trial.lock``: held while a harness drives the trial."""
        return self.root / TRIAL_LOCK

    @property
    def cwd(self) -> Path:
        """``cwd/``: the trial's own folder when it is the default one."""
        return self.root / CWD

    @property
    def cwd_baseline(self) -> Path:
        """``cwd-baseline/``: the private git store of the folder's start and end trees."""
        return self.root / CWD_BASELINE

    @property
    def claude_config(self) -> Path:
        """``claude-config/``: a rehearsal's isolated claude configuration."""
        return self.root / CLAUDE_CONFIG

    @property
    def model_tape(self) -> Path:
        """``model-tape.jsonl``: a recorded trial's requests and responses."""
        return self.root / MODEL_TAPE

    @property
    def replay_log(self) -> Path:
        """``replay-log.jsonl``: how a replayed trial's tape answered each request."""
        return self.root / REPLAY_LOG

    @property
    def debug_log(self) -> Path:
        """``claude-debug/session.log``: the CLI's debug log of the session (its hooks and MCP servers)."""
        return self.root / DEBUG_LOG_DIR / DEBUG_LOG

    @property
    def mcp_fixtures(self) -> Path:
        """``mcp-fixtures.json``: the stand-in MCP servers the session's claude is started with."""
        return self.root / MCP_FIXTURES

    @property
    def rehearsal_watches(self) -> Path:
        """``rehearsal-watches/``: a rehearsal's own watch ledger."""
        return self.root / REHEARSAL_WATCHES
