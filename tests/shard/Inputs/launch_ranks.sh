#!/usr/bin/env bash
# launch_ranks.sh [--ompi|--slurm] [--alone] [--extra R ARG] N PROG ARG...: a stand-in for mpirun in
# tests/shard/procs.test. Starts N processes of PROG ARG... meeting at
# 127.0.0.1 on a free port ($GPUC_MASTER_PORT if set): rank R gets
# `--rank R --ranks N`, or with --ompi the variables Open MPI's mpirun sets
# (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK), with --slurm srun's (SLURM_PROCID,
# SLURM_NTASKS, SLURM_LOCALID) and --ranks-from-env. Rank 0 runs in the
# foreground with this script's standard input and output; the others read
# nothing and must write nothing to standard output. Exit status: rank 0's,
# else the first failing rank's. --alone starts rank 0 only (the others
# never come); --extra R ARG gives rank R one more argument (to make it fail
# or disagree).
set -u
mode=flags alone=0 extra_rank=-1 extra=
while :; do
  case "$1" in
    --ompi|--slurm) mode=${1#--}; shift ;;
    --alone) alone=1; shift ;;
    --extra) extra_rank=$2; extra=$3; shift 3 ;;
    *) break ;;
  esac
done
n=$1
shift
export GPUC_MASTER_ADDR=127.0.0.1
export GPUC_MASTER_PORT=${GPUC_MASTER_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
tmp=$(mktemp -d)
rank() {   # rank R: PROG ARG... as rank R
  [ "$r" -eq "$extra_rank" ] && set -- "$@" "$extra"
  case $mode in
    flags) "$@" --rank "$r" --ranks "$n" ;;
    ompi) OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$n OMPI_COMM_WORLD_LOCAL_RANK=$r "$@" ;;
    slurm) SLURM_PROCID=$r SLURM_NTASKS=$n SLURM_LOCALID=$r "$@" --ranks-from-env ;;
  esac
}
pids=()
for r in $(seq 1 $((n - 1 - alone * (n - 1)))); do
  rank "$@" < /dev/null > "$tmp/out$r" &
  pids+=($!)
done
r=0
rank "$@"
status=$?
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  rc=$?
  [ "$status" -eq 0 ] && status=$rc
  if [ -s "$tmp/out$((i + 1))" ]; then
    echo "launch_ranks: rank $((i + 1)) wrote to standard output: $(head -c 200 "$tmp/out$((i + 1))")" >&2
    status=1
  fi
done
rm -rf "$tmp"
exit "$status"
