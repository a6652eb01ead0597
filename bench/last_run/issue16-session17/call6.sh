#!/usr/bin/env bash
# Session 17, device call 6 (H200, no GPU work): call 5's ncu reports
# (carried in .pack/ncu/) exported per SASS instruction with their warp-stall
# samples (the CUDA source page of call 5 carried no metrics).
set -u
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
for k in recurrence incl_i64; do
  ncu --import .pack/ncu/$k.ncu-rep --page source --print-source sass --csv > $OUT/${k}_sass.csv 2> $OUT/${k}_sass.err; echo "$k sass: $? $(wc -l < $OUT/${k}_sass.csv)"
  ncu --import .pack/ncu/$k.ncu-rep --page source --print-source cuda,sass --csv > $OUT/${k}_cs.csv 2> $OUT/${k}_cs.err; echo "$k cuda,sass: $? $(wc -l < $OUT/${k}_cs.csv)"
  ncu --import .pack/ncu/$k.ncu-rep --page details --print-details all --csv > $OUT/${k}_details.csv 2>&1; echo "$k details: $?"
done
head -c 1500 $OUT/recurrence_sass.csv
