#!/usr/bin/env python3
"""A stdio MCP server written by hand (newline-delimited JSON-RPC 2.0): one tool, ``echo``, that answers
``echo: <text>``. With ``--exit-at-start`` it writes one line to stderr and exits 3 before reading anything, as a
server whose service is unreachable does."""
import json
import sys

if "--exit-at-start" in sys.argv:
    sys.stderr.write("echo_server: the service it stands for cannot be reached\n")
    sys.exit(3)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    rid, method = request.get("id"), request.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request.get("params", {}).get("protocolVersion", "2024-11-05"),
            "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "0.1.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{
            "name": "echo", "description": "Answer the text back",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}]}})
    elif method == "tools/call":
        text = request.get("params", {}).get("arguments", {}).get("text", "")
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": f"echo: {text}"}]}})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}})
