"""``delivery`` and ``ticket``: the first artifact's delivery to a person and the improvement loop (seed 001
``artifact_delivery``; README "Use it from Claude Code").

  live-trial delivery record WORKDIR --event EVENT [--choice C] [--lang L]   one state change (delivery.json)
  live-trial delivery round WORKDIR --trial NEW                              close the open round with a new trial
  live-trial delivery show WORKDIR [--json]                                  the state, the choice, the rounds
  live-trial ticket WORKDIR [--lang L]                                       the diff ticket of the next round

Exit codes: 0 done, 2 refused (an event the state does not allow, a guard that fails, a step before the person's
choice, a round past the bound; nothing changed), 64 usage.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from live_trial.errors import ExitCode
from live_trial.notices.catalogue import LANGS

EVENTS = ("minimum_guard_pass", "present_actual_artifact", "record_user_choice", "accept-as-is", "light",
          "standard", "detailed", "improvement_complete")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``delivery`` and ``ticket``."""
    p = sub.add_parser("delivery", help="the first artifact's delivery to a person: record a state change, a round",
                       description="Seed 001 artifact_delivery: artifact_created -> minimal_guard_passed -> "
                                   "artifact_presented -> user_choice_recorded -> semantic_evaluator_started | "
                                   "handoff_complete -> handoff_complete. Exit 0 done, 2 refused (nothing changed).")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    r = verbs.add_parser("record", help="record one event; the harness checks what it needs first")
    r.add_argument("workdir", type=Path)
    r.add_argument("--event", required=True, choices=EVENTS)
    r.add_argument("--choice", help="with record_user_choice: accept-as-is, light, standard or detailed")
    r.add_argument("--lang", choices=LANGS, help="the person's language (default: the trial's, LIVE_TRIAL_LANG, ja)")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=cmd_record)
    o = verbs.add_parser("round", help="close the open round with the new trial of the same case")
    o.add_argument("workdir", type=Path, help="the first trial's workdir (holds improvement.json)")
    o.add_argument("--trial", type=Path, required=True, help="the new trial's workdir (judged, verdict written)")
    o.add_argument("--json", action="store_true")
    o.set_defaults(func=cmd_round)
    s = verbs.add_parser("show", help="the delivery's state, choice and rounds")
    s.add_argument("workdir", type=Path)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)

    t = sub.add_parser("ticket", help="write the diff ticket of the next improvement round (after the choice)",
                       description="Write <workdir>/ticket-<n>.md from the last judged verdict's blockers, criteria "
                                   "and evidence (seed 002 diff ticket: what is missing, the original intent, what "
                                   "already works, what to add), in the person's language, and open round n in "
                                   "improvement.json. Exit 0 written, 2 refused (before the choice, a round open, "
                                   "after a PASS, past the bound; nothing written).")
    t.add_argument("workdir", type=Path, help="the first trial's workdir of the delivery")
    t.add_argument("--lang", choices=LANGS, help="the person's language (default: the delivery's)")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=cmd_ticket)


def cmd_record(args) -> int:
    """Handler of ``delivery record``."""
    from live_trial.delivery.steps import record

    done = record(args.workdir, args.event, choice=args.choice, lang=args.lang)
    history = done.delivery.doc["history"][-1]
    if args.json:
        print(json.dumps({"status": "RECORDED", "from": history["from"], "event": history["event"],
                          "state": done.delivery.state, "lines": done.lines}, ensure_ascii=False))
        return ExitCode.OK
    print(f"RECORDED: {history['from']} -> {done.delivery.state} ({history['event']})")
    for line in done.lines:
        print(line)
    return ExitCode.OK


def cmd_round(args) -> int:
    """Handler of ``delivery round``."""
    from live_trial.delivery.rounds import close_round

    ledger = close_round(args.workdir, args.trial)
    last = ledger.last
    if args.json:
        print(json.dumps({"status": "ROUND", "round": last}, ensure_ascii=False))
        return ExitCode.OK
    trial = last["trial"]
    print(f"ROUND: {last['n']} of at most {ledger.doc['max_rounds']} closed: {trial['overall']} "
          f"({trial['workdir']})")
    print(f"CHANGED: {len(last['changed'])} file(s)" + "".join(f"\n  {c['path']}: {c['before']} -> {c['after']}"
                                                             for c in last["changed"]))
    if not last["changed"]:     # the ticket asked for a change of the skill: a round without one tried it again as is
        print("WARN: no file of the skill changed since the ticket: this round tried the same skill again",
              file=sys.stderr)
    for reason in trial["reasons"]:
        print(f"  reason: {reason}")
    return ExitCode.OK


def cmd_show(args) -> int:
    """Handler of ``delivery show``."""
    from live_trial.acceptance import delivery_state as ds
    from live_trial.delivery import ledger as book
    from live_trial.delivery.steps import delivery_of

    if ds.under_contract(args.workdir.resolve()) and ds.load(args.workdir.resolve()) is None:
        if args.json:       # prepared for a delivery, no verdict yet: where it is, not a refusal
            print(json.dumps({"status": "DELIVERY", "delivery": None, "improvement": None}))
        else:
            print("DELIVERY: not started (the first `verdict` after collect makes the first artifact)")
        return ExitCode.OK
    delivery = delivery_of(args.workdir.resolve())
    ledger = book.load(args.workdir.resolve())
    if args.json:
        print(json.dumps({"status": "DELIVERY", "delivery": delivery.doc,
                          "improvement": ledger.doc if ledger else None}, ensure_ascii=False))
        return ExitCode.OK
    print(f"DELIVERY: {delivery.state} (choice {delivery.choice or '-'})")
    for r in ledger.rounds if ledger else []:
        trial = r["trial"]
        print(f"  round {r['n']}: " + (f"{trial['overall']} {trial['workdir']}" if trial else "open"))
    if delivery.doc.get("handoff"):
        print(f"HANDOFF: {delivery.doc['handoff']['message']}")
    return ExitCode.OK


def cmd_ticket(args) -> int:
    """Handler of ``ticket``."""
    from live_trial.delivery.rounds import write_ticket

    ticket = write_ticket(args.workdir, lang=args.lang)
    if args.json:
        print(json.dumps({"status": "TICKET", "round": ticket.n, "max_rounds": ticket.max_rounds,
                          "path": str(ticket.path), "text": ticket.text}, ensure_ascii=False))
        return ExitCode.OK
    print(f"TICKET: round {ticket.n} of at most {ticket.max_rounds}: {ticket.path}")
    print(ticket.text)
    return ExitCode.OK
