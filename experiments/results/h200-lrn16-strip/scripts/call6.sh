# Call 6 (seventeenth session): where the LRN + pooling kernels' time goes at 16 images. ncu on the 16-bit kernel
# (fp16, norm1 and norm2) and on FP32's walk kernel at 16 images; the 16-bit kernel's strip forced to 1-4 output rows
# (BATCHSCOPE_EXP_LRN16_STRIP, the same binary; unset: the heuristic's, 1 at 16 images, 4 at 128), 2 rounds, fp16 at 16 and
# 128 images. Carry .device/pack.tar.xz (batchscope of the experiment commit), .device/COMMIT.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
mkdir -p st
for r in 1 2; do for sv in "" 1 2 3 4; do
  BATCHSCOPE_EXP_LRN16_STRIP=$sv $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp16 --batches 16,128 --reps 20 --warmup 3 \
    --host-memory pinned --check-images 1 --check-backend cpu --out st/s${sv:-auto}-r$r.csv > st/s${sv:-auto}-r$r.log 2>&1 || echo "strip $sv r$r exit $?"
done; done
echo "strips ($SECONDS s)"
python3 - <<'P' | tee $OUT/strips.md
import csv, glob, re, statistics
rows = {}
for f in glob.glob('st/*-r*.layers.csv'):
    m = re.match(r'st/s(\w+)-r(\d)\.layers\.csv', f)
    for r in csv.DictReader(open(f)):
        if r['run'] == 'warm' and r['layer'] in ('norm1', 'norm2'):
            rows.setdefault((m.group(1), int(r['batch']), r['layer']), []).append(float(r['median_ms']) * 1000)
checks = {}
for f in glob.glob('st/*-r*.csv'):
    if f.endswith('.layers.csv'): continue
    m = re.match(r'st/s(\w+)-r(\d)\.csv', f)
    for r in csv.DictReader(open(f)):
        if r['run'] == 'warm': checks.setdefault((m.group(1), int(r['batch'])), []).append(r['check'])
print('| strip | batch | norm1 us (rounds) | norm2 us (rounds) | checks |')
print('|---|---|---|---|---|')
for s in ['auto', '1', '2', '3', '4']:
    for b in (16, 128):
        n1 = rows.get((s, b, 'norm1'), []); n2 = rows.get((s, b, 'norm2'), [])
        print(f"| {s} | {b} | {statistics.median(n1):.2f} ({', '.join(f'{x:.2f}' for x in n1)}) | {statistics.median(n2):.2f} ({', '.join(f'{x:.2f}' for x in n2)}) | {','.join(checks.get((s, b), []))} |")
P
tar czf $OUT/st.tgz st/*.csv
timeout 60 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:lrn_pool_half_kernel --launch-count 2 \
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp16 --batches 16 --reps 1 --warmup 0 --no-profile --check-images 0 --out n1.csv > $OUT/ncu-lrn16-b16.csv 2> n1.err
echo "ncu fp16 exit $? ($SECONDS s)"
timeout 60 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:lrn_walk_kernel --launch-count 2 \
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp32 --batches 16 --reps 1 --warmup 0 --no-profile --check-images 0 --out n2.csv > $OUT/ncu-lrn32-b16.csv 2> n2.err
echo "ncu fp32 exit $? ($SECONDS s)"
