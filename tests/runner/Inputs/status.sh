#!/bin/sh
# Run a command and report its exit status on stderr, so a test can check
# the exact status (1 for bad input) rather than just "non-zero".
"$@"
echo "exit: $?" >&2
