#!/usr/bin/env bash
# Scale figure of a distributed run on this machine (BENCHMARKS.md): for 1,
# 2 and 4 segments, each a process of its own, against the simulator sped
# up so it answers in microseconds, with a collector gathering them on
# loopback. Each segment runs RATE requests/s (open loop) for DURATION.
# One segment is a plain run (no collector): the baseline. Prints, per
# segment count: the merged run's achieved requests/s, the
# late-start share, each segment's CPU (user + system, from GNU time) per
# request, and the collector's CPU per record it took in (its whole life:
# ingest, the live view behind its progress line, and the merge at the end).
#
#   scripts/dist-scale.sh [RATE] [DURATION]     # default 400 10s
#
# Needs go, jq and GNU time (/usr/bin/time). Everything listens on
# 127.0.0.1; nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-400}
duration=${2:-10s}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/inferload" ./cmd/inferload
bin=$work/inferload

port=$((20000 + $$ % 20000))
"$bin" sim --addr "127.0.0.1:$port" --speedup 1000 2>"$work/sim.log" &
pids+=($!)
for _ in $(seq 100); do
	curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
	sleep 0.1 # waiting for a port, not synchronising
done

cpu() { awk '{ printf "%.3f", $1 + $2 }' "$1"; }

printf '%-8s %10s %12s %8s %28s %22s\n' segments "rate set" "achieved/s" "late" "client CPU µs/request (each)" "collector CPU µs/record"
for n in 1 2 4; do
	dir=$work/n$n
	mkdir -p "$dir"
	cat >"$dir/plan.yaml" <<EOF
name: scale-$n
target: {url: "http://127.0.0.1:$port/v1"}
load: {rate: $((rate * n)), duration: $duration}
workload: {input_tokens: "16", output_tokens: "16", seed: 1}
observe: {gpu: false, scrape: "off"}
EOF
	if [ "$n" = 1 ]; then
		# One segment is a plain run: a segment needs N ≥ 2.
		/usr/bin/time -f "%U %S" -o "$dir/seg0.time" \
			"$bin" run -f "$dir/plan.yaml" --no-preflight --out "$dir/seg0" -q -o json >"$dir/seg0.json" 2>"$dir/seg0.log" || true
		cp "$dir/seg0.json" "$dir/merged.json"
	else
		/usr/bin/time -f "%U %S" -o "$dir/collector.time" \
			"$bin" collect --listen 127.0.0.1:0 --addr-file "$dir/addr" --segments "$n" \
			--dir "$dir/gathered" --out "$dir/merged" -o json >"$dir/merged.json" 2>"$dir/collector.log" &
		col=$!
		pids+=("$col")
		for _ in $(seq 100); do [ -s "$dir/addr" ] && break; sleep 0.05; done
		segs=()
		for i in $(seq 0 $((n - 1))); do
			/usr/bin/time -f "%U %S" -o "$dir/seg$i.time" \
				"$bin" run -f "$dir/plan.yaml" --segment "$i/$n" --no-preflight \
				--collector "http://$(cat "$dir/addr")" --collector-token-file "$dir/gathered/collector.token" --out "$dir/seg$i" -q -o json >"$dir/seg$i.json" 2>"$dir/seg$i.log" &
			segs+=($!)
		done
		for p in "${segs[@]}"; do wait "$p" || true; done
		wait "$col" || true
	fi
	total=$(jq '.requests.total' "$dir/merged.json")
	achieved=$(jq '.throughput.requests_per_s' "$dir/merged.json")
	late=$(jq '.requests.late / ([.requests.total, 1] | max)' "$dir/merged.json")
	per=""
	for i in $(seq 0 $((n - 1))); do
		reqs=$(jq '.requests.total' "$dir/seg$i.json")
		per="$per $(awk -v c="$(cpu "$dir/seg$i.time")" -v r="$reqs" 'BEGIN { printf "%.0f", 1e6 * c / r }')"
	done
	colcpu="-"
	if [ -f "$dir/collector.time" ]; then
		colcpu=$(awk -v c="$(cpu "$dir/collector.time")" -v r="$total" 'BEGIN { printf "%.1f", 1e6 * c / r }')
	fi
	printf '%-8s %10s %12.1f %8.3f %28s %22s\n' "$n" "$((rate * n))" "$achieved" "$late" "$per" "$colcpu"
done
