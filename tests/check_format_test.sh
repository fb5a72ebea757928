#!/usr/bin/env bash
# Tests scripts/check_format.sh in a scratch repository: only lines changed
# since the base are checked, the base is found as the script documents, and
# the exit codes are 0 (clean) / 1 (lines to reformat). Skips (77) without
# clang-format-14.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v clang-format-14 >/dev/null && command -v git-clang-format-14 >/dev/null || {
  echo "clang-format-14 not installed: skipped"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
git init -q -b main repo && cd repo
git config user.email t@example.com && git config user.name t
mkdir scripts && cp "$root/scripts/check_format.sh" scripts/ && cp "$root/.clang-format" .
printf 'int  old( ){return 1;}\n' > a.cc      # predates the check: never flagged
printf 'not   c++ ( )\n' > notes.txt
git add . && git commit -qm base
fail=0
expect() {  # expect EXIT DESCRIPTION -- ARGS...
  local want=$1 what=$2; shift 3
  local out; out=$(scripts/check_format.sh "$@" 2>&1); local got=$?
  if [[ $got -ne $want ]]; then echo "FAIL $what: exit $got, want $want"; echo "$out"; fail=1
  else echo "ok   $what"; fi
}

printf 'int  old( ){return 1;}\nint added() { return 2; }\n' > a.cc
printf 'more   text ( )\n' >> notes.txt
expect 0 "a formatted new line beside an old unformatted one, uncommitted" -- HEAD
printf 'int  old( ){return 1;}\nint added( ) {return 2;}\n' > a.cc
expect 1 "an unformatted uncommitted line" -- HEAD
git commit -qam "bad line"
expect 1 "an unformatted line of the newest commit on main (base: first parent)" --
expect 0 "the same commit checked from itself" -- HEAD
printf 'int  old( ){return 1;}\nint added() { return 2; }\n' > a.cc && git commit -qam fixed

git checkout -qb topic
printf 'int x( ) {return 3;}\n' > b.h && git add b.h && git commit -qm "topic: bad"
printf '// another commit\n' > c.cc && git add c.cc && git commit -qm "topic: fine"
expect 1 "a branch: every commit since the merge base with main" --
git checkout -q main
git merge -q --no-ff topic -m "merge topic"
expect 1 "a merge on main: the whole merged branch (first parent)" --
FORMAT_BASE=HEAD expect 0 "FORMAT_BASE" --
expect 2 "a base that is not a commit" -- no-such-commit

git clone -q --depth 1 "file://$tmp/repo" "$tmp/shallow" 2>/dev/null
(cd "$tmp/shallow" && scripts/check_format.sh >/dev/null 2>&1); rc=$?
if [[ $rc -ne 0 ]]; then echo "FAIL a depth-1 clone: exit $rc, want 0 (nothing to compare)"; fail=1
else echo "ok   a depth-1 clone has no base: nothing checked"; fi
exit $fail
