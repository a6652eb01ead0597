#!/usr/bin/env bash
# sanitize.sh: compute-sanitizer over every kernel kind of gpuc and every
# variant its launchers pick, on the device machine, from the repository root
# after tests/gpu/prepare.sh filled .device/ on the build machine.
#
#   bash tests/gpu/sanitize.sh              build, then run every case
#   SANITIZE_DRY=1 bash tests/gpu/sanitize.sh   build everything, list the runs
#
# The programs are the entries of tests/gpu/sanitize.gdsl; the CASES table
# below gives each the input shapes that reach its variants (tile edges,
# several blocks, each row kernel). Two paths:
#   exe  the executable `gpuc -o` builds (the runtime, kernels compiled by
#        NVRTC): all shapes of an entry in one process (`--batch`);
#   cuh  the --emit=cuda file compiled by nvcc with -DGPUC_MAIN (the CUDA
#        runtime API launchers): one process per shape, for the scan,
#        filter and row cases.
# Each (case, path, tool) is one run: `compute-sanitizer --tool memcheck`,
# `racecheck`, `synccheck`, and `initcheck` for the cases marked so; one
# memcheck run with `--leak-check full`. Sharded entries run with
# `--ranks 1` (NCCL: $GPUC_NCCL_LIBRARY, libnccl.so.2 or PyTorch's wheel).
# A run passes when the sanitizer reports no error (exit status 97 is an
# error: --error-exitcode) and every input gives the exit status expected
# (0; 1 for the out-of-bounds gather case, whose bounds check must report
# the index, not fault). One line per run, then "N passed, N failed"; exit
# status 1 when any failed. Logs in $OUT (default /tmp/gpuc-sanitize).
#
# Variables: GPUC (default .device/prefix/bin/gpuc), GPUC_DEVICE_ARCH
# (sm_90), COMPUTE_SANITIZER (the command; default compute-sanitizer),
# SANITIZE_ONLY (a grep -E pattern over "case path tool": run those only).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/gpuc-sanitize}
mkdir -p "$out/in"
dev=$root/.device
gpuc=${GPUC:-$dev/prefix/bin/gpuc}
[ -d "$dev/prefix" ] && export GPUC_HOME=${GPUC_HOME:-$dev/prefix} GPUC_CACHE_DIR=${GPUC_CACHE_DIR:-$dev/cache}
arch=${GPUC_DEVICE_ARCH:-sm_90}
cs=${COMPUTE_SANITIZER:-compute-sanitizer}
dry=${SANITIZE_DRY:-0}
src=$root/tests/gpu/sanitize.gdsl
export PATH=$PATH:${GPUC_CUDA_HOME:-/usr/local/cuda}/bin

