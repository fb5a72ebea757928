#!/usr/bin/env bash
# Every full-pipeline golden plan (testdata/plans/<case>/ whose `args` do not
# stop the pipeline with --passes) runs on the CPU back end with jitter and
# stream skew, several times, with 0 dependency violations and 0 memory races
# (SPEC R3; docs/execution.md) — plans with a While also with 3 loop
# iterations — and simulates. A plan compiled with the events stage must never race.
set -uo pipefail
npuplan=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for dir in "$root"/testdata/plans/*/; do
  case=$(basename "$dir")
  [[ -f "$dir/args" ]] && grep -q -- "--passes" "$dir/args" && continue
  plan="$dir/expected.plan.json"
  [[ -f "$plan" ]] || continue
  if ! "$npuplan" run "$plan" --jitter 7 --repeat 10 --jitter-max-us 100 --stream-skew-us 500 -q > "$tmp/$case.run" 2>&1; then
    echo "FAIL $case: npuplan run reported violations or failed:"; head -20 "$tmp/$case.run"
    fail=$((fail+1)); continue
  fi
  # Loops iterated: loop-carried values must be ordered across iterations too.
  if grep -q '"type": "While"' "$plan" &&
     ! "$npuplan" run "$plan" --loop-iterations 3 --jitter 7 --repeat 10 --jitter-max-us 100 --stream-skew-us 500 -q \
       > "$tmp/$case.loop.run" 2>&1; then
    echo "FAIL $case: npuplan run --loop-iterations 3 reported violations or failed:"; head -20 "$tmp/$case.loop.run"
    fail=$((fail+1)); continue
  fi
  if ! "$npuplan" simulate "$plan" > "$tmp/$case.sim" 2>&1; then
    echo "FAIL $case: npuplan simulate failed:"; head -20 "$tmp/$case.sim"
    fail=$((fail+1)); continue
  fi
  pass=$((pass+1))
done
echo "run_goldens: $pass full-pipeline plans ran with 0 violations, $fail failed"
if [[ $pass -eq 0 && $fail -eq 0 ]]; then
  echo "run_goldens: no full-pipeline golden plan found (testdata/plans/*/args all use --passes)"
  exit 1
fi
[[ $fail -eq 0 ]]
