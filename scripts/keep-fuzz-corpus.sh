#!/bin/sh
# Copy the corpus `make fuzz` grew (kept by Go in its cache) into each
# package's testdata/fuzz/<FuzzTarget>/, so the seeds are versioned and
# every `go test` run replays them. At most MAX (default 25) new files
# per target, smallest first: a corpus is for coverage, not for bulk.
set -eu
MAX=${MAX:-25}
mod=$(go list -m)
cache=$(go env GOCACHE)/fuzz/$mod
[ -d "$cache" ] || { echo "no fuzz cache under $cache: run make fuzz first"; exit 0; }
for dir in "$cache"/*/Fuzz* "$cache"/Fuzz*; do
	[ -d "$dir" ] || continue
	target=$(basename "$dir")
	pkg=$(dirname "${dir#"$cache"}")
	dest=".${pkg}/testdata/fuzz/$target"
	[ "$pkg" = "/" ] && dest="testdata/fuzz/$target"
	mkdir -p "$dest"
	n=0
	for f in $(ls -Sr "$dir"); do
		[ -e "$dest/$f" ] && continue
		[ "$n" -ge "$MAX" ] && break
		cp "$dir/$f" "$dest/$f"
		n=$((n + 1))
	done
	echo "$dest: $n new"
done
