#!/usr/bin/env bash
# Takeover after kill -9 (issue 21, docs/benchmarks-history.md "Cluster takeover after kill -9"): W1's data (5.26 M samples of
# one subject, 526 records of 10,000 rows) written through node a of a 2-node cluster on one nats-server, then
# a is killed and node b (a standby) takes the partition over: first with the whole stream to replay (no
# snapshot), then after a partition snapshot in JetStream. Prints how long b took to serve after the kill and the
# rebuild time it logged. Needs a release build (swift build -c release) and nats-server.
# Usage: Tools/hkbench/scripts/takeover.sh [lease TTL seconds, default 3]
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=.build/release
ttl=${1:-3}
work=$(mktemp -d /tmp/hkd-takeover-bench.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

wait_for() { # file pattern (grep -E)
    for _ in $(seq 1 3000); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done
    echo "timed out waiting for '$2' in $1" >&2; tail -20 "$1" >&2; exit 1
}
now() { date +%s.%N; }

run() { # label, snapshot interval (0: none before the kill), NATS port, hkd port base
    local label=$1 interval=$2 nats_port=$3 port=$4 dir="$work/$1"
    mkdir -p "$dir"
    nats-server -a 127.0.0.1 -p "$nats_port" -js -sd "$dir/nats" >"$dir/nats.log" 2>&1 &
    pids+=($!)
    wait_for "$dir/nats.log" "Server is ready"
    local url="nats://127.0.0.1:$nats_port"
    "$bin/hkd" --cluster "$url" --node-id a --partitions 16 --lease-ttl "$ttl" --snapshot-interval "$interval" \
        --listen "127.0.0.1:$port" --data-dir "$dir/a" --auth off >"$dir/a.log" 2>&1 &
    local a=$!
    pids+=($a)
    wait_for "$dir/a.log" "holds 16"
    "$bin/hkd" --cluster "$url" --node-id b --standby --lease-ttl "$ttl" --snapshot-interval 0 \
        --listen "127.0.0.1:$((port + 1))" --data-dir "$dir/b" --auth off >"$dir/b.log" 2>&1 &
    pids+=($!)
    wait_for "$dir/b.log" "holds 0"
    "$bin/hkbench" w1 --server "127.0.0.1:$port" --mode pipelined | grep -E "samples/s|acknowledged" || true
    if [ "$interval" != 0 ]; then wait_for "$dir/a.log" "snapshot of partition [0-9]+ \(due\)"; fi
    grep -E "snapshot of partition" "$dir/a.log" | sed 's/^/  a: /' || true
    local killed
    killed=$(now)
    kill -9 "$a"
    wait_for "$dir/b.log" "took partition [0-9]+: .*records to stream sequence [1-9]"
    local served
    served=$(now)
    echo "== $label: node b logged the takeover $(python3 -c "print(round($served - $killed, 2))") s after kill -9 (lease TTL $ttl s)"
    grep -E "took partition [0-9]+: .*records to stream sequence [1-9]" "$dir/b.log" | sed 's/^/  b: /'
    "$bin/hkq" --server "127.0.0.1:$((port + 1))" server-info | grep -iE "samples|stepCount" | head -3 | sed 's/^/  /'
}

run "whole stream replayed" 0 14300 17500
run "snapshot loaded" 5 14301 17510
