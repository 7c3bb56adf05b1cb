#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The commit-subject rule of CONTRIBUTING.md ("Commits"), checked:
#   - the subject (first line) is at most 72 characters;
#   - it carries no figures (a number with a unit or a ratio: 1.12x, 9 ns, 30%, 4.89e8): they
#     belong in the body, with the command that produced them;
#   - a second line, if any, is blank.
# Usage:
#   scripts/check-commits.sh                 every commit after the rule's baseline
#                                            (.ci/commit-rule-since) up to HEAD: the lint step
#   scripts/check-commits.sh REV_RANGE       the commits of a range (e.g. origin/main..HEAD)
#   scripts/check-commits.sh --message FILE  one message (the commit-msg hook)
# Exits 1 and names each offending commit.
set -euo pipefail
cd "$(dirname "$0")/.."
max=72
figure='(^|[^A-Za-z0-9_.-])[0-9]+([.,][0-9]+)?(e[0-9]+)?[[:space:]]?(x|%|ns|us|µs|ms|s|KB|KiB|MB|MiB|GB|GiB|Mcb/s|ops/s)([^A-Za-z0-9_]|$)'
bad=0

check_one() { # $1: label, $2: message text
  local label=$1 msg=$2 subj second
  subj=$(printf '%s\n' "$msg" | sed -n 1p)
  second=$(printf '%s\n' "$msg" | sed -n 2p)
  if [ ${#subj} -gt $max ]; then
    echo "$label: subject is ${#subj} characters (at most $max): $subj" >&2
    bad=1
  fi
  if printf '%s\n' "$subj" | grep -Eq "$figure"; then
    echo "$label: subject carries a figure (put it in the body, with its command): $subj" >&2
    bad=1
  fi
  if [ -n "$second" ]; then
    echo "$label: the subject must be followed by a blank line" >&2
    bad=1
  fi
}

if [ "${1:-}" = "--message" ]; then
  # The hook: drop git's comment lines first.
  check_one "commit message" "$(grep -v '^#' "$2")"
  exit $bad
fi
if [ $# -gt 0 ]; then
  range=$1
else
  since=$(sed -n 's/^\([0-9a-f]\{7,40\}\).*/\1/p' .ci/commit-rule-since | head -n 1)
  if ! git cat-file -e "$since^{commit}" 2>/dev/null; then
    echo "check-commits: baseline $since not in this clone's history: nothing to check" >&2
    exit 0
  fi
  range="$since..HEAD"
fi
n=0
while read -r c; do
  [ -n "$c" ] || continue
  n=$((n + 1))
  check_one "$(git log -1 --format='%h' "$c")" "$(git log -1 --format='%B' "$c")"
done < <(git rev-list --no-merges "$range")
echo "check-commits: $n commits in $range, $([ $bad = 0 ] && echo "all keep the rule" || echo "some do not")"
exit $bad
