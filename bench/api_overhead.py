#!/usr/bin/python3
"""Compiling from Python vs the CLI (issue 24; docs/benchmarks.md, "Library and Python API").

    PYTHONPATH=build/python bench/api_overhead.py GRAPH [--bin build/bin/npuplan] [--rounds 5]
                                                  [--ref-bin OTHER/npuplan]

Each round, alternating (the machine is shared), runs as separate processes:
  cli        npuplan compile -q GRAPH -o OUT
  python     python3: import npuplan; npuplan.compile(GRAPH).write(OUT)
  python+je  the same with LD_PRELOAD=libjemalloc.so.2 and the CLI's MALLOC_CONF
  python+thp the same on glibc's malloc with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (--thp)
(and `cli-ref`: another build of the CLI, e.g. without this tree's changes)
and takes each process's wall time and CPU time (user + sys), plus the
in-process time of compile + write inside the Python process.
The order of the modes rotates from round to round. Checks that every
output is byte-identical to the CLI's. Prints medians, and the median of the
per-round ratios to the CLI (paired: robust to load that changes between rounds).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

PY = """
import sys, time
t0 = time.perf_counter()
import npuplan
t1 = time.perf_counter()
npuplan.compile(sys.argv[1]).write(sys.argv[2])
t2 = time.perf_counter()
print(f"{t1 - t0:.4f} {t2 - t1:.4f}")
"""
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"


def timed(cmd, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("--bin", default="build/bin/npuplan")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="/tmp/api_overhead")
    ap.add_argument("--thp", action="store_true", help="also time python+thp")
    ap.add_argument("--ref-bin", help="another npuplan binary to time alongside (mode cli-ref)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    modes = {"cli": None, "python": dict(os.environ)}
    if a.ref_bin:
        modes["cli-ref"] = None
    if os.path.exists(JEMALLOC):
        modes["python+je"] = dict(os.environ, LD_PRELOAD=JEMALLOC, MALLOC_CONF="thp:always,metadata_thp:always")
    if a.thp:
        modes["python+thp"] = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
    res = {m: {"wall": [], "cpu": [], "inproc": [], "import": []} for m in modes}
    ref = os.path.join(a.out, "cli.plan.json")
    for r in range(a.rounds):
        names = list(modes)
        names = names[r % len(names):] + names[:r % len(names)]  # the CLI's turn moves too
        if "cli" in names[1:] and not os.path.exists(ref):  # the CLI's plan first: the others compare with it
            names.remove("cli")
            names.insert(0, "cli")
        for m in names:
            env = modes[m]
            out = os.path.join(a.out, f"{m}.plan.json")
            if env is None:
                binary = a.ref_bin if m == "cli-ref" else a.bin
                wall, cpu, _ = timed([binary, "compile", "-q", a.graph, "-o", out])
            else:
                wall, cpu, stdout = timed([sys.executable, "-c", PY, a.graph, out], env)
                imp, inproc = map(float, stdout.split())
                res[m]["import"].append(imp)
                res[m]["inproc"].append(inproc)
            res[m]["wall"].append(wall)
            res[m]["cpu"].append(cpu)
            if m != "cli" and open(out, "rb").read() != open(ref, "rb").read():
                sys.exit(f"{m}: the plan differs from the CLI's")
        print(f"round {r + 1}: " + ", ".join(f"{m} {res[m]['wall'][-1]:.2f} s" for m in modes), file=sys.stderr)
    base = statistics.median(res["cli"]["wall"]), statistics.median(res["cli"]["cpu"])
    print(f"| mode | wall (median of {a.rounds}) | CPU user+sys | vs CLI wall / CPU | median of per-round wall ratios | import npuplan | compile + write in process |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for m in modes:
        w, c = statistics.median(res[m]["wall"]), statistics.median(res[m]["cpu"])
        imp = f"{statistics.median(res[m]['import']):.3f} s" if res[m]["import"] else "–"
        inp = f"{statistics.median(res[m]['inproc']):.2f} s" if res[m]["inproc"] else "–"
        paired = statistics.median(x / y for x, y in zip(res[m]["wall"], res["cli"]["wall"]))
        print(f"| {m} | {w:.2f} s | {c:.2f} s | {100 * (w / base[0] - 1):+.1f} % / {100 * (c / base[1] - 1):+.1f} % "
              f"| {100 * (paired - 1):+.1f} % | {imp} | {inp} |")


if __name__ == "__main__":
    main()
