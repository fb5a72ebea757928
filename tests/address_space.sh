#!/usr/bin/env bash
# Every command under an address-space limit (prlimit --as, 1 GiB by default)
# on tiny adversarial inputs: each must end with exit 1 (2 for a usage error)
# and exactly one line starting with "error: " — never 70 (an exception
# escaped, e.g. std::bad_alloc from sizing a table by a number read from the
# file), never a signal, never a hang. A tiny input must never need the
# memory: with the limit, asking for it fails instead of swapping.
# Usage: address_space.sh NPUPLAN [LIMIT_BYTES]. Exit 77 (skip) without prlimit.
set -uo pipefail
npuplan=$1
limit=${2:-1073741824}
command -v prlimit > /dev/null || { echo "address_space: prlimit not found; skipped"; exit 77; }
# A sanitizer build reserves terabytes of shadow memory and cannot start under
# the limit at all: nothing to learn there.
if ! prlimit --as="$limit" -- "$npuplan" --version > /dev/null 2>&1; then
  echo "address_space: npuplan does not start under --as=$limit (a sanitizer build?); skipped"; exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# --- inputs (each a few hundred bytes) ---
graph_nodes='[{"name": "a", "type": "Relu", "engine": "AIcoreEngine", "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Relu", "engine": "AIcoreEngine", "inputs": ["a:0"], "outputs": [{"shape": [1]}]}]'
plan() {  # plan STAGES NODE_ENTRIES STREAMS
  echo "{\"format\": \"npuplan.plan/1\", \"graph\": {\"format\": \"npuplan.graph/1\", \"name\": \"g\", \"nodes\": $graph_nodes},
  \"stages\": [$1], \"nodes\": $2, \"streams\": $3}"
}
all='"topo-sorted", "partitioned", "logical-streams", "attached-streams", "memory-planned", "tasks", "sync-events", "physical-streams", "active-streams", "sync-nodes"'
plan '"topo-sorted", "logical-streams"' '{"a": {"logical_stream": 0}, "b": {"logical_stream": 10000000000}}' \
  '{"logical": 2}' > logical_1e10.json
plan '"topo-sorted", "logical-streams"' '{"a": {"logical_stream": 0}, "b": {"logical_stream": 2147483647}}' \
  '{"logical": 2147483648}' > logical_2_31.json
plan '"topo-sorted", "logical-streams"' '{"a": {"logical_stream": 0}, "b": {"logical_stream": 1}}' \
  '{"logical": 1099511627776, "physical": 1099511627776}' > streams_2_40.json
plan "$all" '{"a": {"logical_stream": 0, "stream": 100000000}, "b": {"logical_stream": 0, "stream": 0}}' \
  '{"logical": 1, "physical": 100000001}' > physical_1e8.json
plan '' '{"a": {"logical_stream": 0}, "b": {"logical_stream": 1}}' '{"logical": 2}' > no_stages.json
plan '"topo-sorted", "logical-streams", "tasks"' \
  '{"a": {"logical_stream": 0, "tasks": 4611686018427387904}, "b": {"logical_stream": 0, "tasks": 4611686018427387904}}' \
  '{"logical": 1}' > tasks_2_62.json
echo '{"format": "npuplan.graph/1", "nodes": [{"name": "x\nerror: forged", "type": "Data"}, {"name": "x\nerror: forged", "type": "Data"}]}' > forged.json
printf '{"format": "npuplan.graph/1", "nodes": [{"name": "a", "type": "Data", "type": "Relu"}]}' > dup.json
printf 'id,lower,upper,size\n0,0,10,4611686018427387904\n1,5,9223372036854775807,4611686018427387904\n' > huge.csv
mkfifo fifo.json
"$npuplan" kernel gen --out k.json > /dev/null

# --- cases: "EXIT<TAB>ARGS" (ARGS split on spaces) ---
cases=(
  $'1\tverify logical_1e10.json'
  $'1\tverify logical_2_31.json'
  $'1\tverify streams_2_40.json'
  $'1\tverify physical_1e8.json'
  $'1\tverify no_stages.json'
  $'1\tverify forged.json'
  $'1\tverify dup.json'
  $'1\tverify /dev/zero'
  $'1\tverify fifo.json'
  $'1\tcompile /dev/zero -o out.json'
  $'1\tcompile forged.json -o out.json'
  $'1\tcompile dup.json -o out.json --engines /dev/zero'
  $'1\tpartition forged.json -o out.json'
  $'1\tdot /dev/zero -o out.dot'
  $'1\tdot dup.json -o out.dot'
  $'1\tsummary logical_1e10.json'
  $'1\tsimulate physical_1e8.json'
  $'1\tsimulate tasks_2_62.json'
  $'1\trun logical_2_31.json'
  $'1\trun tasks_2_62.json'
  $'1\treport streams_2_40.json -o out.html'
  $'1\tdot physical_1e8.json -o out.dot'
  $'1\tsummary /dev/zero'
  $'1\tsimulate /dev/zero'
  $'1\trun /dev/zero'
  $'1\treport /dev/zero -o out.html'
  $'1\timport fifo.json -o out.json'
  $'1\tmemplan /dev/zero'
  $'1\tmemplan huge.csv'
  $'1\tkernel plan fifo.json'
  $'1\tkernel eval k.json --schedule /dev/zero'
  $'2\trun no_stages.json --jitter 1 --jitter-max-us 9223372036854775807'
  $'2\tsimulate no_stages.json --launch-overhead-us nan'
  $'2\tgen -o out.json --control-edge-prob nan'
  $'2\tverify dup.json --max-nodes 0'
)

pass=0; fail=0
for c in "${cases[@]}"; do
  want=${c%%$'\t'*}; args=${c#*$'\t'}
  # shellcheck disable=SC2086
  timeout 120 prlimit --as="$limit" -- "$npuplan" $args > out.stdout 2> out.stderr
  got=$?
  nerr=$(grep -c '^error: ' out.stderr)
  why=""
  [[ "$got" == "$want" ]] || why="exit $got, want $want"
  [[ "$nerr" == 1 ]] || why="$why; $nerr lines start with 'error: '"
  if [[ -z "$why" ]]; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL npuplan $args: $why"; head -c 600 out.stderr; echo
  fi
done
echo "address_space: $pass passed, $fail failed (prlimit --as=$limit)"
[[ $fail -eq 0 && $pass -gt 0 ]]
