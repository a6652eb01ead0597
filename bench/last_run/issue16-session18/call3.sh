#!/usr/bin/env bash
# Session 18, device call 3 (H200): SCAN BULK 3 WIDE's ring, swept (call 2:
# a lag of 3 tiles took the recurrence at 2^28 from 0.809 to 0.837 of the
# copy rate): lag 3; tiles of 2048 items in 12 slots with lags 4 and 6;
# 4 look-back warps with those; lag 3 with 3 look-back warps. Each gpuc is
# built with -DSW_LAG_TILES / -DSW_TILE_ITEMS / -DSS_LOOKBACK_WARPS.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
OUT=$R/tv timeout 420 bash bench/try_variants.sh > $R/tv.txt 2>&1; echo "rc=$?"
cat $R/tv.txt
date +%T
