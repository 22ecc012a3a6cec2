# Call 3. Binaries: base = main abbbeec; new = call 2's, with a second probe: BS_LRN_CW=N sets the ring's chunk to N words
# (not kept). AlexNet fp16 kernels at 1-8 images: base, new's direct form in 1-word tasks (BS_LRN_FORM=word1), and the ring
# in chunks of 1 and 2 words (1-word tasks: each thread's LRN chain 2 values where 4-word tasks have 8), 3 rounds.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
for r in 1 2 3; do
  bs_of base sweep $COMMON --batches 1,2,4,8 --precision fp16 --out ab/base-fword1-r$r.csv > ab/base-r$r.log 2>&1 || echo "base exit $?"
  for f in word1 cw1 cw2 cw4; do
    [ $f = word1 ] || { cp ab/base-fword1-r$r.csv ab/base-f$f-r$r.csv; cp ab/base-fword1-r$r.layers.csv ab/base-f$f-r$r.layers.csv; }
    case $f in word1) E="BS_LRN_FORM=word1" ;; cw*) E="BS_LRN_FORM=ring BS_LRN_CW=${f#cw}" ;; esac
    env $E LD_LIBRARY_PATH=$PWD/$bin/lib:$LD_LIBRARY_PATH $bin/batchscope sweep $COMMON --batches 1,2,4,8 --precision fp16 --out ab/new-f$f-r$r.csv > ab/new-$f-r$r.log 2>&1 || echo "new $f exit $?"
  done
  echo "round $r ($SECONDS s)"
done
{ echo; echo "## base (main, the ring in chunks of 4 words at 1-8 images) against new's forms (fp16)"; python3 experiments/ab_compare.py ab
  for l in norm1 norm2; do echo; echo "### $l"; python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p'; done
} >> $OUT/summary.md 2>&1
tar czf $OUT/raw.tgz ab *.log 2>/dev/null
cat $OUT/summary.md | head -60
