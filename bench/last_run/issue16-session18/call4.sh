#!/usr/bin/env bash
# Session 18, device call 4 (H200): SCAN BULK 3 WIDE, second sweep (call 3:
# the recurrence best with tiles of 4096 and a lag of 3, 0.833 of the copy
# rate at 2^28; the i64 scan with tiles of 2048 and a lag of 6, 0.873): the
# look-back's backoff (GPUC_BACKOFF_NS 0, 30 against 100), lags 4 and 8,
# at 2^24, 2^26 and 2^28 (where the wide kernel starts to gain).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
OUT=$R/tv timeout 420 bash bench/try_variants.sh > $R/tv.txt 2>&1; echo "rc=$?"
cat $R/tv.txt
date +%T
