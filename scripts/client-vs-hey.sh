#!/usr/bin/env bash
# Client CPU per million streamed tokens, inferload beside hey (which reads
# each body whole and parses nothing), against one `inferload sim` on
# 127.0.0.1 paced so that every stream gets one token per step.
#
#   scripts/client-vs-hey.sh [paced|bulk] [requests] [rounds]
#
# paced: a 10 ms step (one token every 10 ms per stream, each its own
#        read, as a real server streams);
# bulk:  a 20 µs step, so reads carry many tokens.
# 128 streams, 200 output tokens each (ignore_eos), 64-token prompts. The
# figure is user+system CPU of the client process (from /usr/bin/time), so
# inferload's includes its whole run: records, histograms, the run
# directory and the report. INFERLOAD_CPUPROFILE=FILE profiles inferload's
# run (pprof). hey is installed from the Go module proxy into
# a temporary GOBIN (never by the tests). BENCHMARKS.md has the results.
# rounds (default 1) runs the pair that many times, hey and inferload
# alternating against the same simulator, and ends with the median ratio:
# on a shared VM one pair's ratio moves by ±30% from run to run.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-paced}
profile=${INFERLOAD_CPUPROFILE:-}
unset INFERLOAD_CPUPROFILE # the simulator and hey are not profiled
requests=${2:-1920}
rounds=${3:-1}
streams=128
tokens=200
case $mode in
paced) step=10ms ;;
bulk) step=20us ;;
*) echo "usage: $0 [paced|bulk] [requests]" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'kill $sim_pid 2>/dev/null || true; rm -rf "$work"' EXIT
GOBIN=$work/bin go install github.com/rakyll/hey@v0.1.5
go build -o "$work/bin/inferload" ./cmd/inferload

cat >"$work/pacing.yaml" <<YAML
base: tiny
name: pacing
max_num_seqs: 256
max_num_batched_tokens: 65536
num_gpu_blocks: 8192
cost: {step_overhead: $step, prefill_per_token: 0s, decode_per_seq: 0s, kv_read_per_token: 0s}
YAML
port=$((20000 + RANDOM % 20000))
"$work/bin/inferload" sim --profile "$work/pacing.yaml" --addr 127.0.0.1:$port >"$work/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do
	curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
	sleep 0.1 # waiting for the server to listen, not synchronising a test
done

# cpu CMD...: runs CMD and prints its user+system CPU seconds on fd 3.
cpu() { /usr/bin/time -f '%U %S' -o "$work/time" "$@" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
	awk '{print $1 + $2}' "$work/time"; }

body=$(printf '{"model":"tiny-sim","messages":[{"role":"user","content":"%s"}],"max_tokens":%d,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}' \
	"$(printf 'word %.0s' $(seq 64))" $tokens)
per_m() { awk -v c="$1" -v n="$((requests * tokens))" 'BEGIN {printf "%.1f", c / n * 1e6}'; }
ratios=()
for round in $(seq "$rounds"); do
	hey_cpu=$(cpu "$work/bin/hey" -n "$requests" -c $streams -m POST -T application/json -d "$body" "http://127.0.0.1:$port/v1/chat/completions")
	hey_size=$(awk '/Size\/request:/ {print $2}' "$work/out")
	grep -q '\[200\]' "$work/out" || { cat "$work/out" >&2; echo "hey: not every request succeeded" >&2; exit 1; }

	il_cpu=$(INFERLOAD_CPUPROFILE=$profile cpu "$work/bin/inferload" run --url "http://127.0.0.1:$port/v1" --model tiny-sim --concurrency $streams \
		--requests "$requests" --input-tokens 64 --output-tokens $tokens --gpu=false --out "$work/runs" --name vs-hey)

	ratio=$(awk -v a="$il_cpu" -v b="$hey_cpu" 'BEGIN {printf "%.2f", a / b}')
	ratios+=("$ratio")
	echo "mode=$mode round=$round/$rounds streams=$streams requests=$requests tokens/request=$tokens (hey read $hey_size bytes/request)"
	echo "hey:       $hey_cpu CPU-s, $(per_m "$hey_cpu") CPU-s per 1M tokens"
	echo "inferload: $il_cpu CPU-s, $(per_m "$il_cpu") CPU-s per 1M tokens"
	echo "ratio inferload/hey: $ratio"
done
if [ "$rounds" -gt 1 ]; then
	printf '%s\n' "${ratios[@]}" | sort -n | awk '{r[NR] = $1} END {m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
		printf "median ratio over %d rounds: %.2f (min %.2f, max %.2f)\n", NR, m, r[1], r[NR]}'
fi
