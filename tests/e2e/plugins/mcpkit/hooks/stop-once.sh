#!/bin/sh
# The first Stop is refused (exit 2: the CLI hands the reason to the model as the turn's new input); every later one
# lets the session end. The flag lives beside the plugin (the e2e tests copy the plugin for each trial).
flag="$(dirname "$0")/../stop-refused-once"
if [ ! -e "$flag" ]; then
  : > "$flag"
  echo "report the echo's answer before you stop" >&2
  exit 2
fi
exit 0
