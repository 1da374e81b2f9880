"""What the CLI varies between two runs of one trial is taken out before a request is hashed (references/transcript-
jsonl.md "Two runs of one trial, request by request").

``requests/`` holds the first request of the session of ``trialkit:mark``, as claude 2.1.197 and 2.1.332 sent it in
two trials: recorded (``run --record`` conditions: a person's config, the quiet variables) and replayed (a rehearsal's
isolated config), and once in a git work tree. Their paths, ids and dates differ; normalized, each pair is one request.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from live_trial.tape.normalize import REDACTED, Roots, canonical, last_message, normalize, slug

HERE = Path(__file__).parent / "requests"
MANIFEST = json.loads((HERE / "requests.json").read_text())


def load(name: str) -> tuple[dict, Roots]:
    m = MANIFEST[name]
    body = json.loads(gzip.decompress((HERE / m["file"]).read_bytes()))
    return body, Roots.of(workdir=m["workdir"], folder=m["folder"], config=m["config"], plugins=m["plugins"],
                          home=m["home"])


@pytest.mark.parametrize("cli", ["cli197", "cli332"])
def test_a_recorded_and_a_replayed_request_of_one_trial_normalize_to_one_hash(cli: str) -> None:
    (a, ra), (b, rb) = load(f"{cli}-recorded"), load(f"{cli}-replayed")
    assert canonical(a) != canonical(b)
    na, nb = normalize(a, ra), normalize(b, rb)
    assert na.sha256 == nb.sha256 and na.last_sha256 == nb.last_sha256
    text = canonical(na.body)
    for m in (MANIFEST[f"{cli}-recorded"], MANIFEST[f"{cli}-replayed"]):
        assert m["workdir"] not in text and m["config"] not in text and slug(m["workdir"]) not in text
    assert "<workdir>" in text and "<config>" in text and "<folder-slug>" in text and "<session_id>" in text
    # each placeholder keeps what it stood for: a replay puts this run's value where the recording had its own
    assert na.bindings["<workdir>"] == MANIFEST[f"{cli}-recorded"]["workdir"]
    assert nb.bindings["<workdir>"] == MANIFEST[f"{cli}-replayed"]["workdir"]
    assert na.bindings["<device_id>"] != nb.bindings["<device_id>"]


@pytest.mark.parametrize("cli", ["cli197", "cli332"])
def test_the_git_status_block_of_another_checkout_is_the_same_request(cli: str) -> None:
    body, roots = load(f"{cli}-git")
    text = json.dumps(body)
    assert "412cad8 first commit" in text and "Current branch: main" in text
    other = json.loads(text.replace("412cad8 first commit", "9f0e1d2 the commit CI checked out\\n5b6c7d8 first")
                       .replace("Current branch: main", "Current branch: HEAD"))
    assert normalize(body, roots).sha256 == normalize(other, roots).sha256
    assert "first commit" not in canonical(normalize(body, roots).body)


def test_a_changed_tool_result_changes_the_hash_and_the_last_message() -> None:
    body, roots = load("cli332-replayed")
    turn = {**body, "messages": [*body["messages"],
                                 {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                                                    "name": "Bash", "input": {"command": "x"}}]},
                                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                               "content": "items: 3"}]}]}
    changed = json.loads(json.dumps(turn).replace("items: 3", "items: 4"))
    a, b = normalize(turn, roots), normalize(changed, roots)
    assert a.sha256 != b.sha256 and a.last_sha256 != b.last_sha256


@pytest.mark.parametrize("cli", ["cli197", "cli332"])
def test_the_last_message_is_the_task_not_the_system_message_the_cli_ends_its_first_request_with(cli: str) -> None:
    """Both releases end a conversation's first request with a ``{"role": "system"}`` message of their own (2.1.197
    its agent listing, 2.1.332 its environment), the same for any task: the last message compared is the task's."""
    body, roots = load(f"{cli}-recorded")
    assert body["messages"][-1]["role"] == "system" and last_message(body) is body["messages"][-2]
    other = json.loads(json.dumps(body).replace('args: \\"\\"', 'args: \\"Bob\\"'))
    assert canonical(other) != canonical(body) and other["messages"][-1] == body["messages"][-1]
    assert normalize(body, roots).last_sha256 != normalize(other, roots).last_sha256


def test_uuids_dates_paste_ids_and_the_os_version_are_numbered_placeholders() -> None:
    body = {"metadata": {"user_id": json.dumps({"device_id": "d" * 64, "account_uuid": "",
                                                "session_id": "11111111-2222-4333-8444-555555555555"})},
            "system": [{"type": "text", "text": " - OS Version: Linux 6.18.44-fc-v1272\nToday's date is 2026-12-05."}],
            "messages": [{"role": "user", "content": '<pasted_content id="4a44">x</pasted_content id="4a44">\n'
                          "- aaaaaaaa-0000-4000-8000-000000000001 | user\n"
                          "- bbbbbbbb-0000-4000-8000-000000000002 | assistant\n"
                          "- aaaaaaaa-0000-4000-8000-000000000001 again; 11111111-2222-4333-8444-555555555555"}]}
    n = normalize(body, Roots.of())
    text = n.body["messages"][0]["content"]
    assert text == ('<pasted_content id="<paste-id:1>">x</pasted_content id="<paste-id:1>">\n- <uuid:1> | user\n'
                    "- <uuid:2> | assistant\n- <uuid:1> again; <session_id>")
    assert n.body["system"][0]["text"] == " - OS Version: <os version>\nToday's date is <date:1>."
    assert json.loads(n.body["metadata"]["user_id"]) == {"device_id": "<device_id>", "account_uuid": "",
                                                         "session_id": "<session_id>"}
    assert n.bindings["<uuid:2>"] == "bbbbbbbb-0000-4000-8000-000000000002" and n.bindings["<date:1>"] == "2026-12-05"


def test_a_path_is_taken_out_only_where_it_ends_a_path_component() -> None:
    n = normalize({"messages": [{"role": "user", "content": "/root/x /rootfs/y /root"}]}, Roots.of(home="/root"))
    assert n.body["messages"][0]["content"] == "<home>/x /rootfs/y <home>"


def test_a_credential_never_reaches_the_normalized_request() -> None:
    key = "sk-ant-api03-" + "k" * 80 + "AA"
    n = normalize({"messages": [{"role": "user", "content": f"the key is {key} and tok-123456789"}]}, Roots.of(),
                  secrets=("Bearer tok-123456789",))
    assert n.body["messages"][0]["content"] == f"the key is {REDACTED} and {REDACTED}"
    assert key not in canonical(n.body)
