#!/bin/bash
# run line $1 of small.sh, print one summary line
line=$(sed -n "${1}p" small.sh)
out=$(bash -c "$line" 2>&1); rc=$?
echo "rc=$rc :: $(echo "$line" | cut -c1-80) :: $(echo "$out" | grep -v ': ok' | head -3 | tr '\n' ' ')"
