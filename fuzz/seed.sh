#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from wavecast's malformed-input corpus and small valid inputs
# from ../shared (read, never committed: fuzz/corpus is ignored).
set -euo pipefail
cd "$(dirname "$0")"
shared=../../shared/data
rm -rf corpus && mkdir -p corpus/{hf_config,gpu_toml,onnx,trace,neusight_opgraph,neusight_ops}
cp ../tests/corpus/config/* corpus/hf_config/
cp "$shared"/neusight/model_configs/*.json corpus/hf_config/ 2>/dev/null || true
cp ../tests/corpus/gpu/* corpus/gpu_toml/
cp ../crates/wavecast-gpu/data/gpus.toml corpus/gpu_toml/builtin.toml
cp ../tests/corpus/onnx/* corpus/onnx/
cp ../tests/corpus/trace/* corpus/trace/
# Twenty of NeuSight's operator graphs (CSV).
find "$shared"/neusight/label -name '*.csv' | sort | head -20 | while read -r f; do cp "$f" "corpus/neusight_opgraph/$(basename "$(dirname "$f")")-$(basename "$f")"; done
# The first rows of each of NeuSight's per-op measurement files.
for f in "$shared"/neusight/ops/train/*/*.csv; do head -40 "$f" > "corpus/neusight_ops/$(basename "$(dirname "$f")")-$(basename "$f")"; done
for d in corpus/*; do echo "$d: $(ls "$d" | wc -l) seeds"; done
