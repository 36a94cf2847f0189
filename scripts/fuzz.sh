#!/usr/bin/env bash
# scripts/fuzz.sh FUZZ_DIR SECONDS [TARGET...]: runs the libFuzzer targets built in FUZZ_DIR
# (cmake -DSLUICE_FUZZ=ON; `make fuzz` builds them and calls this), one after another, SECONDS
# each (docs/fuzzing.md). Targets default to every FUZZ_DIR/fuzz_*.
#
# Per target T: the working corpus FUZZ_DIR/corpus/T (kept between runs, grows), read together
# with the generated seeds FUZZ_DIR/seeds/T (fuzz_seeds, from the test images made by
# tests/data/make_images.py, cached) and the committed regression inputs
# tests/fuzz/regressions/T, so every past finding is re-run first. libFuzzer's output goes to
# FUZZ_DIR/logs/T.log; a finding (crash, sanitizer report, abort of a target's check, timeout,
# memory limit) leaves its input in FUZZ_DIR/findings/T/ and its path and report are printed.
# Every target runs even after a finding; the exit status is 1 when any had one, or when a run
# was interrupted (SIGINT/SIGTERM: "interrupted" in the table, no input written).
# A summary table (executions, exec/s, CPU seconds and executions per CPU second, corpus, peak
# memory) is printed and appended to FUZZ_DIR/fuzz-stats.txt.
#
# Leaks: LeakSanitizer checks the whole process when it exits, so a leak fails the run; checking
# after every input that allocated more than it freed (libFuzzer's -detect_leaks=1, which then
# names the input) halves the speed of the targets whose pipelines live across inputs, so it is
# off unless FUZZ_LEAKS=1. After a leak reported at exit, rerun with FUZZ_LEAKS=1 to get the
# input.
#
# Environment: FUZZ_TIMEOUT (s per input, 10), FUZZ_RSS_MB (2560), FUZZ_LEAKS (0), FUZZ_TMPDIR
# (the targets' input files: /dev/shm, else /tmp; read by fuzzutil.c), FUZZ_ARGS
# (more libFuzzer options), PYTHON (/usr/bin/python3, for the test images).
set -uo pipefail
dir=${1:?usage: fuzz.sh FUZZ_DIR SECONDS [TARGET...]}
seconds=${2:?usage: fuzz.sh FUZZ_DIR SECONDS [TARGET...]}
shift 2
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(cd "$dir" && pwd) || exit 1
timeout_s=${FUZZ_TIMEOUT:-10}
rss_mb=${FUZZ_RSS_MB:-2560}
leaks=${FUZZ_LEAKS:-0}
python=${PYTHON:-/usr/bin/python3}

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    for f in "$dir"/fuzz_*; do
        [[ -x $f && $f != */fuzz_seeds ]] && targets+=("${f##*/fuzz_}")
    done
fi

# Sanitizer runtimes of clang 14 fail at start-up on kernels with vm.mmap_rnd_bits > 28 (see the
# Makefile); run without ASLR where that is allowed.
run=()
setarch "$(uname -m)" -R true >/dev/null 2>&1 && run=(setarch "$(uname -m)" -R)

# Seeds: the test images (generated once, cached by run_generator.cmake), then fuzz_seeds.
cmake "-DPYTHON=$python" "-DSCRIPT=$src/tests/data/make_images.py" "-DOUT=$dir/testdata" \
    -P "$src/cmake/run_generator.cmake" >/dev/null || exit 1
"${run[@]}" "$dir/fuzz_seeds" "$dir/seeds" "$dir/testdata" "$src"/examples/*.json \
    "$src"/bench/specs/*.json >/dev/null || exit 1

max_len() {
    case $1 in
    spec) echo 16384 ;;
    file_list) echo 4096 ;;
    *) echo 65536 ;;
    esac
}

# A value of libFuzzer's final statistics from a log.
stat() {
    sed -n "s/^stat::$2: *//p" "$1" | tail -n 1
}

