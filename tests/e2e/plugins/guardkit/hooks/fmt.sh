#!/bin/sh
# A formatter that knows text files only: any other file written makes it fail (exit 1), as a narrow formatter would.
p=$(python3 -c 'import json, sys; print(json.load(sys.stdin).get("tool_input", {}).get("file_path", ""))')
case "$p" in
  *.txt) exit 0 ;;
esac
echo "fmt: no formatter for $p" >&2
exit 1
