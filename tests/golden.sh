#!/usr/bin/env bash
# Golden plans: for every testdata/plans/<case>/input.json (optional `args`
# file with extra compile flags), compile twice, check the two outputs are
# byte-identical, verify the plan (--partial for a case whose args stop the
# pipeline with --passes), and compare with expected.plan.json.
# NPUPLAN_UPDATE_GOLDENS=1 rewrites the expected files (review the diff!).
set -uo pipefail
npuplan=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for dir in "$root"/testdata/plans/*/; do
  case=$(basename "$dir")
  args=()
  [[ -f "$dir/args" ]] && read -r -a args < "$dir/args"
  if ! "$npuplan" compile "$dir/input.json" -o "$tmp/$case.1.json" -q "${args[@]}" ||
     ! "$npuplan" compile "$dir/input.json" -o "$tmp/$case.2.json" -q "${args[@]}"; then
    echo "FAIL $case: compile failed"; fail=$((fail+1)); continue
  fi
  if ! cmp -s "$tmp/$case.1.json" "$tmp/$case.2.json"; then
    echo "FAIL $case: two compiles differ (non-deterministic)"; fail=$((fail+1)); continue
  fi
  # A case that stops the pipeline (--passes) is a partial plan: verify checks
  # the stages it claims; every other plan must carry all the stages it needs.
  partial=()
  [[ " ${args[*]} " == *" --passes "* ]] && partial=(--partial)
  if ! "$npuplan" verify "${partial[@]}" "$tmp/$case.1.json" > /dev/null; then
    echo "FAIL $case: verify failed"; fail=$((fail+1)); continue
  fi
  if [[ "${NPUPLAN_UPDATE_GOLDENS:-0}" == 1 ]]; then
    cp "$tmp/$case.1.json" "$dir/expected.plan.json"; echo "updated $case"; pass=$((pass+1)); continue
  fi
  if ! diff -u "$dir/expected.plan.json" "$tmp/$case.1.json" > "$tmp/$case.diff"; then
    echo "FAIL $case: plan differs from expected.plan.json:"; head -60 "$tmp/$case.diff"
    fail=$((fail+1)); continue
  fi
  pass=$((pass+1))
done
echo "golden: $pass passed, $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
