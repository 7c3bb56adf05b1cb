#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# grace-urcu on real programs (issue 32, item 5): Debian bookworm's reverse dependencies of
# liburcu-dev, built from their Debian source packages with sources and build files unchanged,
# once against Debian's liburcu (the control) and once against grace-urcu with liburcu-dev
# hidden, each followed by the program's own test suite; the results are compared.
#   compat/tests/realclients.sh [--work DIR] [--jobs N] [--page FILE] [--no-setup]
#                               [--side control|grace] [--report] [prog...]
# prog: knot gdnsd multipath-tools (default: all three). A long run (6 minutes on an idle two-core
# machine, most of it Knot DNS; far longer on a busy one), not part of the test command; needs
# root (apt, mount namespace) and deb.debian.org.
#   --work DIR   sources, builds and logs (default build/realclients; $REALCLIENTS_WORK)
#   --page FILE  the page to write (default docs/figures/realclients.md; "-" for none)
#   --no-setup   skip apt (deb-src line, build-dep, liburcu-dev); the machine has them
#   --side S     build and test one side only (two runs, one per side, may share a WORK and
#                run at the same time); --report: no build: the results again from WORK's
#                logs and build trees, and the page
# What it does, on a fresh Debian bookworm machine:
#  1. apt: adds a deb-src line for bookworm (its own file in /etc/apt/sources.list.d, only when
#     no deb-src line exists), installs the three build-deps, liburcu-dev (the control),
#     libcmocka-dev (multipath-tools' tests; not in its build-deps) and dpkg-dev, cmake, ninja.
#  2. apt-get source --download-only knot gdnsd multipath-tools. gdnsd 3.8.1's orig tarball is
#     missing from deb.debian.org's pool (bookworm's .dsc names it, the pool no longer has it):
#     the script then takes the upstream tarball Debian ships for gdnsd 3.8.3 (trixie) from the
#     same pool, checked against its SHA-256 below, and says so on the page. Bookworm's 3.8.1-1
#     carries no patches, so the upstream tarball is the whole source.
#  3. Builds grace (Release) and installs it into a private prefix, WORK/grace-prefix, its
#     libraries with a RUNPATH to that prefix (libgrace-urcu finds libgrace when a test
#     harness sets its own LD_LIBRARY_PATH, as multipath-tools' does).
#  4. For each program and each side, unpacks a fresh copy of the sources (dpkg-source -x,
#     which applies Debian's patches), configures, builds and runs the test suite with the
#     program's own commands: knot `./configure && make && make check`, gdnsd the same (its
#     `make check` runs its Perl/TAP suite with prove), multipath-tools `make && make test`.
#     The grace-urcu side only sets search paths in the environment, as docs/compat.md tells
#     users to: PKG_CONFIG_PATH (Knot), CPATH for the headers and LDFLAGS=-L<grace-urcu dir>
#     for the builds that write `-lurcu*` themselves (gcc searches LIBRARY_PATH only after the
#     system's directories, and pkgconf drops the -L and -I of directories named in
#     LIBRARY_PATH and CPATH, so LIBRARY_PATH would find liburcu-dev's files), LD_RUN_PATH
#     and LD_LIBRARY_PATH for the test runs (the private prefix is not in ld.so's cache).
#  5. Compares, per program, the build result and the test counts (programs/files, tests
#     passed, failed, skipped) and every test's own result, and writes the page.
# Hiding liburcu-dev: the grace-urcu side runs in a private mount namespace (unshare -m) in
# which every file of liburcu-dev (dpkg -L) is covered by a bind mount: the urcu/ header
# directory by an empty tmpfs, each top-level header by a file that is an #error, each library
# (.so, its target, .a) by a linker script that names a library that does not exist, each .pc
# by a module whose link line fails. Any use of liburcu-dev by the build then fails loudly
# instead of mixing silently, nothing on the machine changes (no package is removed, no file
# moved), and the mounts vanish with the namespace when the build ends, even when it is killed:
# there is nothing to restore. The grace-urcu side is then verified: no ELF file of its build
# needs a liburcu*.so (readelf -d), the programs need libgrace-urcu.so.1, and no dependency
# file written by the compiler names a urcu header under /usr (they name grace-urcu's).
set -euo pipefail
SELF=$(readlink -f "$0")
ROOT=$(cd "$(dirname "$SELF")/../.." && pwd)
WORK=${REALCLIENTS_WORK:-$ROOT/build/realclients}
JOBS=2
PAGE=$ROOT/docs/figures/realclients.md
SETUP=1
SIDES=(control grace)
REPORT=0
PROGS=()
# gdnsd's fallback: Debian's upstream tarball for 3.8.3 (pool/main/g/gdnsd, trixie).
GDNSD_FALLBACK=gdnsd_3.8.3.orig.tar.xz
GDNSD_FALLBACK_SHA256=16a81836273dcbc17e5527df2214e8664d0545bb18b55f08325710de10c8f64d
MIRROR=${REALCLIENTS_MIRROR:-http://deb.debian.org/debian}
# Knot's configure options, the same on both sides: no manuals, the slower zone parser instead
# of the Ragel-generated one (minutes of compile time on its own) and -O1 without debug
# information, so that two builds fit a two-core machine. $KNOT_CONFIGURE overrides.
KNOT_CONFIGURE=${KNOT_CONFIGURE:-"--disable-documentation --disable-fastparser CFLAGS='-O1 -g0'"}

if [ "${1:-}" = __hidden ]; then
  shift
  # Inside the private mount namespace: cover liburcu-dev, then run the command.
  mount --make-rprivate /
  H=$(mktemp -d /tmp/realclients-hide.XXXXXX)
  mount -t tmpfs -o size=64k none "$H" # gone with the namespace; run_side removes the directory
  printf '#error "liburcu-dev is hidden from this build (compat/tests/realclients.sh)"\n' > "$H/hidden.h"
  printf '/* liburcu-dev is hidden from this build */\nINPUT(-lliburcu-dev-is-hidden)\n' > "$H/hidden.so"
  printf 'Name: hidden\nDescription: liburcu-dev is hidden\nVersion: 0\nLibs: -lliburcu-dev-is-hidden\n' > "$H/hidden.pc"
  n=0
  while IFS= read -r f; do
    case "$f" in /usr/share/*) continue ;; esac
    [ -e "$f" ] || continue # under a directory covered already
    if [ -d "$f" ] && [ ! -L "$f" ]; then
      case "$f" in */urcu) mount -t tmpfs -o ro,size=4k none "$f"; n=$((n + 1)) ;; esac
      continue
    fi
    case "$f" in
      */include/*urcu*.h) mount --bind "$H/hidden.h" "$f" ;;
      *.so|*.a) mount --bind "$H/hidden.so" "$(readlink -f "$f")" ;;
      *.pc) mount --bind "$H/hidden.pc" "$f" ;;
      *) continue ;;
    esac
    n=$((n + 1))
  done < <(dpkg -L liburcu-dev)
  echo "liburcu-dev hidden: $n paths covered" >&2
  exec "$@"
fi

while [ $# -gt 0 ]; do
  case "$1" in
    --work) WORK=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --page) PAGE=$2; shift 2 ;;
    --no-setup) SETUP=0; shift ;;
    --side) SIDES=("$2"); shift 2 ;;
    --report) REPORT=1; SETUP=0; shift ;;
    -h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    knot|gdnsd|multipath-tools) PROGS+=("$1"); shift ;;
    *) echo "realclients: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#PROGS[@]} -gt 0 ] || PROGS=(knot gdnsd multipath-tools)
[ "$(id -u)" = 0 ] || { echo "realclients: needs root (apt-get, unshare -m, mount)" >&2; exit 2; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
LOG=$WORK/logs
RES=$WORK/results
mkdir -p "$LOG" "$RES" "$WORK/src"
log() { echo "[realclients $(date -u +%H:%M:%S)] $*" >&2; }
export DEBIAN_FRONTEND=noninteractive

# 1. apt
if [ $REPORT = 0 ] && [ $SETUP = 1 ]; then
  if ! grep -rqs '^deb-src\|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    log "adding a deb-src line for bookworm (/etc/apt/sources.list.d/grace-realclients-src.sources)"
    cat > /etc/apt/sources.list.d/grace-realclients-src.sources <<EOF
Types: deb-src
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
  log "apt-get update, build-dep knot gdnsd multipath-tools, liburcu-dev"
  { apt-get update -q &&
    apt-get build-dep -y -q knot gdnsd multipath-tools &&
    apt-get install -y -q --no-install-recommends liburcu-dev libcmocka-dev dpkg-dev cmake ninja-build \
      pkg-config curl ca-certificates xz-utils util-linux binutils; } > "$LOG/apt.log" 2>&1 ||
    { tail -n 20 "$LOG/apt.log" >&2; echo "realclients: apt failed: $LOG/apt.log" >&2; exit 1; }
fi

# 2. sources
GDNSD_NOTE=
fetch_sources() {
  local p
  for p in "${PROGS[@]}"; do
    if ls "$WORK/src/${p}_"*.orig.tar.* >/dev/null 2>&1 && ls "$WORK/src/${p}_"*.dsc >/dev/null 2>&1; then
      continue
    fi
    log "apt-get source $p"
    if (cd "$WORK/src" && apt-get source -q --download-only "$p") > "$LOG/source-$p.log" 2>&1; then
      continue
    fi
    [ "$p" = gdnsd ] || { tail -n 5 "$LOG/source-$p.log" >&2; exit 1; }
    grep -q 'gdnsd_.*orig.tar.* 404' "$LOG/source-$p.log" ||
      { tail -n 5 "$LOG/source-$p.log" >&2; exit 1; }
    log "gdnsd: bookworm's orig tarball is missing from the mirror; taking $GDNSD_FALLBACK"
    curl -sSf -o "$WORK/src/$GDNSD_FALLBACK" "$MIRROR/pool/main/g/gdnsd/$GDNSD_FALLBACK"
    echo "$GDNSD_FALLBACK_SHA256  $WORK/src/$GDNSD_FALLBACK" | sha256sum -c --quiet
  done
}
[ $REPORT = 1 ] || fetch_sources
if [ -f "$WORK/src/$GDNSD_FALLBACK" ]; then
  GDNSD_NOTE="bookworm's gdnsd_3.8.1.orig.tar.xz is missing from deb.debian.org's pool; upstream tarball $GDNSD_FALLBACK (SHA-256 checked) from the same pool, unchanged (bookworm's 3.8.1-1 carries no patches)"
fi

# Unpacks a fresh copy of program $1's sources into $2.
unpack() {
  local p=$1 dir=$2
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  if [ "$p" = gdnsd ] && [ -f "$WORK/src/$GDNSD_FALLBACK" ]; then
    mkdir -p "$dir"
    tar xf "$WORK/src/$GDNSD_FALLBACK" -C "$dir" --strip-components=1
  else
    dpkg-source -x "$(ls "$WORK/src/${p}_"*.dsc | head -1)" "$dir" > "$LOG/unpack-$p.log" 2>&1 ||
      { cat "$LOG/unpack-$p.log" >&2; exit 1; }
  fi
}
version_of() {
  case "$1" in
    gdnsd) if [ -f "$WORK/src/$GDNSD_FALLBACK" ]; then echo "3.8.3 (upstream tarball; see below)"; return; fi ;;
  esac
  sed -n 's/^Version: //p' "$(ls "$WORK/src/${1}_"*.dsc | head -1)"
}

# 3. grace into a private prefix
GP=$WORK/grace-prefix
[ $REPORT = 1 ] || log "building grace into $GP"
[ $REPORT = 1 ] || { "$ROOT/scripts/cmake-configure.sh" "$WORK/grace-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGRACE_TESTS=OFF -DGRACE_BENCH=OFF -DGRACE_EXAMPLES=OFF -DGRACE_IPC=OFF \
    -DCMAKE_INSTALL_PREFIX="$GP" -DCMAKE_INSTALL_RPATH="$GP/lib" &&
  nice -n 10 cmake --build "$WORK/grace-build" -j"$JOBS" &&
  cmake --install "$WORK/grace-build"; } > "$LOG/grace.log" 2>&1 ||
  { tail -n 20 "$LOG/grace.log" >&2; echo "realclients: grace build failed" >&2; exit 1; }
# grace-urcu's version: the last commit that changed grace's or grace-urcu's code.
GRACE_COMMIT=$(git -C "$ROOT" log -1 --format=%h -- src include compat/include compat/src compat/CMakeLists.txt compat/install.cmake)
GRACE_DIRTY=$(git -C "$ROOT" status --porcelain --untracked-files=no -- src include compat/include compat/src | grep -q . && echo " (with uncommitted changes)" || true)

# 4. build and test. The commands run in the unpacked tree ($PWD), output to stdout/stderr.
build_cmd() {
  case "$1" in
    knot) echo "./configure $KNOT_CONFIGURE && make -j$JOBS" ;;
    gdnsd) echo "./configure && make -j$JOBS" ;;
    multipath-tools) echo "make -j$JOBS" ;;
  esac
}
test_cmd() {
  case "$1" in
    knot) echo "make -j$JOBS check" ;;
    gdnsd) echo "make check" ;;
    multipath-tools) echo "make -j$JOBS test" ;;
  esac
}
# The environment of each side: the grace-urcu side finds grace-urcu first and nothing else.
side_env() {
  if [ "$1" = grace ]; then
    echo "PKG_CONFIG_PATH=$GP/lib/grace-urcu/pkgconfig CPATH=$GP/include/grace-urcu:$GP/include LDFLAGS=-L$GP/lib/grace-urcu LD_RUN_PATH=$GP/lib LD_LIBRARY_PATH=$GP/lib"
  fi
}

run_side() { # prog side
  local p=$1 s=$2 dir=$WORK/$2/$1 r=$RES/$1.$2
  local pre=()
  [ "$s" = grace ] && pre=(unshare -m -- "$SELF" __hidden)
  unpack "$p" "$dir"
  rm -f "$r".*
  echo "$(date -u +%Y-%m-%d), $GRACE_COMMIT$GRACE_DIRTY" > "$r.when"
  log "$p, $s: building ($(build_cmd "$p"))"
  local t0 t1 envs
  envs=$(side_env "$s")
  t0=$(date +%s)
  # shellcheck disable=SC2086
  if (cd "$dir" && env $envs nice -n 10 "${pre[@]}" bash -c "$(build_cmd "$p")") \
      > "$LOG/$p.$s.build.log" 2>&1; then
    echo ok > "$r.build"
  else
    echo failed > "$r.build"
    tail -n 15 "$LOG/$p.$s.build.log" >&2
  fi
  t1=$(date +%s)
  echo $((t1 - t0)) > "$r.build_s"
  if [ "$(cat "$r.build")" = ok ]; then
    log "$p, $s: testing ($(test_cmd "$p"))"
    # shellcheck disable=SC2086
    (cd "$dir" && env $envs nice -n 10 "${pre[@]}" bash -c "$(test_cmd "$p")") \
      > "$LOG/$p.$s.test.log" 2>&1 && echo 0 > "$r.test_rc" || echo $? > "$r.test_rc"
    echo $(($(date +%s) - t1)) > "$r.test_s"
    # (|| true: a grep that finds nothing is no reason to stop; set -e is off inside them)
    results "$p" "$dir" "$LOG/$p.$s.test.log" > "$r.results" || true
    summarize "$p" "$r.results" > "$r.counts" || true
    log "$p, $s: $(cat "$r.counts")"
  fi
  rmdir /tmp/realclients-hide.* 2>/dev/null || true
  if [ "$s" = grace ]; then verify "$p" "$dir" > "$r.verify" || true; fi
  return 0
}

# Every test's own result, one line each ("<test> <RESULT>"), sorted.
results() { # prog dir testlog
  local p=$1 dir=$2 tl=$3
  case "$p" in
    knot) # its own TAP harness (tests/tap/runtests: "name....ok"), then automake's (tests-fuzz)
      sed -n -E 's/^([A-Za-z0-9_./+-]+[A-Za-z0-9_+-])\.{2,}(ok|skipped|FAILED|dubious|MISSED|ABORTED|[a-z]+)(.*)$/\1 \2/p' "$tl" | sort
      grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): ' "$tl" | awk '{ sub(/:$/, "", $1); print $2, $1 }' | sort
      grep -E '^Files=' "$tl" | sed -E 's/, +[0-9.]+ seconds.*//; s/ +/ /g' ;;
    gdnsd) # prove: "./dir/NNN.t .... ok" per file, the failed test numbers in its summary
      sed -n -E 's/^(\.\/)?([^ ]+\.t) \.+ ?(.*)$/\2 \3/p' "$tl" | sed 's/[[:space:]]*$//' | sort
      grep -E '^(Files=|Result:|  Failed tests:)' "$tl" | sed -E 's/, +[0-9]+ wallclock.*//' ;;
    multipath-tools) # cmocka: [       OK ] / [  FAILED  ] / [  SKIPPED ] per test, per program
      (cd "$dir/tests" && for o in *.out; do
         [ -f "$o" ] || continue
         grep -E '^\[ *(OK|FAILED|SKIPPED|ERROR) *\] [^ ]' "$o" | grep -v 'test(s)' |
           sed -E "s/^\[ *([A-Z]+) *\] (.*)$/${o%.out} \2 \1/"
       done) | sort
      # test programs that failed to produce their .out
      (cd "$dir/tests" && for t in *-test; do [ -f "${t%-test}.out" ] || echo "${t%-test} no-output"; done) | sort ;;
  esac
}
# One line: programs, tests, pass, fail, skip (and errors).
summarize() { # prog resultsfile
  local p=$1 f=$2
  case "$p" in
    knot) awk '/^Files=/ { for (i = 1; i <= NF; i++) if ($i ~ /^Tests=/) { t = $i; gsub(/[^0-9]/, "", t) }; next }
               $2 ~ /^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR)$/ { am++; amr[$2]++; next }
               { files++; r[$2]++ }
               END { printf "%d test programs (%d TAP tests): %d ok, %d skipped, %d not ok; %d automake tests: %d pass, %d fail\n",
                     files, t, r["ok"], r["skipped"], files - r["ok"] - r["skipped"], am, amr["PASS"], am - amr["PASS"] - amr["SKIP"] }' "$f" ;;
    gdnsd) awk '/^Files=/ { fl = fl (fl ? "; " : "") $0; next } /^Result:/ { res = res (res ? ", " : "") $2; next }
                /Failed tests:/ { next }
                { files++; if ($2 == "ok") ok++; else if ($2 ~ /^skipped/) skip++; else { bad++; badl = badl " " $1 } }
                END { printf "%d test files (%s): %d ok, %d skipped, %d failed%s; prove: %s\n",
                      files, fl, ok, skip, bad, (bad ? " (" substr(badl, 2) ")" : ""), res }' "$f" ;;
    multipath-tools) awk '$NF == "no-output" { nout++; next } { prog[$1] = 1; n[$NF]++; tot++ }
                END { printf "%d programs with results (%d without), %d tests: %d ok, %d failed, %d skipped\n",
                      length(prog), nout, tot, n["OK"], n["FAILED"], n["SKIPPED"] }' "$f" ;;
  esac
}

