#!/usr/bin/env bash
# Screenshots of the one-file HTML report (`--html`) and of the local page (`wavecast ui`) in
# headless Chromium (Debian's `chromium` package: apt-get install -y chromium), at desktop
# (1440x900) and laptop (1280x720) sizes, into bench/results/screenshots/. Before taking them it
# checks, on the DOM Chromium built, that every chart rendered: an <svg> with both axes' lines,
# tick labels, a title and marks (bars or points) that carry hover titles.
#
# Usage: bench/screenshots.sh   (after `cargo build --release`; WAVECAST_BIN overrides the binary)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${WAVECAST_BIN:-target/release/wavecast}"
out=bench/results/screenshots
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
    echo "needs Chromium: apt-get install -y chromium" >&2
    exit 1
fi
mkdir -p "$out"
tmp="$(mktemp -d)"
ui_pid=""
cleanup() {
    if [ -n "$ui_pid" ]; then kill "$ui_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

browser() {
    # --no-sandbox: Chromium refuses to run as root without it (CI containers).
    "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" "$@" 2>/dev/null
}

# Checks the DOM of $1 (a URL): charts with axes, tick labels and hover titles.
check_charts() {
    local url="$1" dom="$tmp/dom.html"
    browser --dump-dom "$url" > "$dom"
    python3 - "$dom" "$url" <<'PY'
import re, sys
dom, url = open(sys.argv[1]).read(), sys.argv[2]
svgs = re.findall(r"<svg.*?</svg>", dom, re.S)
assert svgs, f"{url}: no chart"
for svg in svgs:
    title = re.search(r'class="chart-title"[^>]*>([^<]+)<', svg)
    assert title, f"{url}: a chart without a title"
    assert 'class="axis x-axis"' in svg, f"{url}: {title[1]}: no x axis"
    ticks = re.findall(r"<text[^>]*>([^<]+)</text>", svg)
    assert len(ticks) >= 4, f"{url}: {title[1]}: no tick labels"
    marks = len(re.findall(r"<(?:rect|circle)[^>]*>\s*<title>", svg))
    assert marks > 0, f"{url}: {title[1]}: no bars or points with hover titles"
    print(f"  {title[1]}: {marks} marks, {len(ticks)} labels")
assert "http" not in re.sub(r"^.*?<body", "", dom, flags=re.S).lower().replace(url.lower(), ""), f"{url}: a network reference"
PY
}

shoot() {
    local name="$1" url="$2"
    for size in 1440x900 1280x720; do
        browser --window-size="${size/x/,}" --screenshot="$out/$name-$size.png" "$url" > /dev/null
        echo "wrote $out/$name-$size.png"
    done
}

echo "one-file reports (--html):"
"$bin" plan serve --model qwen3-32b --gpu h100 --gpus 8 --slo-tpot 30 --html "$tmp/plan_serve.html" > /dev/null
"$bin" predict --model gpt2-large --gpu h100 --batch 4 --mode train --html "$tmp/predict.html" > /dev/null
for page in plan_serve predict; do
    check_charts "file://$tmp/$page.html"
done
shoot report-plan-serve "file://$tmp/plan_serve.html"

echo "local page (wavecast ui):"
"$bin" ui --port 0 > "$tmp/ui.log" &
ui_pid=$!
for _ in $(seq 50); do
    grep -q "serving on" "$tmp/ui.log" && break
    sleep 0.2
done
base="$(grep -o 'http://[0-9.:]*' "$tmp/ui.log")"
ask="$base/serve-sim?model=llama-3-8b&gpu=h100&layout=tp1&concurrency=16&input=1024&output=256&formats.dtype=bf16&formats.backend=vllm"
check_charts "$ask"
shoot ui-serve-sim "$ask"
