#!/bin/sh
# Regenerates the screenshots in docs/img/ that docs/reading-the-report.md
# shows: runs the demo (simulated server, no GPU or network) twice for a short
# time, once per simulated deployment, compares the two runs, and saves one
# PNG per section of report.html and of the compare page with headless
# Chromium (internal/tools/screenshot). `make screenshots` runs it.
#
#   scripts/screenshots.sh [OUT_DIR]     (default docs/img; about 1.5 minutes)
#
# Environment: DURATION (default 30s) and WARMUP (default 5s) of each demo.
set -eu

out="${1:-docs/img}"
duration="${DURATION:-30s}"
warmup="${WARMUP:-5s}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

go build -o "$work/inferload" ./cmd/inferload
go build -o "$work/screenshot" ./internal/tools/screenshot

# A 7B model on an A100 with a few injected 503s (so the errors section has
# something to show), then an 8B model on an H100 to compare against.
"$work/inferload" demo -q --profile a100-7b --duration "$duration" --warmup "$warmup" \
	--concurrency 32 --faults status503=0.02 --out "$work/runs"
"$work/inferload" demo -q --profile h100-8b --duration "$duration" --warmup "$warmup" \
	--concurrency 32 --faults status503=0.02 --out "$work/runs"
set -- "$work"/runs/*
base="$1"
cur="$2"

# compare exits 98 on a regression; the page is written either way.
"$work/inferload" compare --html "$work/compare.html" "$base" "$cur" >/dev/null || [ $? -eq 98 ]

mkdir -p "$out"
"$work/screenshot" -page "$base/report.html" -out "$out" -prefix report-
"$work/screenshot" -page "$work/compare.html" -out "$out" -prefix ""
