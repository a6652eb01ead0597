#!/usr/bin/env bash
# Session 18, device call 7 (H200): the wide scan's ring with as many slots
# as fit (-DSW_RING_MAX=1: the recurrence 7 slots, the i64 scan 13) with the
# default lags and a lag of 4; also LOOKBACK 64 and the register kernel
# (GPUC_SCAN_WIDE=0) over the new default, at 2^26 and 2^28.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
OUT=$R/tv timeout 200 bash bench/try_variants.sh > $R/tv.txt 2>&1; echo "rc=$?"
cat $R/tv.txt
date +%T
