#!/usr/bin/env bash
# sanitize3.sh PROGRAM ARGS...: what tests/gpu/check.sh puts before every
# program gpuc test runs ($GPUC_TEST_WRAP). Runs the program under
# compute-sanitizer memcheck, racecheck and synccheck in turn, each with the
# same standard input, then once plainly so that gpuc test checks its results
# as usual. A sanitizer report ends it with status 97 and the report on
# stderr; the program's own failures (expected errors) pass through.
# With SANITIZE_ONCE_DIR set, only the first run of each program and entry
# is sanitized (the kernels are the same for every block of an entry).
set -u
in=$(mktemp)
cat > "$in"
if [ -n "${SANITIZE_ONCE_DIR:-}" ]; then
  entry=""; prev=""
  for a in "$@"; do [ "$prev" = "-e" ] && entry=$a; prev=$a; done
  key=$(printf '%s %s' "$1" "$entry" | md5sum | cut -c1-16)
  if [ -e "$SANITIZE_ONCE_DIR/$key" ]; then
    "$@" < "$in"; st=$?; rm -f "$in"; exit $st
  fi
  mkdir -p "$SANITIZE_ONCE_DIR" && echo "$1 -e $entry" > "$SANITIZE_ONCE_DIR/$key"
fi
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool "$tool" --error-exitcode 97 --print-limit 5 "$@" < "$in" > /dev/null 2> "$in.err"
  if [ $? -eq 97 ]; then
    echo "compute-sanitizer --tool $tool reported errors:" >&2
    tail -n 40 "$in.err" >&2
    rm -f "$in" "$in.err"
    exit 97
  fi
done
"$@" < "$in"
st=$?
rm -f "$in" "$in.err"
exit $st
