#!/usr/bin/env bash
# Traces Perfetto keeps (docs/execution.md, "Trace"): `npuplan simulate
# --trace` on every golden plan, and with --loop-iterations 3 on those with a
# loop, checked by tests/trace_check.py — slices nest, every flow is bound
# once, and no flow ends before it starts. The real models are checked by
# scripts/e2e_models.sh, which runs the same check on every plan it compiles.
set -uo pipefail
npuplan=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0; flows=0
for plan in "$root"/testdata/plans/*/expected.plan.json; do
  case=$(basename "$(dirname "$plan")")
  for iters in 1 3; do
    [[ $iters -eq 3 ]] && ! grep -q '"type": "While"' "$plan" && continue
    if ! "$npuplan" simulate "$plan" --loop-iterations $iters --trace "$tmp/$case.trace.json" -q >/dev/null 2>"$tmp/err"; then
      echo "FAIL $case: simulate failed: $(head -3 "$tmp/err")"; fail=$((fail+1)); continue
    fi
    if out=$(python3 "$root/tests/trace_check.py" "$tmp/$case.trace.json" --label "$case x$iters" 2>&1); then
      pass=$((pass+1))
      n=$(sed -n 's/.* \([0-9][0-9]*\) flows.*/\1/p' <<<"$out" | tail -1)
      flows=$((flows + ${n:-0}))
    else
      echo "$out"; fail=$((fail+1))
    fi
  done
done
echo "trace_flows: $pass traces with $flows flows, all ending at or after their start; $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
