//! What users measure of a serving run, from the simulated timelines: time to first token,
//! time per output token (the mean gap between a request's tokens after the first), end-to-end
//! latency, throughput per GPU and per user, and goodput under a latency target.

use super::engine::Timeline;
use serde::Serialize;
use wavecast_stats::{mean, quantile_interpolated, sorted};

/// Mean and percentiles of one latency, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latency {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl Latency {
    pub fn of(values_ms: &[f64]) -> Latency {
        let s = sorted(values_ms);
        let q = |p| quantile_interpolated(&s, p).unwrap_or(0.0);
        Latency { mean: mean(values_ms), p50: q(0.5), p90: q(0.9), p99: q(0.99) }
    }
}

impl Latency {
    /// `w` of the way from `self` to `other` on a log scale (each field; 0 gives `self`, 1
    /// `other`). A field that is not positive in both is taken linearly.
    pub fn toward(&self, other: &Latency, w: f64) -> Latency {
        let w = w.clamp(0.0, 1.0);
        let f = |a: f64, b: f64| match w {
            0.0 => a,
            1.0 => b,
            _ if a > 0.0 && b > 0.0 => (a.ln() * (1.0 - w) + b.ln() * w).exp(),
            _ => a + (b - a) * w,
        };
        Latency { mean: f(self.mean, other.mean), p50: f(self.p50, other.p50), p90: f(self.p90, other.p90), p99: f(self.p99, other.p99) }
    }
}

impl Metrics {
    /// These metrics with their latencies `w` of the way toward `other`'s (see
    /// [`Latency::toward`]); the per-user token rate follows the TPOT, throughput and goodput
    /// stay this run's.
    pub fn latencies_toward(&self, other: &Metrics, w: f64) -> Metrics {
        let tpot_ms = self.tpot_ms.toward(&other.tpot_ms, w);
        Metrics {
            ttft_ms: self.ttft_ms.toward(&other.ttft_ms, w),
            e2e_ms: self.e2e_ms.toward(&other.e2e_ms, w),
            tokens_per_s_per_user: if tpot_ms.mean > 0.0 { 1000.0 / tpot_ms.mean } else { self.tokens_per_s_per_user },
            tpot_ms,
            ..self.clone()
        }
    }
}

/// A latency target: a request meets it when both of its latencies are within.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Slo {
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
}

impl Slo {
    pub fn met(&self, ttft_ms: f64, tpot_ms: f64) -> bool {
        self.ttft_ms.is_none_or(|x| ttft_ms <= x) && self.tpot_ms.is_none_or(|x| tpot_ms <= x)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    pub requests: usize,
    /// From the first arrival to the last token, seconds.
    pub duration_s: f64,
    pub ttft_ms: Latency,
    /// Mean time between a request's tokens after the first (requests of one token excluded);
    /// `null` in JSON when no request produced a second token (zeros here).
    #[serde(serialize_with = "null_without_decoding")]
    pub tpot_ms: Latency,
    pub e2e_ms: Latency,
    pub requests_per_s: f64,
    pub output_tokens_per_s: f64,
    pub output_tokens_per_s_per_gpu: f64,
    /// 1000 / mean TPOT: how fast one user sees text appear (`null` in JSON without decoding).
    #[serde(serialize_with = "null_if_zero")]
    pub tokens_per_s_per_user: f64,
    /// Requests per second that met the SLO, and their share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goodput_requests_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo_attainment: Option<f64>,
}

/// A run whose requests all end at their first token has no time per output token: JSON says
/// so with `null`, not with a zero that reads as a measurement.
fn null_without_decoding<S: serde::Serializer>(l: &Latency, s: S) -> Result<S::Ok, S::Error> {
    (l.mean > 0.0).then_some(l).serialize(s)
}

fn null_if_zero<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    (*v > 0.0).then_some(v).serialize(s)
}

fn tpot_ms(t: &Timeline) -> Option<f64> {
    (t.output_len > 1).then(|| (t.finish_s - t.first_token_s) * 1e3 / (t.output_len - 1) as f64)
}