# CASES: NAME ENTRY FLAGS SHAPES...
#   FLAGS: letters; h: also the cuh path, i: also initcheck, l: the memcheck
#          run with --leak-check full, s: --ranks 1 (sharded), e1: every
#          input must fail with exit status 1 (an index error), - none
#   SHAPES: one per input, `;` between the arguments of one input:
#     TYPE:DIMS[:LO:HI]  an array of random values (DIMS `70001` or `3x4097`;
#                        floats in [LO, HI], default [-1, 1]; integers in
#                        [LO, HI), default [-1000, 1000), unsigned [0, 1000))
#     =VALUE             a scalar as written
# Sizes: scan tiles hold 4992 (128 x 39) 4-byte items, 2944 wider; filter
# likewise; row kernels (f32): a part of a warp per row up to 512, a warp to
# 1024, the register-only block (NAME_regs) to 8192, the 1024-thread big
# block for 8193..32768 when m % 4 == 0, else the stash kernel; clusters of 8
# blocks past 32768 (LayerNorm: past 8192 when not big), each part in
# registers (NAME_clregs) up to 8 x 8192, else with the stash (NAME_cl); f64
# halves those. Matrix products: 128 x 64 tiles (fast), split k when there
# are few tiles and k >= 256.
CASES=$(cat <<'EOF'
map_saxpy      map_saxpy      il  =2.5;f32:1;f32:1  =2.5;f32:4099;f32:4099  =-1.0;f32:70001;f32:70001
map_bcast      map_bcast      -   f32:3x33;f32:33;f32:3  f32:130x1027;f32:1027;f32:130
map_tuple      map_tuple      -   f64:33;i32:33  f64:70001;i32:70001
red_sum        red_sum        is  f32:1  f32:33  f32:4099  f32:70001
red_fused      red_fused      -   i32:1  i32:4097  i32:70001
red_welford    red_welford    -   f64:2  f64:4097  f64:70001
red_softmax    red_softmax    -   f32:33  f32:70001
red_logsumexp  red_logsumexp  -   f32:1  f32:70001
red_ordered    red_ordered    -   i32:7  i32:4097  i32:70001
scan_incl_f32  scan_incl_f32  hi  f32:1  f32:4992  f32:4993  f32:15000  f32:70001
scan_excl_i32  scan_excl_i32  h   i32:1  i32:4993  i32:70001
scan_first     scan_first     h   i32:33  i32:4993  i32:70001
scan_incl_i64  scan_incl_i64  h   i64:1  i64:2945  i64:70001
scan_excl_u64  scan_excl_u64  h   u64:2945  u64:70001
scan_tuple     scan_tuple     h   f32:33;f32:33  f32:2945;f32:2945  f32:70001;f32:70001
scan_tuple_ex  scan_tuple_ex  h   f32:2945;f32:2945  f32:70001;f32:70001
scan_sharded   scan_incl_f32  s   f32:4993  f32:70001
filter_pos     filter_pos     hi  f32:1  f32:4993  f32:70001
filter_zip     filter_zip     h   i32:33  i32:70001
filter_sum     filter_sum     h   f64:4993:0:1  f64:70001:0:1
row_sum        row_sum        h   f32:9x7  f32:5x33  f32:3x1025  f32:2x40001
row_argmax     row_argmax     h   f64:9x7  f64:3x257  f64:3x4097
row_softmax    row_softmax    hi  f32:9x7  f32:5x33  f32:3x1000  f32:3x4097  f32:2x16384  f32:2x16383  f32:2x40000  f32:2x70001
row_softmax_f64 row_softmax_f64 h f64:5x33  f64:3x4095  f64:2x8192  f64:2x8191  f64:2x20000  f64:2x40001
row_layernorm  row_layernorm  h   f32:5x33;f32:33;f32:33  f32:3x4097;f32:4097;f32:4097  f32:2x16384;f32:16384;f32:16384  f32:2x16385;f32:16385;f32:16385  f32:2x70001;f32:70001;f32:70001
row_xent       row_xent       h   f32:9x33;i64:9:0:33  f32:3x4097;i64:3:0:4097  f32:2x40001;i64:2:0:40001
row_xent_oob   row_xent       e1  f32:3x33;i64:3:33:40  f32:2x40001;i64:2:-9:-1
col_sum        col_sum        -   f32:1000x33  f32:33x4097
col_argmin     col_argmin     -   f64:7x5  f64:300x257
scatter_perm   scatter_perm   -   f32:33  f32:70001
scatter_idx    scatter_idx    -   f64:1000;i32:4097:0:1000;f64:4097
mm_f32         mm_f32         i   f32:1x1;f32:1x1  f32:65x6;f32:6x129  f32:200x300;f32:300x170  f32:3x1000;f32:1000x5
mm_f64         mm_f64         -   f64:1x1;f64:1x1  f64:65x7;f64:7x129  f64:200x300;f64:300x170  f64:65x777;f64:777x33
mm_f64_t16     mm_f64_t16     -   f64:17x33;f64:33x15  f64:100x40;f64:40x70
mm_i32         mm_i32         -   i32:33x65;i32:65x31  i32:100x40;i32:40x70
row_sharded    row_softmax    s   f32:5x33  f32:3x4097
map_sharded    map_saxpy      s   =2.5;f32:4099;f32:4099
EOF
)

