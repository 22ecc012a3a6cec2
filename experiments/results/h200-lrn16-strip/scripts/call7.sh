# Call 7 (seventeenth session): the 16-bit LRN + pooling kernel's (strip, chunk) forced per layer (BATCHSCOPE_EXP_LRN16=
# CS2:STRIP:CW,...; norm1 has 48 words a pixel, norm2 128; the heuristic gives strip 1 and chunks of 48 / 64 words at 8-32
# images), the same binary, fp16 at 8, 16 and 32 images, 2 rounds. Carry .device/pack.tar.xz, .device/COMMIT.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
mkdir -p st
cfgs=("auto" "48:2:24,128:2:32" "48:4:24,128:4:32" "48:2:16,128:4:16" "48:4:16,128:2:16" "48:3:24,128:3:32" "48:1:24,128:1:32")
for r in 1 2; do for i in "${!cfgs[@]}"; do c=${cfgs[$i]}; e=$c; [ "$c" = auto ] && e=""
  BATCHSCOPE_EXP_LRN16=$e $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp16 --batches 8,16,32 --reps 20 --warmup 3 \
    --host-memory pinned --check-images 1 --check-backend cpu --out st/c$i-r$r.csv > st/c$i-r$r.log 2>&1 || echo "cfg $c r$r exit $?"
done; done
echo "shapes ($SECONDS s)"
python3 - "${cfgs[@]}" <<'P' | tee $OUT/shapes.md
import csv, glob, re, statistics, sys
cfgs = sys.argv[1:]
rows, checks = {}, {}
for f in glob.glob('st/c*-r*.csv'):
    m = re.match(r'st/c(\d+)-r(\d)\.(layers\.)?csv', f)
    for r in csv.DictReader(open(f)):
        if r['run'] != 'warm': continue
        if m.group(3): 
            if r['layer'] in ('norm1', 'norm2'): rows.setdefault((int(m.group(1)), int(r['batch']), r['layer']), []).append(float(r['median_ms']) * 1000)
        else: checks.setdefault((int(m.group(1)), int(r['batch'])), []).append(r['check'])
print('| shapes (cs2:strip:cw) | batch | norm1 us (rounds) | norm2 us (rounds) | checks |')
print('|---|---|---|---|---|')
for i, c in enumerate(cfgs):
    for b in (8, 16, 32):
        n1 = rows.get((i, b, 'norm1'), [0]); n2 = rows.get((i, b, 'norm2'), [0])
        print(f"| {c} | {b} | {statistics.median(n1):.2f} ({', '.join(f'{x:.2f}' for x in n1)}) | {statistics.median(n2):.2f} ({', '.join(f'{x:.2f}' for x in n2)}) | {','.join(checks.get((i, b), []))} |")
P
tar czf $OUT/st.tgz st/*.csv