/// The metrics of a simulated run on `gpus` GPUs.
pub fn metrics(timelines: &[Timeline], gpus: u64, slo: Option<Slo>) -> Metrics {
    let start = timelines.iter().map(|t| t.arrival_s).fold(f64::INFINITY, f64::min);
    let end = timelines.iter().map(|t| t.finish_s).fold(0.0, f64::max);
    let duration_s = (end - start).max(f64::MIN_POSITIVE);
    let ttft: Vec<f64> = timelines.iter().map(|t| (t.first_token_s - t.arrival_s) * 1e3).collect();
    let tpot: Vec<f64> = timelines.iter().filter_map(tpot_ms).collect();
    let e2e: Vec<f64> = timelines.iter().map(|t| (t.finish_s - t.arrival_s) * 1e3).collect();
    let output: u64 = timelines.iter().map(|t| t.output_len).sum();
    let tpot_lat = Latency::of(&tpot);
    let good = slo.map(|s| timelines.iter().zip(&ttft).filter(|(t, ttft)| s.met(**ttft, tpot_ms(t).unwrap_or(0.0))).count());
    let tokens_per_s = output as f64 / duration_s;
    Metrics {
        requests: timelines.len(),
        duration_s,
        ttft_ms: Latency::of(&ttft),
        e2e_ms: Latency::of(&e2e),
        requests_per_s: timelines.len() as f64 / duration_s,
        output_tokens_per_s: tokens_per_s,
        output_tokens_per_s_per_gpu: tokens_per_s / gpus.max(1) as f64,
        tokens_per_s_per_user: if tpot_lat.mean > 0.0 { 1e3 / tpot_lat.mean } else { 0.0 },
        tpot_ms: tpot_lat,
        goodput_requests_per_s: good.map(|g| g as f64 / duration_s),
        slo_attainment: good.map(|g| g as f64 / timelines.len().max(1) as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_move_toward_the_lockstep_run_on_a_log_scale() {
        let independent = Latency { mean: 100.0, p50: 80.0, p90: 200.0, p99: 0.0 };
        let lockstep = Latency { mean: 400.0, p50: 320.0, p90: 200.0, p99: 10.0 };
        assert_eq!(independent.toward(&lockstep, 0.0), independent);
        assert_eq!(independent.toward(&lockstep, 1.0), lockstep);
        let half = independent.toward(&lockstep, 0.5);
        // Geometric means: √(100 · 400) = 200, √(80 · 320) = 160; a zero is taken linearly.
        assert!((half.mean - 200.0).abs() < 1e-9 && (half.p50 - 160.0).abs() < 1e-9 && (half.p90 - 200.0).abs() < 1e-9, "{half:?}");
        assert!((half.p99 - 5.0).abs() < 1e-9, "{half:?}");
        assert_eq!(independent.toward(&lockstep, 7.0), lockstep, "weights are clamped to 0..=1");
    }

    /// Two requests, one short and one long: every percentile lies between them, p99 near the
    /// longer one and above the mean.
    #[test]
    fn percentiles_of_a_few_requests_interpolate() {
        let l = Latency::of(&[87.3, 6529.7]);
        assert!((l.p50 - l.mean).abs() < 1e-9 && l.p99 > l.mean && l.p99 < 6529.7 && l.p90 < l.p99, "{l:?}");
        assert_eq!(Latency::of(&[5.0]), Latency { mean: 5.0, p50: 5.0, p90: 5.0, p99: 5.0 });
    }

    #[test]
    fn latencies_throughput_and_goodput_from_timelines() {
        let t = |arrival_s: f64, first_token_s: f64, finish_s: f64, output_len: u64| Timeline { arrival_s, first_token_s, finish_s, input_len: 10, output_len };
        let runs = [t(0.0, 0.1, 1.1, 11), t(0.0, 0.3, 2.3, 11), t(1.0, 1.2, 1.2, 1)];
        let m = metrics(&runs, 2, Some(Slo { ttft_ms: Some(200.0), tpot_ms: Some(150.0) }));
        assert!((m.ttft_ms.mean - 200.0).abs() < 1e-9);
        // TPOT: 100 ms and 200 ms (the one-token request has none).
        assert!((m.tpot_ms.mean - 150.0).abs() < 1e-9 && (m.tpot_ms.p50 - 150.0).abs() < 1e-9 && (m.tpot_ms.p99 - 199.0).abs() < 1e-9, "{:?}", m.tpot_ms);
        assert!((m.duration_s - 2.3).abs() < 1e-12);
        assert!((m.output_tokens_per_s_per_gpu - 23.0 / 2.3 / 2.0).abs() < 1e-9);
        // Requests 1 (100 ms, 100 ms/token) and 3 (200 ms, no TPOT) meet it; request 2 does not.
        assert_eq!(m.slo_attainment, Some(2.0 / 3.0));
    }
}