# The grace-urcu side used grace-urcu and nothing of liburcu.
verify() { # prog dir
  local p=$1 dir=$2 elf=0 lib=0 grace=0 f needed hdr_bad hdr_grace
  while IFS= read -r f; do
    needed=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') || continue
    elf=$((elf + 1))
    if echo "$needed" | grep -q '^liburcu'; then lib=$((lib + 1)); echo "needs liburcu: ${f#"$dir"/}"; fi
    if echo "$needed" | grep -q '^libgrace-urcu\.so'; then grace=$((grace + 1)); fi
  done < <(find "$dir" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c \
             'head -c 4 "$1" | grep -q ELF' _ {} \; -print)
  # Compiler dependency files (automake .deps/*.Po/.Plo, gcc -MMD .d): the headers used.
  hdr_bad=$(find "$dir" \( -name '*.Po' -o -name '*.Plo' -o -name '*.d' \) -type f \
              -exec grep -ho '/usr/[^ :]*urcu[^ :]*\.h' {} + 2>/dev/null | sort -u | wc -l)
  hdr_grace=$(find "$dir" \( -name '*.Po' -o -name '*.Plo' -o -name '*.d' \) -type f \
              -exec grep -lF "$GP/include/grace-urcu/" {} + 2>/dev/null | wc -l)
  echo "elf=$elf needs_liburcu=$lib needs_grace_urcu=$grace system_urcu_headers=$hdr_bad depfiles_with_grace_urcu=$hdr_grace"
}

