#!/usr/bin/env python3
# Structural lower bound of a dynamic-shape plan's simulated makespan (issue 5
# item 3, docs/benchmarks.md). On the dynamic path GE forces Data, NetOutput,
# constants and subgraph owners onto stream 0, and a stream runs its tasks in
# execution order (root topological order, each owner followed by its
# subgraphs). So whatever the allocator does, those nodes form one fixed chain
# on stream 0. The bound is the longest path over
#   node dependencies (data/control edges, subgraph Data <- the owner's input,
#   an owner's consumers <- its subgraphs' NetOutputs: npuplan/sim/dependencies.h)
#   + that stream-0 chain,
# with each node's task duration read from the simulator's trace (cost +
# one launch per device task; 0 for a node that launches none — Data, Const,
# NetOutput, GE_LOCAL ops, owners — which still keeps its place in the chain).
# CriticalPath:N on a dynamic model reports a bound of the same kind, from the
# allocator's own costs, as the plan's streams.makespan_lower_bound (owners at
# their subgraphs' bounds, and work / N per subgraph: never below this one). Valid for every stream assignment that keeps GE's forced nodes on 0
# (events can only add to it). With a third argument (µs) it also charges
# that event cost on each dependency between a forced node and a node the
# given plan put on another stream: that figure is for this plan only.
#
#   npuplan simulate plan.json --trace trace.json
#   bench/structural_bound.py plan.json trace.json [event_us]
import json, sys
plan = json.load(open(sys.argv[1])); trace = json.load(open(sys.argv[2]))['traceEvents']
ev_cost = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
dur = {}
for e in trace:
    if e.get('ph') == 'X' and e.get('name', '').split(' ')[0] not in ('record', 'wait'):
        dur[e['name']] = dur.get(e['name'], 0) + e['dur']
G = plan['graph']; P = plan['nodes']
graphs = {G['name']: G}; children = {}
for s in G.get('subgraphs', []): graphs[s['name']] = s
owner_subs = {}
for s in G.get('subgraphs', []): owner_subs.setdefault(s['parent'], []).append(s['name'])
node = {}
for g in graphs.values():
    for n in g['nodes']: node[n['name']] = (n, g['name'])
order = []
def walk(gname):
    for n in graphs[gname]['nodes']:
        order.append(n['name'])
        for sub in owner_subs.get(n['name'], []): walk(sub)
walk(G['name'])
stream = {k: v['stream'] for k, v in P.items()}
def src(ref): return ref.rsplit(':', 1)[0]
FORCED = {'Data','RefData','AippData','AnnData','MultisliceData','NetOutput','FileConstant','Variable','VariableV2','RefVariable','VarHandleOp','ConstPlaceHolder','Const','Constant'}
def forced(n): return n['type'] in FORCED or n['name'] in owner_subs
# direct deps
deps = {k: [] for k in node}
for k, (n, g) in node.items():
    for r in n.get('inputs', []): deps[k].append(src(r))
    for c in n.get('control_inputs', []): deps[k].append(c)
    if n['type'] == 'Data' and 'attrs' in n and '_parent_node_index' in n['attrs'] and graphs[g].get('parent'):
        p = node[graphs[g]['parent']][0]; i = n['attrs']['_parent_node_index']
        if i < len(p.get('inputs', [])): deps[k].append(src(p['inputs'][i]))
    # consumers of an owner also wait for its subgraphs' NetOutputs
    for r in n.get('inputs', []):
        o = src(r)
        for sub in owner_subs.get(o, []):
            for m in graphs[sub]['nodes']:
                if m['type'] == 'NetOutput': deps[k].append(m['name'])
finish = {}
last0 = None
total = 0
for k in order:
    n = node[k][0]
    d = dur.get(k, 0.0) if stream.get(k, -1) >= 0 else 0.0
    start = 0.0
    for p in deps[k]:
        f = finish.get(p, 0.0)
        if ev_cost and stream.get(p, -1) >= 0 and stream.get(k, -1) >= 0 and stream[p] != stream[k] and (forced(n) or forced(node[p][0])):
            f += ev_cost
        start = max(start, f)
    if forced(n) and stream.get(k, -1) == 0:
        if last0 is not None: start = max(start, finish[last0])
        last0 = k
    finish[k] = start + d
    total += d
print('work %.1f  structural bound %.1f' % (total, max(finish.values())))
