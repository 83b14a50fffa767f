#!/usr/bin/env bash
# Runs the documented benchmarks one package at a time (see BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'SSEParse|ChunkScan|EventPath|StampedRead' -benchmem -benchtime 1s ./protocol/
go test -run '^$' -bench 'StreamEndToEnd|NonStreaming' -benchmem -benchtime 3s ./protocol/
go test -run '^$' -bench 'StreamMemory' -benchtime 10000x ./protocol/
go test -run '^$' -bench 'OpenLoopSendLag|TTFTAccuracy' -benchtime 1x -count 3 ./engine/
go test -run '^$' -bench 'TTFTAtScale' -benchtime 1x -timeout 30m ./engine/
go test -run '^$' -bench 'ConcurrentStreams10k' -benchtime 1x ./engine/
go test -run '^$' -bench 'StreamedTokens' -cpu 1 -benchtime 400x ./sim/
go test -run '^$' -bench 'ConcurrentStreams$' -benchtime 1x ./sim/
go test -run '^$' -bench 'EngineStep' -benchmem ./sim/
go test -run '^$' -bench . -benchmem -benchtime 1s ./record/ ./rundir/ ./schedule/ ./workload/
