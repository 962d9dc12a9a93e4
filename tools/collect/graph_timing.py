"""How the collectors that time kernels as AIConfigurator's collector does (aic_gemm.py,
aic_attention.py) read a captured CUDA graph's time: one place, so their tables agree."""


def replay_median_ms(torch, graph, replays, repeats):
    """Milliseconds per call of `graph`, which holds `replays` back-to-back calls: two replays to
    warm up, then `repeats` replays timed by CUDA events; their median over `replays`."""
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        graph.replay()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / replays)
    times.sort()
    return times[len(times) // 2]
