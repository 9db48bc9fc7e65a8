#!/usr/bin/env bash
# Fuzzes the parsers of hostile input (fuzz/, issue #36), one target after another.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]    # 60 s for every target by default
#   RUNS=1000000 scripts/fuzz.sh 1800        # what #36 asks: 10^6 cases or 30 min each
#   FUZZ_ARGS="-len_control=0" scripts/fuzz.sh 600 openapi   # more libFuzzer flags
#
# cargo-fuzz passes nightly flags (-Z); RUSTC_BOOTSTRAP=1 lets a stable toolchain take
# them. No sanitizer: the workspace forbids unsafe code, and a plain build runs several
# times as many cases. Debug assertions are on (integer overflow panics). The main stack
# is 2 MiB, a tokio worker's, so recursion that would overflow a server's thread
# overflows here too. A case over 1 s, 2 GiB of memory or a panic stops a target and
# leaves its input in fuzz/artifacts/TARGET/; the others still run.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${1:-60}"
shift || true
export RUSTC_BOOTSTRAP=1
fuzz=(cargo fuzz)
flags=(--sanitizer none --debug-assertions)
read -ra extra <<<"${FUZZ_ARGS:-}"

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <("${fuzz[@]}" list)
fi

max_len() {
    case "$1" in
        glob) echo 2048 ;;
        template) echo 4096 ;;
        jsonpath | extract | extract_secret) echo 8192 ;;
        json_schema | jsonl | recipe_plan) echo 16384 ;;
        manifest) echo 32768 ;;
        *) echo 65536 ;;
    esac
}

# Built before the runs, outside their 2 MiB stack: one target alone, or all of them.
if [ "${#targets[@]}" -eq 1 ]; then
    nice -n 10 "${fuzz[@]}" build "${flags[@]}" "${targets[0]}"
else
    nice -n 10 "${fuzz[@]}" build "${flags[@]}"
fi

failed=()
for target in "${targets[@]}"; do
    echo "== $target: ${seconds} s${RUNS:+ or $RUNS runs}"
    mkdir -p "corpus/$target"
    seeds=()
    [ -d "seeds/$target" ] && seeds=("seeds/$target")
    dict=()
    [ -f "dicts/$target.dict" ] && dict=("-dict=dicts/$target.dict")
    if ! (
        ulimit -s 2048
        nice -n 10 "${fuzz[@]}" run "${flags[@]}" "$target" "corpus/$target" "${seeds[@]}" -- \
            -timeout=1 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
            -max_total_time="$seconds" -runs="${RUNS:--1}" -print_final_stats=1 "${dict[@]}" "${extra[@]}"
    ); then
        failed+=("$target")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "failed: ${failed[*]} (inputs in fuzz/artifacts/)"
    exit 1
fi
echo "every target ran clean"
