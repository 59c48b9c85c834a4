#!/usr/bin/env bash
# Times the Glob and Grep tools against ripgrep and fd on the same tree
# (docs/performance.md, "Search tools"): a copy of the Go source tree and a
# generated node_modules that .gitignore excludes, at least 20,000 files
# and 400 MB in all. Each case runs RUNS times, ours and the peer's
# alternately so that load from other jobs falls on both alike, after one
# warm-up run of each; it prints the median wall time of each, their ratio,
# and the largest peak RSS.
#
#   interop/bench-search.sh            # RUNS=7, tree in /tmp/agent-search-bench
#   RUNS=11 SEARCH_BENCH_TREE=/path interop/bench-search.sh
#
# Needs rg and fd (Debian: apt-get install ripgrep fd-find; .ci/run
# installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${SEARCH_BENCH_TREE:-/tmp/agent-search-bench}
runs=${RUNS:-7}

rg=$(command -v rg) || { echo "bench-search: rg not found (apt-get install ripgrep)" >&2; exit 1; }
fd=$(command -v fdfind || command -v fd) || { echo "bench-search: fd not found (apt-get install fd-find)" >&2; exit 1; }

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/searchbench" ./testdata/searchbench
go build -o "$bin/rssprobe" ./testdata/rssprobe

if [ ! -f "$tree/.complete" ]; then
  echo "bench-search: building the tree in $tree" >&2
  rm -rf "$tree"
  mkdir -p "$tree/.git"
  cp -r "$(go env GOROOT)/src" "$tree/go"
  printf 'node_modules/\n' >"$tree/.gitignore"
  # 300 packages of 30 files, about 28 KB each: JavaScript-shaped lines
  # that also hold the benchmark's literals, so an ignored file would
  # show up in the results.
  awk -v root="$tree/node_modules" 'BEGIN {
    for (p = 0; p < 300; p++) {
      dir = sprintf("%s/pkg-%03d/lib", root, p)
      system("mkdir -p " dir)
      for (f = 0; f < 30; f++) {
        file = sprintf("%s/mod%02d.js", dir, f)
        for (l = 0; l < 560; l++) {
          printf "function f%d_%d_%d(x) { return EncodeToString(x) + NewReader(%d) * %d; } // %s\n", p, f, l, l, p * f, "padding" >file
        }
        close(file)
      }
    }
  }'
  touch "$tree/.complete"
fi
files=$(find "$tree" -type f | wc -l)
mb=$(du -sm --apparent-size "$tree" | cut -f1)
ignored=$(du -sm --apparent-size "$tree/node_modules" | cut -f1)
echo "tree: $tree, $files files, $mb MB ($ignored MB in the ignored node_modules); $(nproc) cores; runs: $runs"
echo "peers: $("$rg" --version | sed -n 1p); $("$fd" --version); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# measure NAME OURS-JSON TOOL -- PEER COMMAND...
measure() {
  local name=$1 args=$2 tool=$3
  shift 4
  "$bin/searchbench" "$tree" "$tool" "$args" >/dev/null
  "$@" >/dev/null
  local ours=() peer=() rss_ours=0 rss_peer=0 t r
  for _ in $(seq "$runs"); do
    read -r t r < <("$bin/rssprobe" 1 "$bin/searchbench" "$tree" "$tool" "$args")
    ours+=("$t"); [ "$r" -gt "$rss_ours" ] && rss_ours=$r
    read -r t r < <("$bin/rssprobe" 1 "$@")
    peer+=("$t"); [ "$r" -gt "$rss_peer" ] && rss_peer=$r
  done
  local mo mp
  mo=$(printf '%s\n' "${ours[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  mp=$(printf '%s\n' "${peer[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  awk -v n="$name" -v o="$mo" -v p="$mp" -v ro="$rss_ours" -v rp="$rss_peer" 'BEGIN {
    printf "%-34s ours %7.1f ms  peer %7.1f ms  ratio %.2f  peak RSS ours %5.1f MB, peer %5.1f MB\n", n, o/1e6, p/1e6, o/p, ro/1024, rp/1024 }'
}

peer_rg=("$rg" --no-config --hidden --glob '!.git')
measure "literal, files_with_matches" '{"pattern":"EncodeToString"}' Grep -- "${peer_rg[@]}" -l EncodeToString "$tree"
measure "regex, count" '{"pattern":"[A-Z][a-z]+Reader\\(","output_mode":"count"}' Grep -- "${peer_rg[@]}" -c '[A-Z][a-z]+Reader\(' "$tree"
measure "content, -C 2" '{"pattern":"func NewReader","output_mode":"content","-C":2}' Grep -- "${peer_rg[@]}" -n -C2 'func NewReader' "$tree"
measure "Glob **/*_test.go" '{"pattern":"**/*_test.go"}' Glob -- "$fd" --hidden --exclude .git --glob '**/*_test.go' . "$tree"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
