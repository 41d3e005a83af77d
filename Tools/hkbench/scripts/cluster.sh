#!/usr/bin/env bash
# The cost of replication (issue 21, docs/benchmarks-history.md "Cluster mode"): W1 ingest and W3 queries through a 3-node hkd
# cluster on a 3-server NATS JetStream cluster (replicas 3, everything on loopback), then the same against one
# single-node hkd with --fsync always, in the same run. Needs a release build (swift build -c release) and
# nats-server. Usage: Tools/hkbench/scripts/cluster.sh [hkbench w1 options...]
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=.build/release
work=$(mktemp -d /tmp/hkd-cluster-bench.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Three NATS servers with JetStream, routed to each other.
client_ports=(14222 14223 14224)
route_ports=(16222 16223 16224)
routes=$(printf 'nats://127.0.0.1:%s,' "${route_ports[@]}"); routes=${routes%,}
for i in 0 1 2; do
    nats-server -a 127.0.0.1 -p "${client_ports[$i]}" -js -sd "$work/nats-$i" --server_name "n$i" \
        --cluster_name hkd-bench --cluster "nats://127.0.0.1:${route_ports[$i]}" --routes "$routes" \
        >"$work/nats-$i.log" 2>&1 &
    pids+=($!)
done
urls=$(printf 'nats://127.0.0.1:%s,' "${client_ports[@]}"); urls=${urls%,}
wait_for() { # file text
    for _ in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "timed out waiting for '$2' in $1" >&2; cat "$1" >&2; exit 1
}
for i in 0 1 2; do wait_for "$work/nats-$i.log" "Server is ready"; done
# JetStream needs a meta leader before streams can be created.
for i in 0 1 2; do wait_for "$work/nats-$i.log" "JetStream cluster new metadata leader\|Self is new JetStream cluster metadata leader"; done 2>/dev/null || true

# Three hkd nodes; node a creates the cluster.
for node in a b c; do
    port=$((17420 + $(printf '%d' "'$node") - 97))
    "$bin/hkd" --cluster "$urls" --node-id "$node" --replicas 3 --partitions 16 --listen "127.0.0.1:$port" \
        --data-dir "$work/hkd-$node" --auth off >"$work/hkd-$node.log" 2>&1 &
    pids+=($!)
    wait_for "$work/hkd-$node.log" "listening on"
done

cpu_seconds() { # pid: user + system CPU seconds so far
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"
}
cpu_table() { # label: CPU seconds of every NATS server and hkd node
    for pid in "${pids[@]}"; do printf '%s %s %s\n' "$1" "$pid" "$(cpu_seconds "$pid")"; done
}

echo "== W1 through the cluster (node a, replicas 3)"
cpu_table before >"$work/cpu"
"$bin/hkbench" w1 --server 127.0.0.1:17420 "$@"
cpu_table after >>"$work/cpu"
echo "Bytes in the partition streams (one copy of each; --replicas 3 keeps three):"
stored=$("$bin/hkq" --server 127.0.0.1:17420 --format json cluster status | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(p["messages"] for p in d["partitions"]) * 10000, sum(p["bytes"] for p in d["partitions"]))')
read -r samples bytes <<<"$stored"
echo "  $bytes bytes for $samples samples (every mode run): $(python3 -c "print(round($bytes / $samples, 2))") B/sample"
echo "CPU seconds spent during W1, per process:"
awk -v n="$samples" '$1 == "before" { b[$2] = $3 }
    $1 == "after" { printf "  pid %s: %.2f s = %.3f us/sample\n", $2, $3 - b[$2], ($3 - b[$2]) * 1e6 / n }' "$work/cpu"
ps -o pid,args -p "$(IFS=,; echo "${pids[*]}")" | cut -c1-100
echo "== W3 through the cluster (node a)"
"$bin/hkbench" w3 --server 127.0.0.1:17420

# One single-node hkd for comparison, same machine, same run.
"$bin/hkd" --listen 127.0.0.1:17430 --data-dir "$work/single" --auth off --fsync always >"$work/single.log" 2>&1 &
pids+=($!)
wait_for "$work/single.log" "listening on"
echo "== W1 single node (--fsync always)"
"$bin/hkbench" w1 --server 127.0.0.1:17430 "$@"
echo "== W3 single node"
"$bin/hkbench" w3 --server 127.0.0.1:17430
echo "== NATS servers' CPU and memory after the runs (ps)"
ps -o pid,rss,time,args -C nats-server -C hkd | cut -c1-140
