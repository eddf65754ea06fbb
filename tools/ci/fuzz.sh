#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer targets of tests/fuzz with clang in their own build
# directory and runs each for a while, printing one summary line per target. Exits 1 if
# any target found a crash (an ASan/UBSan report, a violated property, a leak, a
# timeout or running out of memory), 0 otherwise.
#
#   tools/ci/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS: how long each target runs (default 60); the targets run one after another,
# each with FUZZ_JOBS parallel workers (default: all cores). TARGET: fuzz_mtx,
# fuzz_mtx_gz, fuzz_cmrs, fuzz_real or the same without "fuzz_" (default: all).
# Environment: BUILD_DIR (default build-fuzz), FUZZ_JOBS, CC (default clang),
# FUZZ_ARGS (extra libFuzzer flags, e.g. "-max_len=65536").
#
# Running longer: `tools/ci/fuzz.sh 3600` gives every target an hour; `tools/ci/fuzz.sh 28800
# mtx_gz` one target a night. The working corpus, BUILD_DIR/fuzz-work/TARGET/corpus,
# starts from tests/fuzz/corpus and keeps growing across runs, so later runs start
# where earlier ones stopped. To add what was learned to the checked-in seeds (keep them
# small, < 100 KB in all), merge instead of copying:
#   build-fuzz/bin/fuzz_mtx -merge=1 tests/fuzz/corpus/mtx build-fuzz/fuzz-work/fuzz_mtx/corpus
#
# A crash: the input is saved as BUILD_DIR/fuzz-work/TARGET/crash-<sha1> (or leak-,
# timeout-, oom-), and the report is in BUILD_DIR/fuzz-work/TARGET/fuzz-N.log.
#   build-fuzz/bin/fuzz_mtx build-fuzz/fuzz-work/fuzz_mtx/crash-<sha1>   # reproduce it
#   build-fuzz/bin/fuzz_mtx -minimize_crash=1 -runs=100000 crash-<sha1> # shrink it
# Keep the reproducer under tests/fuzz/crashes/ once the cause is known.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$top/build-fuzz}
seconds=${1:-60}
shift || true
jobs=${FUZZ_JOBS:-$(nproc)}
all=(fuzz_mtx fuzz_mtx_gz fuzz_cmrs fuzz_real)

[ $# -gt 0 ] || set -- "${all[@]}"
targets=()
for t in "$@"; do
    t=fuzz_${t#fuzz_}
    [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target $t (${all[*]})" >&2; exit 2; }
    targets+=("$t")
done

CC=${CC:-clang} cmake -S "$top" -B "$build" -DCMRSCL_FUZZ=ON >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >/dev/null

# Sum of a libFuzzer final statistic over the workers' logs.
stat_sum() { cat "$@" 2>/dev/null | awk -v k="stat::$stat:" '$1 == k { s += $2 } END { print s + 0 }'; }

found=0
for t in "${targets[@]}"; do
    name=${t#fuzz_}
    work=$build/fuzz-work/$t
    mkdir -p "$work/corpus"
    cp -n "$top/tests/fuzz/corpus/$name/"* "$work/corpus/" 2>/dev/null || true
    dict=()
    case $name in
    mtx | mtx_gz) dict=(-dict="$top/tests/fuzz/mtx.dict") ;;
    real) dict=(-dict="$top/tests/fuzz/real.dict") ;;
    esac
    before=$(ls "$work/corpus" | wc -l)
    rm -f "$work"/fuzz-*.log
    touch "$work/.start"
    # -jobs: that many fuzzing processes, -workers of them at once, sharing the corpus.
    (cd "$work" && "$build/bin/$t" -jobs="$jobs" -workers="$jobs" -max_total_time="$seconds" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" \
        "${dict[@]}" ${FUZZ_ARGS:-} corpus >/dev/null 2>&1) || true
    runs=$(stat=number_of_executed_units stat_sum "$work"/fuzz-*.log)
    added=$(stat=new_units_added stat_sum "$work"/fuzz-*.log)
    cov=$(cat "$work"/fuzz-*.log 2>/dev/null | awk '$3 == "cov:" && $4 > m { m = $4 } END { print m + 0 }')
    crashes=$(find "$work" -maxdepth 1 -newer "$work/.start" \
        \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    printf '%-12s %4ss x %s: %10s runs, cov %5s, %5s new units (corpus %s -> %s), %s crashes\n' \
        "$t" "$seconds" "$jobs" "$runs" "$cov" "$added" "$before" "$(ls "$work/corpus" | wc -l)" \
        "$crashes"
    if [ "$crashes" -gt 0 ]; then
        find "$work" -maxdepth 1 -newer "$work/.start" -name '*-*' ! -name 'fuzz-*' | sed 's/^/    /'
        found=1
    fi
done
exit $found
