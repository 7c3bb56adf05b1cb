#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The floor under every deferred free (issue 13, item 3): how close can any reclamation scheme
# bring RCU to the per-bucket spinlock in the hash-table benchmark on this machine? Runs, at 2
# threads and a few update fractions, interleaved, one process per run:
#   bucket-spinlock   the lock to beat (frees the old element at once, under no reader)
#   free-later        the floor: grace default's read side, the old element freed 16384 updates
#                     later by a ring, with no grace period and no library call (UNSAFE: a
#                     reader preempted that long can reach freed memory; see d_floor.c);
#                     --delays D1,D2,... adds the floor at other distances (powers of two),
#                     named free-later@D, to show what the reuse distance costs
# --caps C1,C2,... adds grace-free with GRACE_PACE_CAP_US=C (the adaptive policy's cap on its
# pacing, default 1000 us), named grace-free@cap=C: more grace periods, a shorter reuse distance
#   grace-free        free_rcu(), the library's answer
#   grace-qsbr-free   free_qsbr()
#   grace-call        call_rcu() with a free() callback
#   never-free        the old element leaked (PPoPP 2024's reference)
# A run that fails or exceeds its timeout (the floor's unsafety) is counted and left out.
#
#   bench/hashtable/floor.sh [--build DIR] [--out DIR] [--points 2:0.1,2:0.25,2:0.5]
#                            [--reps N] [--duration S] [--delays 4096,65536] [--caps 250]
#                            [--limit S]
# --limit: seconds past --duration after which a run counts as hung and is killed (default 20;
# the ctest smoke run, bench_hashtable_floor_smoke, uses 3: its floor runs hang often).
# Defaults: 7 x 0.4 s per design and point. Quote it only from a quiet machine:
#   ../shared/tools/quiet -- bench/hashtable/floor.sh
# Writes DIR/floor.csv and prints markdown: medians (wall, per CPU-second), each design's ratio
# to the per-bucket spinlock and to the floor, and where each crosses the spinlock.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${GRACE_BUILD:-$root/build/bench}
out=""
points=2:0.1,2:0.25,2:0.5
reps=7 duration=0.4 delays="" caps="" grace=20
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --delays) delays=$2; shift 2 ;;
    --caps) caps=$2; shift 2 ;;
    --limit) grace=$2; shift 2 ;;
    -h|--help) sed -n '3,28p' "$0"; exit 0 ;;
    *) echo "floor.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build=$root/$build ;; esac
exe=$build/bench/hashtable/hashbench
[ -x "$exe" ] || { echo "floor.sh: $exe not found (build the hashbench target)" >&2; exit 1; }
"$exe" --list | grep -q '^free-later ' ||
  { echo "floor.sh: $exe has no free-later design (rebuild it)" >&2; exit 1; }
