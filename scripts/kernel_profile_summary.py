#!/usr/bin/env python3
"""Per-kernel time of one decode step from an Nsight Compute CSV (ncu --metrics
gpu__time_duration.sum --csv): finds the repeating kernel sequence at the end of the run and
sums the last two periods. With --all: every launch of the run, summed per kernel (prefill
profiles). Usage: kernel_profile_summary.py FILE.csv [--all]"""
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; rows = rows[1:]
ki, vi, ii = hdr.index("Kernel Name"), hdr.index("Metric Value"), hdr.index("ID")
launches = [(r[ki].split("(")[0], float(r[vi].replace(",", "")) / 1000.0) for r in rows]
if "--all" in sys.argv:
    agg = collections.defaultdict(lambda: [0, 0.0])
    for n, t in launches:
        agg[n][0] += 1; agg[n][1] += t
    tot = sum(t for _, t in launches)
    print(f"launches total {len(launches)}, kernel time {tot / 1000:.2f} ms")
    for n, (c, t) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        print(f"{n:32s} {c:6d} launches {t / 1000:9.2f} ms {100 * t / tot:5.1f}% {t / c:8.2f} us/launch")
    sys.exit(0)
# Decode steps: the launches after the last prefill-only kernel; take the last 3 steps' worth by
# finding the repeating period of kernel names from the end.
names = [n for n, _ in launches]
period = None
for p in range(50, 1000):
    if len(names) >= 3 * p and names[-p:] == names[-2 * p:-p]:
        period = p; break
print(f"launches total {len(launches)}, decode step period {period}")
if period:
    last = launches[-2 * period:]
    agg = collections.defaultdict(lambda: [0, 0.0])
    for n, t in last:
        agg[n][0] += 1; agg[n][1] += t
    tot = sum(t for _, t in last) / 2
    print(f"per decode step: {period} launches, kernel time {tot:.1f} us")
    for n, (c, t) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        print(f"{n:32s} {c/2:6.0f}/step {t/2:9.1f} us/step {t/c:7.2f} us/launch")
    print("step sequence (first 30 of one step):")
    for n, t in last[:30]:
        print(f"  {n:32s} {t:7.2f}")
