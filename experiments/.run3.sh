set -u
export OUT=${OUT:-out}
TESTS=1 SANITIZE=1 BENCH=1 SWEEPS=1 ALEXNET=0 bash experiments/gpu_check.sh 2>&1 | grep -v "^|" | tail -60
ROUNDS=7 CONFIGS="off default" bash experiments/profiler_overhead.sh 2>&1 | tail -5
cd $OUT && tar czf overhead.tgz overhead && rm -rf overhead
ls $OUT
