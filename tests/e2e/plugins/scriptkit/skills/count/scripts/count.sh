#!/bin/sh
# The inventory's count: a tape recorded with this output diverges when a change to this script changes it.
echo "items: 3"
