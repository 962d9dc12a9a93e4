"""Markdown tables and an SVG scatter from `wavecast eval training --json` (see bench/training.sh)."""
import datetime, json, math, os, statistics, sys

tmp, shared, own, rev, svg_path = sys.argv[1:6]


def load(name):
    path = os.path.join(tmp, name)
    return json.load(open(path)) if os.path.exists(path) else None


def band_table(r):
    print("| band | runs | mean APE | median APE | mean error (+ too fast) |")
    print("|---|---|---|---|---|")
    for b in r["bands"]:
        if b["band"].startswith("source=") or b["band"].startswith("gpu="):
            continue
        print(f"| {b['band']} | {b['n']} | {b['mean_ape']:.1f} % | {b['median_ape']:.1f} % | {b['mean_error_pct']:+.1f} % |")


def by_key(r, prefix):
    print("| group | runs | mean APE | median APE | mean error |")
    print("|---|---|---|---|---|")
    for b in r["bands"]:
        if b["band"].startswith(prefix):
            print(f"| {b['band'][len(prefix):]} | {b['n']} | {b['mean_ape']:.1f} % | {b['median_ape']:.1f} % | {b['mean_error_pct']:+.1f} % |")


def scatter(sets, path):
    """Log-log predicted vs measured tokens/s per GPU, one colour per set, the diagonal and ±12 %."""
    pts = [(r["measured_tokens_per_s_per_gpu"], r["predicted_tokens_per_s_per_gpu"], colour) for rows, colour, _ in sets for r in rows]
    lo = 10 ** math.floor(math.log10(min(min(m, p) for m, p, _ in pts)))
    hi = 10 ** math.ceil(math.log10(max(max(m, p) for m, p, _ in pts)))
    size, pad = 520, 60
    def xy(v):
        return pad + (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (size - 2 * pad)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" font-family="sans-serif" font-size="11">',
           f'<rect width="{size}" height="{size}" fill="white"/>']
    decade = lo
    while decade <= hi:
        p = xy(decade)
        out.append(f'<line x1="{p:.1f}" y1="{size - pad}" x2="{p:.1f}" y2="{pad}" stroke="#eee"/>')
        out.append(f'<line x1="{pad}" y1="{size - p:.1f}" x2="{size - pad}" y2="{size - p:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{p:.1f}" y="{size - pad + 14}" text-anchor="middle">{decade:g}</text>')
        out.append(f'<text x="{pad - 4}" y="{size - p + 4:.1f}" text-anchor="end">{decade:g}</text>')
        decade *= 10
    for f, dash in [(1.0, ""), (1.12, ' stroke-dasharray="4 3"'), (1 / 1.12, ' stroke-dasharray="4 3"')]:
        out.append(f'<line x1="{xy(lo):.1f}" y1="{size - xy(lo * f):.1f}" x2="{xy(hi / f if f > 1 else hi):.1f}" y2="{size - xy(hi if f > 1 else hi * f):.1f}" stroke="#888"{dash}/>')
    for m, p, colour in pts:
        out.append(f'<circle cx="{xy(m):.1f}" cy="{size - xy(p):.1f}" r="3" fill="{colour}" fill-opacity="0.7"/>')
    out.append(f'<text x="{size / 2}" y="{size - 15}" text-anchor="middle">measured tokens/s per GPU</text>')
    out.append(f'<text x="15" y="{size / 2}" text-anchor="middle" transform="rotate(-90 15 {size / 2})">predicted tokens/s per GPU</text>')
    for i, (_, colour, label) in enumerate(sets):
        out.append(f'<circle cx="{pad + 8}" cy="{pad - 30 + 14 * i}" r="4" fill="{colour}"/><text x="{pad + 16}" y="{pad - 26 + 14 * i}">{label}</text>')
    out.append(f'<text x="{size - pad}" y="{pad - 30}" text-anchor="end">diagonal; dashed ±12 %</text>')
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


print("# Training steps against published, measured runs\n")
print(f"Generated {datetime.date.today()} at git revision `{rev}` by `bench/training.sh` (`wavecast eval training")
print("--data CSV --json`). Every row is replayed through the layout route with its own model config, GPU,")
print("GPU count and node size, precision, sequence, global and micro batch, parallel degrees, ZeRO/FSDP")
print("and recomputation (the cheapest of none/selective/full that fits where the source does not say);")
print("nothing is fitted per run. Error is (predicted − measured) / measured tokens/s per GPU; rows whose")
print("source prints only TFLOP/s are converted with wavecast's model FLOPs per token (Megatron-LM's 2021 table with its\n"
      "paper's formula, 96·l·h²·(1 + s/6h + V/16lh) per token).\n")
sets = []
for label, path, tag, colour in [("shared published runs", shared, "shared", "#1f77b4"), ("project runs (bench/data/training_runs.csv)", own, "own", "#d62728")]:
    for p in ["wavecast", "sustained"]:
        r = load(f"{tag}-{p}.json")
        if r is None:
            print(f"## {label}: not present ({path})\n")
            break
        total = len(r["rows"]) + len(r["unreplayed"])
        print(f"## {label}, predictor `{p}`: {len(r['rows'])} of {total} replayed\n")
        print(f"`wavecast eval training --data {path} --predictor {p}`\n")
        band_table(r)
        print()
        if p == "wavecast":
            sets.append((r["rows"], colour, f"{label} ({p})"))
        if tag == "shared":
            limited = [x for x in r["rows"] if x.get("power_limit_w")]
            if limited:
                apes = [x["ape"] for x in limited]
                limits = ", ".join(sorted({f"{x['power_limit_w']:.0f} W on {x['gpu']}" for x in limited}))
                print(f"{len(limited)} replayed rows run under the power limit their notes state ({limits}; "
                      f"`eval training --json` gives each row's power_limit_w): mean APE {statistics.mean(apes):.1f} %, "
                      f"mean error {statistics.mean(x['error_pct'] for x in limited):+.1f} %. Rows whose notes say power-limited "
                      "without the figure are listed as not replayed.\n")
            print("<details><summary>per GPU and per source</summary>\n")
            by_key(r, "gpu=")
            print()
            by_key(r, "source=")
            print("\n</details>\n")
        print(f"Memory: {len(r['refused_as_too_big'])} measured runs refused as not fitting; "
              f"closest to the limit: " + ", ".join(f"{x['id']} {x['headroom_pct']:.1f} % free" for x in sorted(r["rows"], key=lambda x: x["headroom_pct"])[:3]) + ".\n")
        if p == "wavecast" and r["unreplayed"]:
            print("Not replayed:\n")
            for u in r["unreplayed"]:
                print(f"- {u['id']} ({u['model']}): {u['reason'][:200]}")
            print()
scatter(sets, svg_path)
print(f"![predicted vs measured](training_runs.svg)")