# Sets child_cs: CPU seconds (user + system) the shell's finished children used so far, in
# hundredths, from the second line of `times`, e.g. "0m1.250s 0m0.310s". `times` must run in
# this shell (not in a pipe or $(...): a subshell has no children of its own).
child_cpu() {
    times >"$dir/.times"
    child_cs=$(sed -n 2p "$dir/.times" | awk '{ t = 0; for (i = 1; i <= 2; i++) {
        split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t * 100 }')
}

status=0
# cpu_s and exec/cpu: the target's own CPU time, so that a shared, loaded machine's figures can
# be compared (exec/s there says how much of a core the target got as much as how fast it is).
summary=$(printf '%-10s %6s %6s %12s %8s %8s %14s %8s  %s' target time_s cpu_s executions \
    exec/s exec/cpu corpus rss_mb result)
for t in "${targets[@]}"; do
    exe=$dir/fuzz_$t
    if [[ ! -x $exe ]]; then
        echo "fuzz.sh: no target $t ($exe)" >&2
        status=1
        continue
    fi
    mkdir -p "$dir/corpus/$t" "$dir/findings/$t" "$dir/logs" "$dir/seeds/$t"
    inputs=("$dir/corpus/$t" "$dir/seeds/$t")
    [[ -d $src/tests/fuzz/regressions/$t ]] && inputs+=("$src/tests/fuzz/regressions/$t")
    opts=(-max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout="$timeout_s"
          -rss_limit_mb="$rss_mb" -detect_leaks="$leaks" -print_final_stats=1
          -artifact_prefix="$dir/findings/$t/")
    [[ $t == spec ]] && opts+=(-dict="$dir/seeds/spec.dict")
    log=$dir/logs/$t.log
    echo "fuzz.sh: $t for ${seconds}s (log: $log)"
    before=$(ls "$dir/findings/$t" | wc -l)
    start=$(date +%s)
    child_cpu
    cpu0=$child_cs
    # shellcheck disable=SC2086
    "${run[@]}" "$exe" "${opts[@]}" ${FUZZ_ARGS:-} "${inputs[@]}" >"$log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    child_cpu
    cpu=$((child_cs - cpu0))
    execs=$(stat "$log" number_of_executed_units)
    result=ok
    if [[ $rc -ne 0 && $(ls "$dir/findings/$t" | wc -l) -eq $before ]] &&
        grep -q 'libFuzzer: run interrupted' "$log"; then
        # stopped by a signal (SIGINT/SIGTERM: libFuzzer exits 72 after its statistics): no
        # finding, but not a complete run either
        result="interrupted (exit $rc)"
        status=1
        echo "fuzz.sh: $t: interrupted after $(stat "$log" number_of_executed_units) executions" >&2
    elif [[ $rc -ne 0 || $(ls "$dir/findings/$t" | wc -l) -ne $before ]]; then
        result="FINDING (exit $rc)"
        status=1
        echo "fuzz.sh: $t: a finding; the end of its log:" >&2
        tail -n 40 "$log" >&2
        written=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
        if [[ -n $written ]]; then
            echo "fuzz.sh: $t: reproducer: $written" >&2
            echo "fuzz.sh: rerun it with: $exe $written" >&2
        elif grep -q LeakSanitizer "$log"; then
            echo "fuzz.sh: $t: a leak, found at exit: FUZZ_LEAKS=1 names its input" >&2
        else
            echo "fuzz.sh: $t: no reproducer written; see $log" >&2
        fi
    fi
    corpus="$(ls "$dir/corpus/$t" | wc -l)/$(du -sk "$dir/corpus/$t" | cut -f1)K"
    summary+=$(printf '\n%-10s %6s %6s %12s %8s %8s %14s %8s  %s' "$t" "$took" \
        "$((cpu / 100))" "$execs" "$(stat "$log" average_exec_per_sec)" \
        "$((cpu > 0 ? ${execs:-0} * 100 / cpu : 0))" "$corpus" "$(stat "$log" peak_rss_mb)" \
        "$result")
done
echo "$summary"
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(git -C "$src" rev-parse --short HEAD 2>/dev/null)" \
        "${seconds}s per target"
    echo "$summary"
} >>"$dir/fuzz-stats.txt"
exit $status
