#!/bin/bash
# scripts/repeat-parallel-tests.sh BUILD_DIR [N]: issue 6's reliability check. Runs the parallel
# Python source tests (tests/python/test_parallel_source.py and test_parallel_failures.py: every
# worker failure mode, each in a child process with a time limit) N times in a row (default 20)
# against BUILD_DIR's Python package, then checks that nothing is left behind: no sluice worker
# process and no new entry in /dev/shm. Exits 1 at the first failing run (its output is kept in
# BUILD_DIR/repeat-parallel/run-K.log) or when something leaked; prints one line per run.
# Called by `make test-repeat [REPEAT=N]`. Workers that other programs start meanwhile (another
# test run with parallel sources) count as left behind: run it alone.
set -u
build=${1:?usage: $0 BUILD_DIR [N]}
n=${2:-20}
build=$(cd "$build" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
logs="$build/repeat-parallel"
mkdir -p "$logs"
python=${PYTHON:-/usr/bin/python3}
shm_before=$(ls /dev/shm | sort)
workers() { pgrep '^sluice-w' || true; } # worker processes name themselves sluice-w<id>
workers_before=$(workers)

for k in $(seq 1 "$n"); do
    start=$(date +%s)
    if ! (cd "$root" && SLUICE_TEST_TREE="$build/testtree" PYTHONPATH="$build/python" \
          "$python" -m pytest -q -p no:cacheprovider tests/python/test_parallel_source.py \
          tests/python/test_parallel_failures.py) >"$logs/run-$k.log" 2>&1; then
        echo "run $k/$n FAILED after $(($(date +%s) - start)) s: $logs/run-$k.log"
        tail -n 30 "$logs/run-$k.log"
        exit 1
    fi
    echo "run $k/$n: $(tail -n 1 "$logs/run-$k.log") ($(($(date +%s) - start)) s)"
done

sleep 1 # workers of the last run notice their parent's exit
leaked=0
new_shm=$(comm -13 <(echo "$shm_before") <(ls /dev/shm | sort))
if [ -n "$new_shm" ]; then
    echo "left in /dev/shm: $new_shm"
    leaked=1
fi
new_workers=$(comm -13 <(echo "$workers_before" | sort) <(workers | sort))
if [ -n "$new_workers" ]; then
    echo "worker processes left: $(echo "$new_workers" | tr '\n' ' ')"
    ps -o pid,ppid,stat,cmd -p "$(echo "$new_workers" | paste -sd,)" || true
    leaked=1
fi
[ "$leaked" = 0 ] && echo "$n runs passed; no worker process and no /dev/shm entry left behind"
exit "$leaked"
