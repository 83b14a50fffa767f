#!/bin/sh
# Builds llama.cpp's llama-server, the third-party engine the real-engine
# tests run on loopback, from the source kept in the repository
# (third_party/llama.cpp/llama.cpp-b4747.tar.gz; LLAMACPP_TARBALL overrides),
# into a cache outside the repository ($INFERLOAD_ENGINES, default
# ~/.cache/inferload/engines). Idempotent and silent when the binary is
# there: `make test` runs it every time. Prints nothing else on success.
#
# Needs cmake and a C++ compiler (Debian's cmake and g++, installed here
# when missing, as root or with sudo). About 2-3 minutes on 2 cores.
set -eu

version=b4747
root=$(cd "$(dirname "$0")/.." && pwd)
tarball=${LLAMACPP_TARBALL:-$root/third_party/llama.cpp/llama.cpp-$version.tar.gz}
cache=${INFERLOAD_ENGINES:-$HOME/.cache/inferload/engines}
dest=$cache/llama.cpp-$version
bin=$dest/build/bin/llama-server

[ -x "$bin" ] && exit 0

if [ ! -f "$tarball" ]; then
	echo "install-llamacpp: no llama.cpp source at $tarball (set LLAMACPP_TARBALL to llama.cpp-$version.tar.gz)" >&2
	exit 1
fi

missing=""
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
if [ -n "$missing" ]; then
	sudo=""
	[ "$(id -u)" != 0 ] && sudo="sudo"
	echo "install-llamacpp: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null
	# shellcheck disable=SC2086 # a list of package names
	$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

echo "install-llamacpp: building llama-server $version into $dest (a few minutes, once)" >&2
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp/src"
tar -xzf "$tarball" -C "$dest.tmp/src" --strip-components=1
# Static libraries: one binary, which still runs once moved into place.
cmake -S "$dest.tmp/src" -B "$dest.tmp/build" -DLLAMA_CURL=OFF -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_SERVER=ON \
	-DCMAKE_BUILD_TYPE=Release >"$dest.tmp/cmake.log" 2>&1 ||
	{ tail -20 "$dest.tmp/cmake.log" >&2; exit 1; }
cmake --build "$dest.tmp/build" --target llama-server -j "$(nproc)" >"$dest.tmp/build.log" 2>&1 ||
	{ tail -30 "$dest.tmp/build.log" >&2; exit 1; }
rm -rf "$dest"
mv "$dest.tmp" "$dest"
"$bin" --version >/dev/null 2>&1 || { echo "install-llamacpp: $bin does not run" >&2; exit 1; }
