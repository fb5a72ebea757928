#!/usr/bin/env python3
"""Checks a Chrome trace-event file (npuplan simulate --trace) the way
Perfetto's JSON importer reads it (docs/execution.md, "Trace"):

  * times become integer ns as Perfetto's importer makes them: ts·1000 and
    dur·1000 each truncated;
  * events are taken in timestamp order, ties in file order;
  * complete slices (X) on one thread must nest: a slice that starts inside
    another must end inside it;
  * a flow start (s) binds to the innermost open slice of its thread; a flow
    end (f) with "bp": "e" binds to the innermost open slice, without it to the
    next slice that begins on its thread;
  * flows are keyed by (id, cat, name): each key has one start and one end.

Fails (exit 1) when a flow is unbound, duplicated, ends before it starts (its
end timestamp, or the start of the slice its end binds to, is earlier than
its start), or when slices do not nest. Prints one summary line.

  tests/trace_check.py TRACE.json [--label NAME]
"""
import json
import sys


def check(path):
    events = json.load(open(path, encoding="utf-8"))["traceEvents"]
    ns = lambda us: int(us * 1000.0)  # Perfetto: static_cast<int64_t>(value * 1000.0)
    timed = [(ns(e["ts"]), i, e) for i, e in enumerate(events) if e.get("ph") in ("X", "s", "f")]
    timed.sort(key=lambda t: (t[0], t[1]))
    stacks, pending = {}, {}
    starts, ends, errors = {}, {}, []
    slices = 0
    for ts, _, e in timed:
        thread = (e.get("pid"), e.get("tid"))
        stack = stacks.setdefault(thread, [])
        ph = e["ph"]
        if ph == "X":
            end = ts + ns(e.get("dur", 0))
            while stack and stack[-1][1] <= ts:
                stack.pop()
            if stack and end > stack[-1][1]:
                errors.append(f"slice '{e.get('name')}' at {ts} on {thread} overlaps '{stack[-1][2]}' without nesting")
            stack.append((ts, end, e.get("name")))
            slices += 1
            for key in pending.pop(thread, []):
                ends[key]["slice_ts"] = ts
            continue
        key = (e.get("id"), e.get("cat"), e.get("name"))
        if ph == "s":
            if key in starts:
                errors.append(f"flow {key} starts twice")
                continue
            if not stack:
                errors.append(f"flow {key} starts at {ts} on {thread} outside any slice")
                continue
            starts[key] = {"ts": ts, "slice_ts": stack[-1][0]}
        else:
            if key in ends:
                errors.append(f"flow {key} ends twice")
                continue
            ends[key] = {"ts": ts, "slice_ts": None}
            if e.get("bp") == "e":
                if stack:
                    ends[key]["slice_ts"] = stack[-1][0]
            else:
                pending.setdefault(thread, []).append(key)
    for key, end in ends.items():
        start = starts.get(key)
        if start is None:
            errors.append(f"flow {key} ends without a start")
        elif end["slice_ts"] is None:
            errors.append(f"flow {key} ends at {end['ts']} with no slice to bind to")
        elif end["ts"] < start["ts"] or end["slice_ts"] < start["slice_ts"]:
            errors.append(f"flow {key} ends before it starts: start {start['ts']} (slice {start['slice_ts']}), "
                          f"end {end['ts']} (slice {end['slice_ts']})")
    for key in starts:
        if key not in ends:
            errors.append(f"flow {key} starts but never ends")
    return slices, len(starts), errors


def main():
    path = sys.argv[1]
    label = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--label" else path
    slices, flows, errors = check(path)
    for err in errors[:10]:
        print(f"trace_check: {label}: {err}", file=sys.stderr)
    bad = len(errors)
    print(f"trace_check: {label}: {slices} slices, {flows} flows, {bad} problem{'s' if bad != 1 else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
