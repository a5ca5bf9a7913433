#!/usr/bin/env python3
"""An approver for `cottonbox run --ask exec:docs/examples/approver.py`.

cottonbox runs it once per ask, with the ask on standard input as one JSON
line (the `ask` message of docs/protocol.md, including `why`), and reads one
line from standard output: allow, deny, allow-tree or deny-tree, then an
optional reason.  Anything else, a crash, a non-zero exit status or no answer
before the deadline is a denial.  See docs/approvers.md.

This one is a small rule book: it allows changes to build output, refuses
anything under a .git directory, and refuses the rest with the
rule that asked.  Put a chat bot, a ticket system or an LLM where `decide` is.
"""
import json
import os
import sys

# Directories whose contents a build makes again.
DISPOSABLE = {"build", "dist", "node_modules", "__pycache__", "target"}


def decide(ask):
    event = ask["event"]
    path = event.get("path", "")
    parts = path.split("/")
    rule = (ask.get("rule") or {}).get("id") or "the default"
    if ".git" in parts:
        return "deny", "the repository's history is not the agent's to change"
    if DISPOSABLE & set(parts):
        # Once: allow-tree would allow every later request of this kind by
        # the same process tree, wherever it points.
        return "allow", "build output is disposable"
    why = ask.get("why") or {}
    shown = [c["detail"] for c in why.get("checks", []) if c.get("held")]
    return "deny", "nobody approved %s %s (rule %s: %s)" % (
        event.get("action"), path, rule, "; ".join(shown) or "no detail")


def main():
    ask = json.loads(sys.stdin.readline())
    answer, reason = decide(ask)
    # A log of what was asked and answered, beside the approver.
    log = os.environ.get("COTTONBOX_APPROVER_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"ask_id": ask["ask_id"], "path": ask["event"]["path"],
                                "answer": answer, "reason": reason}) + "\n")
    print(answer, reason)


if __name__ == "__main__":
    main()
