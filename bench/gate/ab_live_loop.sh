#!/bin/bash
# bench/gate/ab_live_loop.sh OLD_BIN NEW_BIN [K] — the gate's moons live-loop script (bench/gate/gui_moons.txt) run by
# two binaries alternating, K processes each (default 4), on one host: the playback frames/s and the loop's frame ms
# of each process, to tell a code regression from the host's CPU speed (the live loop's CPU phases differ between
# hosts and processes; docs/PERFORMANCE.md "Speed gate"). Run from the repository root on the H200.
OLD=$1; NEW=$2; K=${3:-4}
for i in $(seq 1 "$K"); do
  for b in "$OLD" "$NEW"; do
    log=$(mktemp)
    timeout 120 "$b" gui --headless --backend cuda --no-persist --size 1600x1000 --model moons \
      --script bench/gate/gui_moons.txt >"$log" 2>&1
    echo "$b process $i: loop $(grep -E '^measure' "$log" | head -1 | grep -o '"median_ms": [0-9.]*'), playback $(grep -E '^measure' "$log" | tail -1 | grep -o '"fps": [0-9.]*')"
    rm -f "$log"
  done
done
