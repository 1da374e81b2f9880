"""live_trial: run a Claude Code skill in a real claude session in tmux and judge whether it reached its goal.

How the code is laid out: one subpackage per stage of a trial, on floors. A module imports only from its own
subpackage, from a lower floor, or from the bottom; never upward and never in a circle
(tests/unit/package/test_layout.py).

- bottom: ``errors``, ``resources``, ``jsonfile``, ``policy``, ``clock``, ``workdir_files``, ``stop_reasons``
  (typed errors and exit codes, shipped files, schema-checked atomic JSON, the loop bounds, UTC ``...Z`` times,
  the names of a trial's workdir, why a trial stopped).
- floor 1: ``transcript/`` (reading the session's JSONL and the four-state classifier) and ``closure/`` (plugin
  manifests, the dependency union, the behaviour-closure digest).
- floor 2: ``session/`` (the real CLI in tmux: the only tmux caller, the screen's markers, boot, send) and
  ``rehearsal/`` (the scripted model server and the scenario language).
- floor 3: ``judge/`` (the fresh evaluator and the rules its evidence must meet) and ``tape/`` (a real trial's
  model traffic recorded through a proxy, and replayed from the tape as a rehearsal).
- floor 4: ``acceptance/`` (tier, the overall verdict table, verdict.json, plan and reuse) and ``doctor/`` (the
  rehearsal probe of an installed CLI: does it still show and write what the harness relies on).
- floor 5: ``notices/`` (watches, plain-language messages, the webhook).
- floor 6: ``trial/`` (one whole trial: workdir, runner, poll, the STALL table, collect, resume, the finishing
  sequence).
- floor 7: ``report/`` (reading past trials: the page of one trial, the list, the summary and next step).
- floor 8: ``delivery/`` (the first artifact delivered to a person, their choice, the diff ticket and the
  improvement loop's ledger; seed 001 artifact_delivery).
- floor 9: ``cli/`` (arguments, printing, exit codes); then ``pytest_plugin`` (fixtures for test suites).

The data that travels from stage to stage is typed, each loaded and saved in one place:

- ``TrialRequest`` (``trial/facts.py``): what ``run`` was asked to do; ``TrialState`` (``trial/state.py``): the
  trial's ``trial-state.json``, what a resume continues from; the steps of ``trial/`` are given a ``TrialContext``
  (``trial/context.py``), the parts of the running trial they read and change.
- ``Observation`` (``trial/observation.py``): one tick's look at the session (screen, transcript tail and its
  classification, the CLI's status file, background work, the marker); ``PollState`` (``trial/poll_state.py``):
  ``poll-state.json``, carried across ticks and calls; the pure ``poll_rules.decide(Observation, PollState, Policy,
  now)`` gives the next exit (DONE, GATE, STALL, HARD_CAP, TICK_BUDGET) or none.
- ``Facts`` (``trial/facts.py``): what the trial established step by step (launch, completion, the stop reason, the
  goal from the evaluator), saved inside ``TrialState``; ``Findings`` (``acceptance/findings.py``) the same as the
  verdict reads them back.
- ``VerdictFacts`` (``acceptance/verdict_facts.py``): the workdir read once (transcripts, evaluation.json, the
  closure and versions recorded at start); the pure ``derive_verdict(VerdictFacts, Findings)`` gives the
  ``Verdict`` (``acceptance/verdict_doc.py``), whose ``to_doc()`` is verdict.json. ``run``, ``run --resume`` and
  ``verdict`` derive it the same way.
"""
from __future__ import annotations

__version__ = "0.1.0"
#: The Claude Code CLI range the harness is verified on (README "Set-up", references/transcript-jsonl.md "Supported
#: CLI versions"). The oldest is the first release every screen marker and record rule was observed on; the newest
#: is the newest release the whole suite ran green on. ``claude-pin/`` installs the newest as the default and the
#: oldest beside it (``claude-pin/oldest/``) for the version matrix of ``.ci/run``.
OLDEST_CLAUDE_VERSION = "2.1.197"
NEWEST_VERIFIED_CLAUDE_VERSION = "2.1.332"
#: What ``make setup`` installs into ``./claude-pin`` (the default CLI of ``make demo`` and ``make test``).
PINNED_CLAUDE_VERSION = NEWEST_VERIFIED_CLAUDE_VERSION