# text of one argument: arg TYPE:DIMS[:LO:HI] SEED
arg() {
  local spec=$1 seed=$2
  case $spec in =*) printf '%s\n' "${spec#=}"; return ;; esac
  local IFS=:; set -- $spec; unset IFS
  local ty=$1 dims=$2 lo=${3:-} hi=${4:-}
  local rows=0 cols=${dims#*x}
  [ "$dims" != "$cols" ] && rows=${dims%x*}
  if [ -z "$lo" ]; then
    case $ty in f*) lo=-1 hi=1 ;; u*) lo=0 hi=1000 ;; *) lo=-1000 hi=1000 ;; esac
  fi
  awk -v ty="$ty" -v rows="$rows" -v cols="$cols" -v lo="$lo" -v hi="$hi" -v seed="$seed" 'BEGIN {
    srand(seed); float = substr(ty, 1, 1) == "f"
    nr = rows ? rows : 1
    if (rows) printf "["
    for (r = 0; r < nr; r++) {
      printf "%s[", r ? ", " : ""
      for (i = 0; i < cols; i++) {
        v = float ? sprintf("%.6g", lo + (hi - lo) * rand()) : sprintf("%d", lo + int((hi - lo) * rand()))
        printf "%s%s", i ? ", " : "", v
      }
      printf "]"
    }
    if (rows) printf "]"
    printf "\n"
  }'
}

passed=0 failed=0
report() {   # report OK LINE LOG
  if [ "$1" = 1 ]; then passed=$((passed + 1)); echo "PASS $2"
  else failed=$((failed + 1)); echo "FAIL $2 (log $3)"; tail -n 25 "$3" | sed 's/^/    /'; fi
}

# ---- build: the executable (NVRTC) and the nvcc build of the --emit=cuda file
t0=$SECONDS
echo "sanitize: gpuc $gpuc, arch $arch, logs $out"
build_ok=1
"$gpuc" --arch="$arch" "$src" -o "$out/prog" > "$out/build_exe.log" 2>&1 || build_ok=0
report $build_ok "build exe ($((SECONDS - t0)) s)" "$out/build_exe.log"
t1=$SECONDS
"$gpuc" --emit=cuda "$src" -o "$out/sanitize.cuh" > "$out/build_cuh.log" 2>&1 &&
  nvcc -std=c++17 -arch="$arch" -DGPUC_MAIN -x cu "$out/sanitize.cuh" -o "$out/cuh" >> "$out/build_cuh.log" 2>&1 || build_ok=0
report $build_ok "build cuh with nvcc ($((SECONDS - t1)) s)" "$out/build_cuh.log"
[ "$build_ok" = 1 ] || { echo "$passed passed, $failed failed"; exit 1; }