if [ $REPORT = 0 ]; then
  for p in "${PROGS[@]}"; do
    for s in "${SIDES[@]}"; do run_side "$p" "$s"; done
  done
else
  # --report: the results again from the logs and build trees that the runs left
  for p in "${PROGS[@]}"; do
    for s in control grace; do
      r=$RES/$p.$s
      if [ -f "$LOG/$p.$s.test.log" ] && [ "$(cat "$r.build" 2>/dev/null)" = ok ]; then
        results "$p" "$WORK/$s/$p" "$LOG/$p.$s.test.log" > "$r.results" || true
        summarize "$p" "$r.results" > "$r.counts" || true
      fi
      if [ $s = grace ] && [ -d "$WORK/$s/$p" ]; then verify "$p" "$WORK/$s/$p" > "$r.verify" || true; fi
    done
  done
fi

# 5. the page: every program with results in WORK (a run may name fewer programs)
ALL=()
for p in knot gdnsd multipath-tools; do [ -f "$RES/$p.control.build" ] && ALL+=("$p"); done
same() { # prog: identical per-test results?
  local a=$RES/$1.control.results b=$RES/$1.grace.results
  if [ -f "$a" ] && [ -f "$b" ] && cmp -s "$a" "$b"; then echo identical
  elif [ -f "$a" ] && [ -f "$b" ]; then echo "DIFFERENT ($(diff "$a" "$b" | grep -c '^[<>]') lines differ)"
  else echo "not compared"; fi
}
cell() { [ -f "$1" ] && cat "$1" || echo "-"; }
when() { # the grace-urcu side's run: its date and grace-urcu commit
  if [ -f "$RES/$1.grace.when" ]; then cat "$RES/$1.grace.when"
  elif [ -f "$RES/$1.grace.build" ]; then echo "$(date -u -r "$RES/$1.grace.build" +%Y-%m-%d), $GRACE_COMMIT"
  else echo "-"; fi
}
kv() { sed -n "s/.*\b$2=\([0-9]*\).*/\1/p" "$1" 2>/dev/null; }
lu_ver=$(dpkg-query -W -f '${Version}' liburcu-dev 2>/dev/null || echo "?")
{
  echo "<!-- SPDX-License-Identifier: MIT -->"
  echo "<!-- Written by compat/tests/realclients.sh: edit the script, not this page. -->"
  echo "# grace-urcu on real programs: liburcu's Debian clients"
  echo
  echo "Debian bookworm's reverse dependencies of liburcu-dev, built from their Debian source packages with sources and build files unchanged, once against Debian's liburcu $lu_ver (the control) and once against grace-urcu with liburcu-dev hidden from the build (a private mount namespace covers each of its files), then each program's own test suite. \`compat/tests/realclients.sh\` (a long run, not part of the test command) does it all on a fresh bookworm machine and wrote this page."
  echo
  echo "Latest run: \`compat/tests/realclients.sh\`, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), gcc $(gcc -dumpfullversion); each program's date and grace-urcu commit are in the last table."
  echo
  echo "| program | version | build: control / grace-urcu | tests: control | tests: grace-urcu | per-test results |"
  echo "|---|---|---|---|---|---|"
  for p in "${ALL[@]}"; do
    echo "| $p | $(version_of "$p") | $(cell "$RES/$p.control.build") / $(cell "$RES/$p.grace.build") | $(cell "$RES/$p.control.counts") | $(cell "$RES/$p.grace.counts") | $(same "$p") |"
  done
  echo
  echo "## Did the grace-urcu side use grace-urcu?"
  echo
  echo "In its namespace, liburcu-dev's headers are \`#error\`s and its libraries and .pc files name a library that does not exist, so any use fails the build. After the build, \`readelf -d\` on every ELF file of the build tree, and the compiler's dependency files (where the build writes them):"
  echo
  echo "| program | ELF files | needing liburcu*.so | needing libgrace-urcu.so.1 | liburcu headers in dependency files | dependency files naming grace-urcu headers |"
  echo "|---|---|---|---|---|---|"
  for p in "${ALL[@]}"; do
    v=$RES/$p.grace.verify
    echo "| $p | $(kv "$v" elf) | $(kv "$v" needs_liburcu) | $(kv "$v" needs_grace_urcu) | $(kv "$v" system_urcu_headers) | $(kv "$v" depfiles_with_grace_urcu) |"
  done
  echo
  echo "## How each program is built and tested"
  echo
  echo "Both sides run the same commands in a fresh copy of the sources; the grace-urcu side only adds search paths to the environment (\`PKG_CONFIG_PATH=<prefix>/lib/grace-urcu/pkgconfig\`, \`CPATH=<prefix>/include/grace-urcu\`, \`LDFLAGS=-L<prefix>/lib/grace-urcu\`, and \`LD_RUN_PATH\`, \`LD_LIBRARY_PATH=<prefix>/lib\` for the tests)."
  echo
  echo "| program | run on, grace-urcu commit | build | test | test exit status: control / grace-urcu | build s: control / grace-urcu | test s: control / grace-urcu |"
  echo "|---|---|---|---|---|---|---|"
  for p in "${ALL[@]}"; do
    echo "| $p | $(when "$p") | \`$(build_cmd "$p")\` | \`$(test_cmd "$p")\` | $(cell "$RES/$p.control.test_rc") / $(cell "$RES/$p.grace.test_rc") | $(cell "$RES/$p.control.build_s") / $(cell "$RES/$p.grace.build_s") | $(cell "$RES/$p.control.test_s") / $(cell "$RES/$p.grace.test_s") |"
  done
  [ -z "$GDNSD_NOTE" ] || { echo; echo "gdnsd: $GDNSD_NOTE."; }
  echo
  echo "A per-test result is a test program's count of each TAP result (Knot), a prove test file's verdict (gdnsd), a cmocka test's verdict (multipath-tools); \"identical\" means the two sides' lists are equal line for line."
} > "$WORK/realclients.md"
if [ "$PAGE" != - ]; then
  cp "$WORK/realclients.md" "$PAGE.tmp"
  mv "$PAGE.tmp" "$PAGE"
  log "wrote $PAGE"
fi
cat "$WORK/realclients.md"
# The exit status (for ctest): 0 when every program named built on both sides, the grace-urcu
# side needs no liburcu*.so, and every test result equals the control's.
bad=0
for p in "${PROGS[@]}"; do
  if [ "$(cell "$RES/$p.control.build")/$(cell "$RES/$p.grace.build")" != ok/ok ] ||
     [ "$(same "$p")" != identical ] || [ "$(kv "$RES/$p.grace.verify" needs_liburcu)" != 0 ]; then
    log "$p: not the control's results"
    bad=1
  fi
done
exit $bad
