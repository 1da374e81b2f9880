#!/bin/sh
# Refuses a Write outside the folder the session works in, as a plugin guarding a project would. With a file
# allow-marker beside it, it lets through the harness's completion marker the session's LIVE_TRIAL_MARKER names.
p=$(python3 -c 'import json, sys; print(json.load(sys.stdin).get("tool_input", {}).get("file_path", ""))')
case "$p" in
  "$PWD"/*) exit 0 ;;
esac
if [ -e "$(dirname "$0")/allow-marker" ] && [ -n "$LIVE_TRIAL_MARKER" ] && [ "$p" = "$LIVE_TRIAL_MARKER" ]; then
  exit 0
fi
echo "guard: refusing to write outside the project: $p" >&2
exit 2
