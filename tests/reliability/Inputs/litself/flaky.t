RUN: test -e "$FLAKY_MARKER" || { touch "$FLAKY_MARKER"; false; }
