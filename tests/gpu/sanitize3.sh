#!/usr/bin/env bash
# sanitize3.sh PROGRAM ARGS...: what tests/gpu/check.sh puts before every
# program gpuc test runs ($GPUC_TEST_WRAP). Runs the program under
# compute-sanitizer memcheck, racecheck and synccheck in turn, each with the
# same standard input, then once plainly so that gpuc test checks its results
# as usual. A sanitizer report ends it with status 97 and the report on
# stderr; the program's own failures (expected errors) pass through.
set -u
in=$(mktemp)
cat > "$in"
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
