#!/bin/sh
# Left without its executable bit on purpose: the CLI runs the command as it is, and /bin/sh cannot execute it.
exit 0
