"""quickstart.py GRAPH [PLAN_OUT]: compiles a graph (native JSON, .onnx, or a dict)
with npuplan from Python, reads its streams and events, verifies, simulates
and runs the plan, packs an interval set, and writes the plan file (the bytes
`npuplan compile` writes)."""
import sys

import numpy as np

import npuplan

graph = sys.argv[1]
print("npuplan", npuplan.__version__)

plan = npuplan.compile(graph, options={"ge.autoMultistreamParallelMode": "CriticalPath:4"})
s = plan.summary()
print(f"{s.name}: {s.nodes} nodes, {s.logical_streams} logical / {s.physical_streams} physical streams, "
      f"{s.events} events, memory peak {plan.memory.peak} bytes")
for stream in plan.streams:
    print(f"  stream {stream.id}: {stream.num_nodes} nodes, {stream.tasks} tasks")
for e in plan.events:
    print(f"  {e.kind} {e.id}: {e.send} (stream {e.send_stream}) -> {e.recv} (stream {e.recv_stream})")

plan.verify()  # raises npuplan.Error on a violation
sim = plan.simulate()
run = plan.run(jitter=1, repeat=3)
print(f"verified; simulated makespan {sim.makespan_us:.1f} us; CPU back end: {run.violations} violation(s)")

# Buffers live on [lower, upper) with a size: offsets in one memory region.
offsets = npuplan.memplan(np.array([[0, 2, 4096], [1, 3, 8192], [2, 4, 4096]]))
print("memplan offsets:", offsets.tolist())

try:
    npuplan.compile(graph, options={"ge.enableSingleStream": "maybe"})
except npuplan.InvalidArgumentError as e:
    print("error:", e)  # the CLI's message

if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write(plan.to_json())
