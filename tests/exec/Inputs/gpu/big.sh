#!/bin/bash
# one case at n = 2^24 + 3: the CUDA program against the C backend on the same input
# usage: big.sh PROG ENTRY TOL SPEC...
N=${BIGN:-16777219}
prog=$1; entry=$2; tol=$3; shift 3
d=$(mktemp -d /tmp/big.XXXX)
salt=0
for s in "$@"; do
  if [[ $s == =* ]]; then echo "${s#=}" >> $d/in.txt; else ./gen $s $N $salt >> $d/in.txt; fi
  salt=$((salt+1))
done
./progs/$prog.cpu -e $entry < $d/in.txt > $d/ref.txt 2>$d/ref.err || echo "$prog $entry: reference failed: $(head -c 200 $d/ref.err)"
t0=$(date +%s.%N)
./progs/$prog.gpu -e $entry < $d/in.txt > $d/got.txt 2>$d/got.err || echo "$prog $entry: GPU run failed: $(head -c 300 $d/got.err)"
echo "$prog $entry n=$N: $(./cmp $d/got.txt $d/ref.txt $tol)"
rm -rf $d
