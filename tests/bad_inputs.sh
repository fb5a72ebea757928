#!/usr/bin/env bash
# Runs every case of the bad-input corpus: tests/bad_inputs/<kind>/<case>.<ext>
# with a sidecar <case>.expect holding `command:`, `exit:` and `message:` lines.
# The command's stderr must contain the message and exactly one line that
# starts with "error: ", the exit code must match, and the output path (%out)
# must not exist afterwards. Prints "N passed, N failed".
# With BAD_INPUTS_AS_LIMIT=BYTES (set by ctest for builds without sanitizers)
# every npuplan runs under that address-space limit (prlimit --as): a tiny bad
# input must be refused without allocating by an id it contains (issue #19).
set -uo pipefail
npuplan=$1
if [[ -n "${BAD_INPUTS_AS_LIMIT:-}" ]] && command -v prlimit >/dev/null; then
  npuplan="prlimit --as=$BAD_INPUTS_AS_LIMIT $npuplan"
fi
root=$(cd "$(dirname "$0")/.." && pwd)
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
while IFS= read -r expect; do
  input=$(ls "${expect%.expect}".* 2>/dev/null | grep -v '\.expect$' | head -1)
  cmd=$(sed -n 's/^command: //p' "$expect")
  want_exit=$(sed -n 's/^exit: //p' "$expect")
  want_msg=$(sed -n 's/^message: //p' "$expect")
  out="$tmp/out.$(basename "${expect%.expect}")"
  cmd=${cmd//%npuplan/$npuplan}; cmd=${cmd//%in/$input}; cmd=${cmd//%out/$out}; cmd=${cmd//%root/$root}
  stderr=$(cd "$tmp" && bash -c "$cmd" 2>&1 >/dev/null); got=$?
  why=""
  [[ "$got" == "$want_exit" ]] || why="exit $got, want $want_exit"
  [[ "$stderr" == *"$want_msg"* ]] || why="$why; message missing '$want_msg' in: ${stderr:0:2000}"
  [[ ! -e "$out" ]] || why="$why; output file left behind"
  # One error line a person can trust: exactly one line starts with "error:".
  nerr=$(printf '%s\n' "$stderr" | grep -c '^error: ')
  [[ "$nerr" == 1 ]] || why="$why; $nerr lines start with 'error: ' (want exactly one)"
  if [[ -z "$why" ]]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL ${expect#$root/}: $why"; fi
done < <(find "$root/tests/bad_inputs" -name '*.expect' | sort)
echo "bad-inputs: $pass passed, $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
