#!/usr/bin/env bash
# Session 14, device call C (H200): the whole run, main at 4522bd9. Carried
# .pack2 (.device/prefix and bench/gen, tar czf each) while call B's .pack
# was still on the warm machine, hence the move.
rm -rf .pack && mv .pack2 .pack && bash scripts/device_unpack.sh >/dev/null && bash bench/run.sh --budget 540
