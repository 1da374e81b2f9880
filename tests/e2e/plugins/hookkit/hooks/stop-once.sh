#!/bin/sh
# The CLI runs this at each Stop: it leaves one line beside the plugin, so a test can see the quoted command ran.
date -u +%Y-%m-%dT%H:%M:%SZ >> "$(dirname "$0")/../hook-ran.log"
exit 0
