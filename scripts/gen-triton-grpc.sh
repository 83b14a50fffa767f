#!/usr/bin/env bash
# Regenerates internal/tritonpb's Go code from grpc_service.proto (a subset
# of Triton's, field numbers as upstream). The generated files are
# committed: building and testing inferload never needs this script.
#
# Needs protoc (Debian: apt-get install protobuf-compiler; tested with
# 3.21.12). The Go plugins are installed at pinned versions into a
# temporary GOBIN, matching go.mod's google.golang.org/protobuf and grpc.
set -euo pipefail

PROTOC_GEN_GO=v1.36.12      # google.golang.org/protobuf
PROTOC_GEN_GO_GRPC=v1.6.2   # google.golang.org/grpc/cmd/protoc-gen-go-grpc

cd "$(dirname "$0")/.."
command -v protoc >/dev/null || { echo "protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
GOBIN=$bin go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"
PATH=$bin:$PATH protoc -I internal/tritonpb \
	--go_out=internal/tritonpb --go_opt=paths=source_relative \
	--go-grpc_out=internal/tritonpb --go-grpc_opt=paths=source_relative \
	internal/tritonpb/grpc_service.proto
echo "regenerated internal/tritonpb"
