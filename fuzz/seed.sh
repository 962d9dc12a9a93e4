#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from wavecast's malformed-input corpus (tests/corpus) and small
# valid inputs from ../shared (read, never committed: fuzz/corpus is ignored).
set -euo pipefail
cd "$(dirname "$0")"
shared=../../shared/data
tc=../tests/corpus
rm -rf corpus && mkdir -p corpus/{hf_config,gpu_toml,onnx,trace,neusight_opgraph,neusight_ops,aiconfigurator_parquet,modern_csv}
# Hugging Face configs: the corpus, NeuSight's and AIConfigurator's real ones.
cp "$tc"/config/* corpus/hf_config/
cp "$shared"/neusight/model_configs/*.json corpus/hf_config/ 2>/dev/null || true
for f in "$shared"/aiconfigurator/model_configs/*_config.json; do
  case "$f" in *hf_quant*) ;; *) cp "$f" corpus/hf_config/ ;; esac
done
# GPU files: the corpus and the built-in catalog.
cp "$tc"/gpu/* corpus/gpu_toml/
cp ../crates/wavecast-gpu/data/gpus.toml corpus/gpu_toml/builtin.toml
# ONNX: the corpus (incl. the valid CNN and MLP it builds).
cp "$tc"/onnx/* "$tc"/fixtures/*.onnx corpus/onnx/
# Traces: the corpus and the two smallest real traces (HTA test data, MIT).
cp "$tc"/trace/* "$tc"/fixtures/*.json corpus/trace/
cp "$shared"/kineto/a100_triton_example.json.gz "$shared"/kineto/mi250_minitoy_train.json.gz corpus/trace/ 2>/dev/null || true
# NeuSight operator graphs: the corpus's, and twenty real ones (CSV).
for f in "$tc"/neusight/e2e/*/opgraph/*.csv; do cp "$f" "corpus/neusight_opgraph/$(basename "$(dirname "$(dirname "$f")")").csv"; done
find "$shared"/neusight/opgraph -name '*.csv' | sort | head -20 | while read -r f; do cp "$f" "corpus/neusight_opgraph/real-$(basename "$f")"; done
# NeuSight per-op CSVs: the corpus's, and the first rows of each real file.
find "$tc"/neusight/ops -name '*.csv' | while read -r f; do cp "$f" "corpus/neusight_ops/$(echo "${f#"$tc"/neusight/ops/}" | tr '/' '_')"; done
for f in "$shared"/neusight/ops/train/*/*.csv; do head -40 "$f" > "corpus/neusight_ops/real-$(basename "$(dirname "$f")")-$(basename "$f")"; done
# Modern-GPU tables: the committed fixtures (cut from ../shared) and the corpus's damaged ones.
find ../tests/fixtures/modern ../tests/corpus/modern -name '*.parquet' -type f | sort | while read -r f; do cp "$f" "corpus/aiconfigurator_parquet/$(echo "${f#../}" | tr '/' '_')"; done
find ../tests/fixtures/modern ../tests/corpus/modern -name '*.csv' -type f | sort | while read -r f; do cp "$f" "corpus/modern_csv/$(echo "${f#../}" | tr '/' '_')"; done
for d in corpus/*; do echo "$d: $(ls "$d" | wc -l) seeds"; done
