#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Static checks, part of the test command (scripts/test.sh runs it first); any finding fails it.
#   1. formatting: every C/C++ file as .clang-format says (clang-format --dry-run -Werror);
#   2. comments name only functions and macros that exist (scripts/check_comment_names.py);
#   3. clang-tidy on src/ with .clang-tidy (warnings are errors);
#   4. cppcheck on src/ (warning, style, performance, portability; inline suppressions only,
#      each with its reason at the line);
#   5. commit subjects: every commit after .ci/commit-rule-since keeps CONTRIBUTING.md's rule
#      (scripts/check-commits.sh: at most 72 characters, figures in the body);
#   6. floors: no module of src/ includes a header of a module above it
#      (scripts/check-floors.py; docs/design.md, section 1).
# Usage: scripts/lint.sh [format|names|tidy|cppcheck|commits|floors]...   (default: all six)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(format names tidy cppcheck commits floors)
fail=0
run() { echo "=== lint: $1"; }

for s in "${steps[@]}"; do
  case "$s" in
    format)
      run "clang-format"
      mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | grep -v '^tests/model/')
      clang-format --dry-run -Werror "${files[@]}" || fail=1
      ;;
    names)
      run "names in comments"
      trees=(src include)
      for d in ipc/src compat; do [ -d "$d" ] && trees+=("$d"); done
      python3 scripts/check_comment_names.py "${trees[@]}" || fail=1
      ;;
    tidy)
      run "clang-tidy (src/)"
      dir=build/lint
      scripts/cmake-configure.sh "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGRACE_DEBUG=ON \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DGRACE_TESTS=OFF -DGRACE_BENCH=OFF \
        -DGRACE_EXAMPLES=OFF
      # No build: the one generated header, include/grace/version.h, is written by the
      # configure (configure_file in src/CMakeLists.txt), as is compile_commands.json.
      mapfile -t srcs < <(find src -name '*.c' | sort)
      out=$(mktemp)
      if ! printf '%s\n' "${srcs[@]}" | xargs -P "$(nproc)" -n 1 clang-tidy -p "$dir" --quiet \
          >"$out" 2>/dev/null; then
        grep -E "(warning|error):" "$out" | sort -u
        fail=1
      fi
      rm -f "$out"
      ;;
    cppcheck)
      run "cppcheck (src/)"
      dir=build/lint
      [ -f "$dir/include/grace/version.h" ] ||
        scripts/cmake-configure.sh "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug
      if ! cppcheck --quiet --error-exitcode=1 --inline-suppr --std=c11 \
          --enable=warning,style,performance,portability \
          --suppress=missingIncludeSystem --suppress=unusedStructMember \
          -I include -I src -I "$dir/include" -D__GNUC__ -D__x86_64__ -D__linux__ \
          -D_GNU_SOURCE -DGRACE_BUILDING_LIBRARY=1 src/; then
        fail=1
      fi
      ;;
    commits)
      run "commit subjects"
      scripts/check-commits.sh || fail=1
      ;;
    floors)
      run "floors of src/"
      python3 scripts/check-floors.py || fail=1
      ;;
    *) echo "lint: unknown step $s" >&2; exit 2 ;;
  esac
done
[ $fail = 0 ] && echo "=== lint: clean"
exit $fail
