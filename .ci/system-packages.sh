#!/usr/bin/env bash
# The system parts of qnmodel's build and tests (.ci/system-parts.tsv), in one place.
#
#   .ci/system-packages.sh [build|test|all]        install what is missing (root with apt-get),
#                                                  otherwise name it and the command; exit 0
#   .ci/system-packages.sh --check [GROUP]         only name what is missing; exit 0
#   .ci/system-packages.sh --record FILE [GROUP]   as the first form, then write which build
#                                                  and fuzz parts are here to FILE, touching it
#                                                  only when that changed (make reinstalls then)
#
# GROUP is build (what `pip install .` compiles against: qnbench's nfs engine and MPI build),
# fuzz (clang and its runtime, which the build probes for the libFuzzer targets), test (the
# peers and the testbed), or all (the default). Called by .ci/run (all) and by the Makefile's
# install step (build) and test step (fuzz, then test).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
table="${QNMODEL_SYSTEM_PARTS:-$here/system-parts.tsv}"  # the variable: for its own tests

check_only=0
record=""
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check_only=1; shift ;;
    --record) record="${2:?--record needs a file}"; shift 2 ;;
    build|fuzz|test|all) break ;;
    *) echo "system-packages.sh: unknown argument '$1' (build, fuzz, test, all, --check, --record FILE)" >&2
       exit 2 ;;
  esac
done
group="${1:-all}"

# present CHECK: true when one of the '|'-separated alternatives holds
present() {
  local alt
  local IFS='|'
  for alt in $1; do
    case "$alt" in
      cmd:*) command -v "${alt#cmd:}" >/dev/null 2>&1 && return 0
             [ -x "/usr/sbin/${alt#cmd:}" ] && return 0 ;;
      file:*) [ -e "${alt#file:}" ] && return 0 ;;
      glob:*) compgen -G "${alt#glob:}" >/dev/null 2>&1 && return 0 ;;
    esac
  done
  return 1
}

# rows of the group: part, check, packages, purpose
rows() {
  local part grp check pkgs what
  while IFS=$'\t' read -r part grp check pkgs what; do
    case "$part" in ''|'#'*|part) continue ;; esac
    [ "$group" = all ] || [ "$group" = "$grp" ] || continue
    printf '%s\t%s\t%s\t%s\n' "$part" "$check" "$pkgs" "$what"
  done < "$table"
}

missing_parts=()
missing_pkgs=()
scan() {
  missing_parts=()
  missing_pkgs=()
  local part check pkgs what p
  while IFS=$'\t' read -r part check pkgs what; do
    if ! present "$check"; then
      missing_parts+=("$part ($what)")
      for p in $pkgs; do
        case " ${missing_pkgs[*]-} " in *" $p "*) ;; *) missing_pkgs+=("$p") ;; esac
      done
    fi
  done < <(rows)
}

scan
if [ ${#missing_pkgs[@]} -gt 0 ]; then
  how="apt-get update && apt-get install -y --no-install-recommends ${missing_pkgs[*]}"
  if [ "$check_only" = 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "system-packages: installing ${missing_pkgs[*]} (for: ${missing_parts[*]})" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing_pkgs[@]}" >/dev/null
    scan
    if [ ${#missing_parts[@]} -gt 0 ]; then
      echo "system-packages: still missing after apt-get: ${missing_parts[*]}" >&2
      exit 1
    fi
  else
    echo "system-packages: missing ${missing_parts[*]}" >&2
    echo "system-packages: install them with: $how" >&2
    echo "system-packages: (tests that need them are skipped, naming the part; under CI they fail)" >&2
  fi
fi

if [ -n "$record" ]; then
  mkdir -p "$(dirname "$record")"
  tmp="$record.tmp.$$"
  for group in build fuzz; do
    while IFS=$'\t' read -r part check pkgs what; do
      if present "$check"; then echo "$part: present"; else echo "$part: missing ($pkgs)"; fi
    done < <(rows)
  done > "$tmp"
  if [ -f "$record" ] && cmp -s "$tmp" "$record"; then
    rm -f "$tmp"
  else
    mv -f "$tmp" "$record"
  fi
fi
exit 0
