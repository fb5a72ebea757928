#!/usr/bin/env python3
# Event-aware lower bound on the makespan of a static plan's graph (root graph
# only, no subgraphs), valid for every stream assignment and every number of
# streams: for each node v and each subset P of its producers, either all of P
# run on v's stream — one after the other, so v starts no earlier than
# min(start of P) + sum(cost of P) — or one of them runs elsewhere and v
# waits for its event: v starts no earlier than min(finish of P) + lat.
# Starts and finishes are themselves lower bounds (recursively). With
# lat = 0 this is the critical path.
#
#   event_bound.py plan.json trace.json lat_us [N]
import itertools, json, sys
plan = json.load(open(sys.argv[1])); trace = json.load(open(sys.argv[2]))['traceEvents']
lat = float(sys.argv[3]); N = int(sys.argv[4]) if len(sys.argv) > 4 else 0
dur = {}
for e in trace:
    if e.get('ph') == 'X' and e.get('name', '').split(' ')[0] not in ('record', 'wait'):
        dur[e['name']] = dur.get(e['name'], 0) + e['dur']
G = plan['graph']
assert not G.get('subgraphs'), 'root graph only'
CONST = {'Const', 'Constant', 'FileConstant', 'Variable', 'VariableV2', 'ConstPlaceHolder'}
start, fin = {}, {}
for n in G['nodes']:
    name = n['name']; c = dur.get(name, 0.0)
    preds = sorted({r.rsplit(':', 1)[0] for r in n.get('inputs', [])} | set(n.get('control_inputs', [])))
    preds = [p for p in preds if p in fin and dur.get(p, 0.0) > 0]  # no-task producers pass readiness only
    s = max([fin[p] for p in preds], default=0.0)
    # pairs and larger subsets (fan-in is small)
    for k in range(2, min(len(preds), 4) + 1):
        for P in itertools.combinations(preds, k):
            together = min(start[p] for p in P) + sum(dur.get(p, 0.0) for p in P)
            apart = min(fin[p] for p in P) + lat
            s = max(s, min(together, apart))
    # readiness through no-task producers
    for r in n.get('inputs', []):
        p = r.rsplit(':', 1)[0]
        if p in fin: s = max(s, fin[p])
    start[name] = s; fin[name] = s + c
work = sum(dur.values())
b = max(fin.values())
print('lat %.2f  event-aware path %.1f  work %.1f' % (lat, b, work), end='')
if N: print('  bound(N=%d) %.1f' % (N, max(b, work / N)))
else: print()
