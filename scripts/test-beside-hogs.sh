#!/usr/bin/env bash
# `npm test` several times in a row with CPU-bound processes running beside it (issue 13: the suite must
# pass twice in a row beside two). Stops at the first failing pass. Prints, per pass, its exit status, its
# wall time and vitest's own summary, and the range of the 1-minute load average sampled every 60 s.
#
#   bash scripts/test-beside-hogs.sh            # 2 passes, 2 hogs
#   PASSES=1 HOGS=3 bash scripts/test-beside-hogs.sh
#
# Logs go to $LOG_DIR (default: a new directory under /tmp): pass-N.log per pass, load.log.
set -u
cd "$(dirname "$0")/.."
PASSES="${PASSES:-2}"
HOGS="${HOGS:-2}"
LOG_DIR="${LOG_DIR:-$(mktemp -d /tmp/test-beside-hogs.XXXXXX)}"
mkdir -p "$LOG_DIR"
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true

children=()
stop_children() {
  for pid in "${children[@]}"; do kill "$pid" 2>/dev/null; done
}
trap stop_children EXIT INT TERM

for _ in $(seq "$HOGS"); do
  yes > /dev/null &
  children+=("$!")
done
( while true; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 60; done ) >> "$LOG_DIR/load.log" 2>&1 &
children+=("$!")

echo "test-beside-hogs: $PASSES pass(es) of npm test beside $HOGS CPU hog(s), commit $(git rev-parse --short HEAD), logs in $LOG_DIR"
rc=0
for n in $(seq "$PASSES"); do
  start=$SECONDS
  npm test > "$LOG_DIR/pass-$n.log" 2>&1
  rc=$?
  # vitest's summary lines, without their colour codes
  summary=$(sed 's/\x1b\[[0-9;]*m//g' "$LOG_DIR/pass-$n.log" | grep -E '^ +(Test Files|Tests|Duration) ' | sed 's/^ *//' | paste -sd ';' -)
  echo "pass $n: exit $rc after $((SECONDS - start)) s ($(date +%T)); ${summary:-no vitest summary}"
  [ "$rc" -eq 0 ] || break
done
load=$(awk '{print $2}' "$LOG_DIR/load.log" | sort -n | sed -n '1p;$p' | paste -sd ' ' -)
echo "1-minute load average while it ran (every 60 s): lowest and highest ${load:-none sampled}"
exit "$rc"
