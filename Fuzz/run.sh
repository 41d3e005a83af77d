#!/usr/bin/env bash
# Builds the fuzz harnesses once, then runs each for a bounded time, seeded from Fuzz/corpus/<harness>/.
#
# Usage: Fuzz/run.sh [seconds-per-harness (default 20)] [harness ... (default: all)]
#
# New inputs libFuzzer finds go to Fuzz/.build/corpus/<harness>/ (kept between runs, never committed), logs to
# Fuzz/.build/logs/<harness>.log, crashing inputs to Fuzz/.build/crashes/<harness>/ (emptied before each run).
# Exits non-zero when any harness crashed, ran out of memory or timed out, printing the input that did it;
# reproduce with `HKFUZZ_HARNESS=<harness> Fuzz/.build/release/hkfuzz <input>`.
# NICE=19 lowers the priority (long runs on shared machines); RSS_LIMIT_MB (default 2048) and TIMEOUT (seconds
# one input may take, default 10) are passed to libFuzzer. OUT (default .build) moves the corpus, logs and
# crashes; HKFUZZ_BINARY runs an already built copy of the binary instead of building (a long run can then
# go on while the harnesses are rebuilt).
set -uo pipefail
cd "$(dirname "$0")"
seconds="${1:-20}"
shift || true
export SWIFT_BACKTRACE=enable=no
# Swift's runtime keeps metadata caches for the life of the process, which LeakSanitizer would report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

out="${OUT:-.build}"
binary="${HKFUZZ_BINARY:-.build/release/hkfuzz}"
if [ -z "${HKFUZZ_BINARY:-}" ]; then
    # The -Xswiftc flag is not redundant: SwiftPM passes its sanitizers to the compiler as separate flags in no
    # fixed order and the compiler keeps only the last, so without it half the builds lack coverage
    # instrumentation (libFuzzer then reports a few dozen counters and finds nothing).
    swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address 2>&1 \
        | grep -Ev "^\[|^Building|ld.gold: warning"
    # A failed build must not go on with the binary an earlier build left behind.
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "run.sh: the fuzz build failed" >&2; exit 2; }
fi
[ -x "$binary" ] || { echo "run.sh: the fuzz build failed" >&2; exit 2; }
counters=$(HKFUZZ_HARNESS=unit "$binary" -runs=0 2>&1 | sed -nE 's/.*Loaded 1 modules +\(([0-9]+) inline.*/\1/p')
if [ "${counters:-0}" -lt 10000 ]; then
    echo "run.sh: $binary has ${counters:-no} coverage counters: it was built without fuzzer instrumentation" >&2
    exit 2
fi
if [ $# -gt 0 ]; then harnesses=("$@"); else mapfile -t harnesses < <(HKFUZZ_HARNESS=list "$binary" | awk '{print $1}'); fi

failed=()
printf '%-16s %8s %12s %9s %7s %7s %8s\n' harness seconds executions exec/s cov ft corpus
for harness in "${harnesses[@]}"; do
    rm -rf "$out/crashes/$harness"
    mkdir -p "$out/corpus/$harness" "$out/crashes/$harness" "$out/logs"
    log="$out/logs/$harness.log"
    HKFUZZ_HARNESS="$harness" nice -n "${NICE:-0}" "$binary" "$out/corpus/$harness" "corpus/$harness" \
        -max_total_time="$seconds" -rss_limit_mb="${RSS_LIMIT_MB:-2048}" -timeout="${TIMEOUT:-10}" \
        -artifact_prefix="$out/crashes/$harness/" -print_final_stats=1 >"$log" 2>&1
    status=$?
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
    runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log")
    rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log")
    size=$(find "$out/corpus/$harness" -type f | wc -l)
    printf '%-16s %8s %12s %9s %7s %7s %8s\n' "$harness" "$seconds" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$size"
    if [ $status -ne 0 ]; then
        failed+=("$harness")
        echo "run.sh: $harness failed (exit $status); log $PWD/$log:" >&2
        grep -E "ERROR|invariant failed|Fatal error|SUMMARY|Test unit written|deadly signal|timeout" "$log" | head -20 >&2
        for input in "$out/crashes/$harness"/*; do
            [ -e "$input" ] && echo "run.sh: crashing input $PWD/${input#./}" >&2
        done
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "run.sh: crashes in: ${failed[*]}" >&2
    exit 1
fi