out=${out:-$build/results}
mkdir -p "$out"
py=/usr/bin/python3
[ -x $py ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

designs=(bucket-spinlock free-later grace-free grace-qsbr-free grace-call never-free)
for dl in ${delays//,/ }; do designs+=("free-later@$dl"); done
for c in ${caps//,/ }; do designs+=("grace-free@cap=$c"); done
csv=$out/floor.csv
echo "design,point,rep,status,mops,mops_cpu" >"$csv"
# A run's own watchdog fires after duration + 60 s; the floor's hang is cut sooner.
limit=$(awk -v d="$duration" -v g="$grace" 'BEGIN { printf "%d", d + g }')
echo "floor: ${#designs[@]} designs x $reps x $duration s per point, interleaved (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
for ((r = 0; r < reps; r++)); do
  for pt in ${points//,/ }; do
    order=("${designs[@]}")
    # rotate the order each repetition so that no design always runs first
    for ((k = 0; k < r % ${#designs[@]}; k++)); do order=("${order[@]:1}" "${order[0]}"); done
    for d in "${order[@]}"; do
      # free-later@D: the floor with HB_FLOOR_DELAY=D; grace-free@cap=C: GRACE_PACE_CAP_US=C
      dn=${d%@*} dl=16384 cap=0
      case $d in
        *@cap=*) cap=${d#*@cap=} ;;
        *@*) dl=${d#*@} ;;
      esac
      # (in a subshell whose stderr is dropped: the shell's "Killed" line for a hung run)
      if (HB_FLOOR_DELAY=$dl GRACE_PACE_CAP_US=$cap timeout --foreground -s KILL "$limit" "$exe" --designs "$dn" --points "$pt" \
        --reps 1 --duration "$duration" --seed $((r + 1)) --csv "$tmp/t.csv" >/dev/null 2>&1) \
        2>/dev/null; then
        awk -F, -v pt=$pt -v r=$r -v d=$d 'NR > 1 { printf "%s,%s,%d,ok,%s,%s\n", d, pt, r, $11, $14 }' \
          "$tmp/t.csv" >>"$csv"
      else
        echo "$d,$pt,$r,failed,," >>"$csv"
        echo "floor: $d at $pt (repetition $r) failed or hung: left out" >&2
      fi
    done
  done
done
"$py" - "$csv" <<'EOF'
import csv, statistics, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
v = defaultdict(list)
failed = defaultdict(int)
for r in rows:
    if r["status"] != "ok":
        failed[r["design"]] += 1
        continue
    f = float(r["point"].split(":")[1])
    v[(r["design"], f, "wall")].append(float(r["mops"]))
    v[(r["design"], f, "cpu")].append(float(r["mops_cpu"]))
med = {k: statistics.median(x) for k, x in v.items()}
fr = sorted({k[1] for k in med})
names = ["bucket-spinlock", "free-later", "grace-free", "grace-qsbr-free", "grace-call",
         "never-free"]
names += sorted({k[0] for k in med if k[0].startswith("free-later@")},
               key=lambda n: int(n.split("@")[1]))
names += sorted({k[0] for k in med if k[0].startswith("grace-free@cap=")},
               key=lambda n: -int(n.split("=")[1]))
names = [n for n in names if any((n, f, "wall") in med for f in fr)]
def g(d, f, m):
    return med.get((d, f, m), float("nan"))
print("\nOperations, M/s at 2 threads (median of interleaved runs; wall / per CPU-second x "
      "threads), ratio to the per-bucket spinlock and to the floor (free-later):\n")
print("| design | " + " | ".join("%g: M/s wall, CPU | / spinlock | / floor" % f for f in fr) + " |")
print("|---|" + "---:|---:|---:|" * len(fr))
for n in names:
    cells = []
    for f in fr:
        w, c = g(n, f, "wall"), g(n, f, "cpu")
        s = g("bucket-spinlock", f, "wall"), g("bucket-spinlock", f, "cpu")
        fl = g("free-later", f, "wall"), g("free-later", f, "cpu")
        cells.append("%.1f, %.1f | %.2fx, %.2fx | %.2fx, %.2fx" % (
            w, c, w / s[0], c / s[1], w / fl[0], c / fl[1]))
    print("| %s | %s |" % (n, " | ".join(cells)))
# Crossover: linear interpolation of the ratio to the spinlock between measured fractions.
print("\nUpdate fraction at which each design stops beating the per-bucket spinlock "
      "(interpolated between the measured fractions; wall, CPU):\n")
print("| design | wall | CPU |")
print("|---|---:|---:|")
for n in names[1:]:
    out = []
    for m in ("wall", "cpu"):
        rs = [(f, g(n, f, m) / g("bucket-spinlock", f, m)) for f in fr]
        x = None
        if rs[0][1] < 1:
            x = "below %g" % rs[0][0]
        for (f0, r0), (f1, r1) in zip(rs, rs[1:]):
            if x is None and r0 >= 1 > r1:
                x = "%.2f" % (f0 + (r0 - 1) * (f1 - f0) / (r0 - r1))
        out.append(x or "above %g" % rs[-1][0])
    print("| %s | %s | %s |" % (n, out[0], out[1]))
if failed:
    print("\nRuns that failed or hung (left out): " +
          ", ".join("%s %d" % kv for kv in sorted(failed.items())))
EOF
