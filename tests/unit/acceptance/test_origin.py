"""workdir_origin: a workdir says by itself whether its model was scripted (README "Planning": rehearsals are never reused)."""
from __future__ import annotations

import json

from live_trial.acceptance.origin import workdir_origin
from live_trial.rehearsal.config import REHEARSAL_MESSAGE_PREFIX
from live_trial.transcript.builder import TranscriptBuilder


def _transcript(wd, message_id: str | None):
    b = TranscriptBuilder(model="claude-opus-4-8")
    b.turn("run", "DONE: ok")
    if message_id:
        for rec in b.records:
            if rec.get("type") == "assistant":
                rec["message"]["id"] = message_id
    b.write(wd / "transcript.jsonl")


def test_a_copied_rehearsal_workdir_without_state_is_still_rehearsal(tmp_path):
    """A new user copied a rehearsal workdir without trial-state.json and claude-config/: plan then reused it."""
    _transcript(tmp_path, REHEARSAL_MESSAGE_PREFIX + "0123456789abcdef0123")
    found = workdir_origin(tmp_path)
    assert found.origin == "rehearsal" and "rehearsal server" in found.why


def test_a_real_models_transcript_stays_live(tmp_path):
    _transcript(tmp_path, "msg_01XFDUDYJgAACzvnptvVoYEL")
    assert workdir_origin(tmp_path).origin == "live"
    (tmp_path / "transcript.jsonl").write_text("not json\n" + json.dumps({"type": "assistant", "message": "x"}) + "\n")
    assert workdir_origin(tmp_path).origin == "live"

