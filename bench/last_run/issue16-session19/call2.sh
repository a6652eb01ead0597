#!/usr/bin/env bash
# Session 19, device call 2 (H200): the i64 scan's wide kernel in tiles of
# 4096 items (32 KiB) in 7 slots with a lag of 3 or 2, 13 slots of 2048, and
# emit_scan's kernel, against the default (2048 items, 12 slots, lag 6):
# bench/try_variants.sh (default, variants, reversed, default).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
OUT=$R/tv timeout 240 bash bench/try_variants.sh > $R/tv.txt 2>&1; echo "rc=$?"
tail -n 16 $R/tv.txt
date +%T