# NCCL for the --ranks 1 cases (as tests/gpu/ranks_gpu.sh finds it)
if [ -z "${GPUC_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 '; then
  w=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
  [ -n "$w" ] && [ -f "$w" ] && export GPUC_NCCL_LIBRARY=$w
fi

# ---- inputs: one text file per case and shape
declare -a names entries flags shapes
nc=0
while read -r name entry flag rest; do
  [ -z "$name" ] && continue
  names[nc]=$name entries[nc]=$entry flags[nc]=$flag shapes[nc]=$rest
  si=0
  for shape in $rest; do
    f=$out/in/$name.$si.txt
    : > "$f"
    ai=0
    IFS=';' read -r -a parts <<< "$shape"
    for p in "${parts[@]}"; do arg "$p" $((nc * 1000 + si * 10 + ai + 1)) >> "$f"; ai=$((ai + 1)); done
    si=$((si + 1))
  done
  nc=$((nc + 1))
done <<< "$CASES"

# sanitize LOG CMD...: the sanitizer around CMD; 0 when it reported nothing
sanitize() {
  local log=$1; shift
  "$cs" --error-exitcode 97 --print-limit 10 "$@" > "$log" 2>&1
}

# one exe run: all shapes of case c in one --batch process
run_exe() {   # run_exe C TOOL EXTRA...
  local c=$1 tool=$2; shift 2
  local name=${names[c]} want=0 opts=$'\t--backend\tcuda'
  [[ ${flags[c]} == *e1* ]] && want=1
  [[ ${flags[c]} == *s* ]] && opts+=$'\t--ranks\t1'

  local list=$out/$name.exe.$tool.batch log=$out/$name.exe.$tool${1:+.leak}.log
  : > "$list"
  local si=0 shape
  for shape in ${shapes[c]}; do
    printf '%s\t%s\t%s\t%s\t-e\t%s%s\n' "$si" "$out/in/$name.$si.txt" /dev/null \
      "$out/$name.exe.$si.err" "${entries[c]}" "$opts" >> "$list"
    si=$((si + 1))
  done
  local line="$name exe $tool$([ $# -gt 0 ] && echo ' leak-check') (${shapes[c]// /, })"
  if [ "$dry" = 1 ]; then echo "RUN  $line"; return; fi
  local t=$SECONDS ok=1
  sanitize "$log" --tool "$tool" "$@" "$out/prog" --batch "$list" || ok=0
  # every shape ran and exited as expected (the status lines are in the log)
  local st
  for ((si = 0; si < $(wc -w <<< "${shapes[c]}"); si++)); do
    st=$(awk -F'\t' -v id="$si" '$1 == id && NF == 2 { print $2 }' "$log" | tail -n 1)
    if [ "$st" != "$want" ]; then ok=0; echo "shape $si: exit status '${st:-none}', expected $want" >> "$log"; cat "$out/$name.exe.$si.err" >> "$log" 2>/dev/null; fi
  done
  report $ok "$line ($((SECONDS - t)) s)" "$log"
}

# cuh runs: one process per shape
run_cuh() {   # run_cuh C TOOL
  local c=$1 tool=$2 name=${names[c]}
  local line="$name cuh $tool (${shapes[c]// /, })"
  if [ "$dry" = 1 ]; then echo "RUN  $line"; return; fi
  local t=$SECONDS ok=1 si=0 shape log=$out/$name.cuh.$tool.log
  : > "$log"
  for shape in ${shapes[c]}; do
    sanitize "$log.$si" --tool "$tool" "$out/cuh" -e "${entries[c]}" < "$out/in/$name.$si.txt" || {
      ok=0; echo "shape $si ($shape): exit status $?" >> "$log"; }
    cat "$log.$si" >> "$log"; rm -f "$log.$si"
    si=$((si + 1))
  done
  report $ok "$line ($((SECONDS - t)) s)" "$log"
}

for ((c = 0; c < nc; c++)); do
  tools=(memcheck racecheck synccheck)
  [[ ${flags[c]} == *i* ]] && tools+=(initcheck)
  for tool in "${tools[@]}"; do
    if [ -z "${SANITIZE_ONLY:-}" ] || grep -qE "$SANITIZE_ONLY" <<< "${names[c]} exe $tool"; then
      run_exe "$c" "$tool"
    fi
  done
  if [[ ${flags[c]} == *l* ]] && { [ -z "${SANITIZE_ONLY:-}" ] || grep -qE "$SANITIZE_ONLY" <<< "${names[c]} exe leak"; }; then
    run_exe "$c" memcheck --leak-check full
  fi
  if [[ ${flags[c]} == *h* ]]; then
    for tool in "${tools[@]}"; do
      if [ -z "${SANITIZE_ONLY:-}" ] || grep -qE "$SANITIZE_ONLY" <<< "${names[c]} cuh $tool"; then
        run_cuh "$c" "$tool"
      fi
    done
  fi
done
echo "sanitize: $((SECONDS - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
