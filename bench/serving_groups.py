"""Where `wavecast eval serving`'s error lives: each group's share of the summed absolute TTFT and
TPOT error, with the group's median predicted / measured ratio (the sign of the error), and the
measured runs that held far fewer requests in flight than they had users.

    wavecast eval serving --data CSV --json > serving.json
    python3 bench/serving_groups.py serving.json CSV [TOP]

Groups are engine x model x weight format x concurrency band x aggregated/disaggregated (the
rows' own fields, joined with the CSV for the lengths). A group with a large share and a median
ratio far from 1 is one wrong piece; a large share at a median near 1 is scatter.

Requests in flight (Little's law on a closed loop): each of the N users spends TTFT + OSL x TPOT
per request and decodes for OSL x TPOT of it, so on average N x OSL x TPOT / (TTFT + OSL x TPOT)
requests are decoding at once. A run where that is well below N while the simulator, holding
all N, shows no queueing (its predicted TTFT under a second) ran with a limit the file does not
record (the engine's or the client's)."""
import collections, csv, statistics, sys


def band(users):
    return "1-4" if users <= 4 else "5-64" if users <= 64 else "65+"


def ape(p, m):
    return abs(p / m - 1)


def main():
    path, data = sys.argv[1:3]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    import json
    r = json.load(open(path))
    csv_rows = {x["id"]: x for x in csv.DictReader(open(data))}
    rows = r["rows"]
    total_ttft = sum(ape(x["predicted_ttft_ms"], x["measured_ttft_ms"]) for x in rows)
    total_tpot = sum(ape(x["predicted_tpot_ms"], x["measured_tpot_ms"]) for x in rows)
    groups = collections.defaultdict(list)
    for x in rows:
        model = x["model"].split("/")[-1]
        groups[(x["backend"], model, x["precision"], band(x["concurrency"]), x["mode"])].append(x)

    def table(order, title):
        print(f"\n### {title}\n")
        print("| engine | model | format | users | mode | rows | TTFT share | TTFT pred/meas (median) | TTFT mean APE | TPOT share | TPOT pred/meas (median) | TPOT mean APE |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        ranked = sorted(groups.items(), key=lambda kv: -sum(order(x) for x in kv[1]))
        for key, g in ranked[:top]:
            t_share = 100 * sum(ape(x["predicted_ttft_ms"], x["measured_ttft_ms"]) for x in g) / total_ttft
            p_share = 100 * sum(ape(x["predicted_tpot_ms"], x["measured_tpot_ms"]) for x in g) / total_tpot
            t_ratio = statistics.median(x["predicted_ttft_ms"] / x["measured_ttft_ms"] for x in g)
            p_ratio = statistics.median(x["predicted_tpot_ms"] / x["measured_tpot_ms"] for x in g)
            t_ape = 100 * statistics.mean(ape(x["predicted_ttft_ms"], x["measured_ttft_ms"]) for x in g)
            p_ape = 100 * statistics.mean(ape(x["predicted_tpot_ms"], x["measured_tpot_ms"]) for x in g)
            print(f"| {' | '.join(key)} | {len(g)} | {t_share:.1f} % | {t_ratio:.2f} | {t_ape:.1f} % | {p_share:.1f} % | {p_ratio:.2f} | {p_ape:.1f} % |")

    print(f"{len(rows)} rows: TTFT mean APE {100 * total_ttft / len(rows):.1f} %, TPOT {100 * total_tpot / len(rows):.1f} %")
    table(lambda x: ape(x["predicted_ttft_ms"], x["measured_ttft_ms"]), f"Largest shares of the TTFT error (top {top})")
    table(lambda x: ape(x["predicted_tpot_ms"], x["measured_tpot_ms"]), f"Largest shares of the TPOT error (top {top})")

    limited = []
    for x in rows:
        osl = int(csv_rows[x["id"]]["osl"])
        decoding = osl * x["measured_tpot_ms"]
        in_flight = x["concurrency"] * decoding / (x["measured_ttft_ms"] + decoding)
        if in_flight < 0.6 * x["concurrency"] and x["predicted_ttft_ms"] < 1000:
            limited.append((x, in_flight))
    print("\n### Runs that held far fewer requests in flight than users while the simulator shows no queueing\n")
    print("| id | engine | model | GPU | users | in flight (measured) | TTFT measured / predicted ms | TPOT measured / predicted ms |")
    print("|---|---|---|---|---|---|---|---|")
    for x, n in limited:
        print(f"| {x['id']} | {x['backend']} | {x['model'].split('/')[-1]} | {x['system']} | {x['concurrency']} | {n:.0f} | {x['measured_ttft_ms']:.0f} / {x['predicted_ttft_ms']:.0f} | {x['measured_tpot_ms']:.2f} / {x['predicted_tpot_ms']:.2f} |")
    ids = {x["id"] for x, _ in limited}
    rest = [x for x in rows if x["id"] not in ids]
    if rest:
        t = 100 * statistics.mean(ape(x["predicted_ttft_ms"], x["measured_ttft_ms"]) for x in rest)
        p = 100 * statistics.mean(ape(x["predicted_tpot_ms"], x["measured_tpot_ms"]) for x in rest)
        share = 100 * sum(ape(x["predicted_tpot_ms"], x["measured_tpot_ms"]) for x, _ in limited) / total_tpot
        print(f"\n{len(limited)} runs carry {share:.1f} % of the summed TPOT error; the other {len(rest)} rows: TTFT mean APE {t:.1f} %, TPOT {p:.1f} %")


if __name__ == "__main__":
    main()
