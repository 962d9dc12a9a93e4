//! The requests a serving simulation replays: how many, their prompt and output lengths (fixed,
//! drawn from a distribution with a seed, or read from a CSV trace) and when they arrive (a
//! fixed number of clients each sending its next request when the last one finishes, a
//! Poisson rate, or the trace's timestamps).

use crate::SimError;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};
use serde::Serialize;
use std::str::FromStr;

/// Longest prompt or output a request may have (far past any model's context, and small enough
/// that sums and products of lengths stay exact).
pub const MAX_TOKENS: u64 = 10_000_000;
/// Largest coefficient of variation of a log-normal length.
const MAX_CV: f64 = 100.0;
/// Slowest open-loop rate (one request a week) and latest trace arrival (about 30 years):
/// beyond them times lose the precision milliseconds need.
const MIN_RATE: f64 = 1e-6;
const MAX_ARRIVAL_S: f64 = 1e9;
/// Seed of the steady state's client phases (any fixed value: runs are reproducible).
const STEADY_STATE_SEED: u64 = 0x5eed;

/// Requests a closed loop of `clients` users sends by default: four each (the mean then covers
/// the ramp-up and the steady state), at least 32.
pub fn closed_loop_requests(clients: u64) -> u64 {
    clients.saturating_mul(4).max(32)
}

/// Rounds a serving benchmark's closed loop runs after its warm-up: AIConfigurator's generated
/// `aiperf` command sends `--request-count` 20 × N with `--concurrency` N (see
/// `../shared/docs/SERVING_BENCHMARK.md`), and every one of the 20 × N requests counts in the
/// reported means. How the users' phases sit in that steady state: [`Load::staggered`].
pub const BENCHMARK_ROUNDS: u64 = 20;

/// Requests the benchmark protocol sends with `clients` users.
pub fn benchmark_requests(clients: u64) -> u64 {
    clients.saturating_mul(BENCHMARK_ROUNDS)
}

/// How a length (prompt or output tokens) is chosen per request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Lengths {
    Fixed { tokens: u64 },
    /// Uniform on lo..=hi.
    Uniform { lo: u64, hi: u64 },
    /// Log-normal with this mean and coefficient of variation (std / mean), at least 1.
    LogNormal { mean: f64, cv: f64 },
}

impl FromStr for Lengths {
    type Err = String;

    /// `1024`, `uniform:512:2048` or `lognormal:1024:0.5` (mean and coefficient of variation).
    fn from_str(s: &str) -> Result<Lengths, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let int = |p: &str| p.trim().parse::<u64>().ok().filter(|&n| (1..=MAX_TOKENS).contains(&n)).ok_or_else(|| format!("'{p}' in '{s}' is not a whole number of tokens in 1..={MAX_TOKENS}"));
        let real = |p: &str, most: f64| p.trim().parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0 && *x <= most).ok_or_else(|| format!("'{p}' in '{s}' is not a number in (0, {most}]"));
        match parts.as_slice() {
            [n] => Ok(Lengths::Fixed { tokens: int(n)? }),
            ["uniform", lo, hi] => {
                let (lo, hi) = (int(lo)?, int(hi)?);
                if lo > hi {
                    return Err(format!("uniform:{lo}:{hi} has its bounds the wrong way round"));
                }
                Ok(Lengths::Uniform { lo, hi })
            }
            ["lognormal", mean, cv] => Ok(Lengths::LogNormal { mean: real(mean, MAX_TOKENS as f64)?, cv: real(cv, MAX_CV)? }),
            _ => Err(format!("length '{s}' is not N, uniform:LO:HI or lognormal:MEAN:CV")),
        }
    }
}

impl Lengths {
    fn draw(&self, rng: &mut StdRng) -> u64 {
        match *self {
            Lengths::Fixed { tokens } => tokens,
            Lengths::Uniform { lo, hi } => rng.random_range(lo..=hi),
            Lengths::LogNormal { mean, cv } => {
                let sigma2 = (1.0 + cv * cv).ln();
                let d = LogNormal::new(mean.ln() - sigma2 / 2.0, sigma2.sqrt()).expect("σ is finite and positive");
                d.sample(rng).round().clamp(1.0, MAX_TOKENS as f64) as u64
            }
        }
    }

    /// Rejects a fixed length outside 1..=MAX_TOKENS (built in code rather than parsed).
    fn check(&self) -> Result<(), SimError> {
        match *self {
            Lengths::Fixed { tokens } if !(1..=MAX_TOKENS).contains(&tokens) => Err(SimError::Invalid(format!("a request length of {tokens} tokens is outside 1..={MAX_TOKENS}"))),
            _ => Ok(()),
        }
    }
}

/// When requests arrive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Arrival {
    /// `clients` users, each sending its next request as soon as its last one completes (how
    /// `vllm bench serve --max-concurrency`, genai-perf and AIConfigurator measure).
    Concurrency { clients: u64 },
    /// Open loop: Poisson arrivals at `per_s` requests per second.
    Rate { per_s: f64 },
    /// The timestamps of a trace.
    Trace,
}

/// One request: prompt and output tokens and, in an open loop, when it arrives (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Request {
    pub arrival_s: f64,
    pub input_len: u64,
    pub output_len: u64,
}

/// A whole load: the requests in the order they are sent, and how they arrive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Load {
    pub arrival: Arrival,
    pub requests: Vec<Request>,
}

impl Load {
    /// `n` requests with lengths drawn from `input` and `output` (deterministic for a seed).
    pub fn synthetic(n: u64, arrival: Arrival, input: Lengths, output: Lengths, seed: u64) -> Result<Load, SimError> {
        if n == 0 {
            return Err(SimError::Invalid("the number of requests must be at least 1".into()));
        }
        if n > 10_000_000 {
            return Err(SimError::Invalid(format!("{n} requests is past the 10,000,000 a simulation accepts")));
        }
        match arrival {
            Arrival::Concurrency { clients: 0 } => return Err(SimError::Invalid("concurrency must be at least 1".into())),
            Arrival::Rate { per_s } if !(per_s.is_finite() && per_s >= MIN_RATE) => return Err(SimError::Invalid(format!("request rate {} must be a number of requests per second of at least {MIN_RATE}", wavecast_ir::quoted(per_s)))),
            Arrival::Trace => return Err(SimError::Invalid("a trace load comes from a CSV file".into())),
            _ => {}
        }
        input.check()?;
        output.check()?;
        let mut rng = StdRng::seed_from_u64(seed);
        let gaps = match arrival {
            Arrival::Rate { per_s } => Some(Exp::new(per_s).expect("rate is positive")),
            _ => None,
        };
        let mut t = 0.0;
        let mut requests = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let input_len = input.draw(&mut rng);
            let output_len = output.draw(&mut rng);
            if let Some(g) = &gaps {
                t += g.sample(&mut rng);
            }
            requests.push(Request { arrival_s: t, input_len, output_len });
        }
        Ok(Load { arrival, requests })
    }

    /// A CSV trace with columns `arrival_s` (seconds from the start; or `timestamp_ms`),
    /// `input_len` and `output_len` (also accepted: `input_tokens`/`prompt_len`,
    /// `output_tokens`/`completion_len`). Rows need not be sorted.
    pub fn from_csv(text: &str, origin: &str) -> Result<Load, SimError> {
        let bad = |line: usize, why: String| SimError::Invalid(format!("{origin}: line {line}: {why}"));
        let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
        let headers = reader.headers().map_err(|e| SimError::Invalid(format!("{origin}: {e}")))?.clone();
        let column = |names: &[&str]| headers.iter().position(|h| names.contains(&h));
        let missing = |what: &str| SimError::Invalid(format!("{origin}: no {what} column (columns: {})", headers.iter().collect::<Vec<_>>().join(", ")));
        let (time_col, scale) = match (column(&["arrival_s", "arrival_time", "timestamp_s"]), column(&["timestamp_ms", "arrival_ms"])) {
            (Some(c), _) => (c, 1.0),
            (None, Some(c)) => (c, 1e-3),
            _ => return Err(missing("arrival_s")),
        };
        let input_col = column(&["input_len", "input_tokens", "prompt_len", "isl"]).ok_or_else(|| missing("input_len"))?;
        let output_col = column(&["output_len", "output_tokens", "completion_len", "osl"]).ok_or_else(|| missing("output_len"))?;
        let mut requests = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let line = i + 2;
            let record = record.map_err(|e| bad(line, e.to_string()))?;
            let field = |c: usize| record.get(c).unwrap_or("");
            let time: f64 = field(time_col).parse().map_err(|_| bad(line, format!("arrival '{}' is not a number", field(time_col))))?;
            if !(time.is_finite() && time >= 0.0 && time * scale <= MAX_ARRIVAL_S) {
                return Err(bad(line, format!("arrival {} must be a non-negative number of at most {MAX_ARRIVAL_S} s", wavecast_ir::quoted(time))));
            }
            let tokens = |c: usize, what: &str| field(c).parse::<u64>().ok().filter(|&n| (1..=MAX_TOKENS).contains(&n)).ok_or_else(|| bad(line, format!("{what} '{}' is not a whole number of tokens in 1..={MAX_TOKENS}", field(c))));
            requests.push(Request { arrival_s: time * scale, input_len: tokens(input_col, "input length")?, output_len: tokens(output_col, "output length")? });
        }
        if requests.is_empty() {
            return Err(SimError::Invalid(format!("{origin}: the trace has no requests")));
        }
        if requests.len() > 10_000_000 {
            return Err(SimError::Invalid(format!("{origin}: {} requests is past the 10,000,000 a simulation accepts", requests.len())));
        }
        requests.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        Ok(Load { arrival: Arrival::Trace, requests })
    }

    /// The first round of a closed loop: each client's first request only, all released at
    /// once, so every prompt queues behind the whole wave's prefill (the round a benchmark's
    /// users are most in step; see [`super::Prepared::run_steady`]). Open-loop loads are
    /// returned unchanged.
    pub fn first_round(&self) -> Load {
        let mut out = self.clone();
        if let Arrival::Concurrency { clients } = self.arrival {
            out.requests.truncate(clients.max(1) as usize);
        }
        out
    }

    /// The same closed-loop load in its steady state: each client's first request at an
    /// independent, uniformly random moment of `span_s` seconds (one request's latency), drawn
    /// with a fixed seed. Open-loop loads are returned unchanged.
    ///
    /// Why random and not together or evenly spaced: users released together stay in step
    /// round after round (identical requests finish in the same iteration), so every prompt
    /// waits for the whole wave's prefill; on the measured vLLM and TensorRT-LLM runs the mean
    /// TTFT is often below what that queue needs even with every kernel at its datasheet peak,
    /// so the benchmark's clients do drift out of step. Evenly spaced starts are the other
    /// extreme (a prompt never meets another) and miss the queueing that grows with the number
    /// of users. Independent phases queue as a closed loop of unsynchronized users does.
    pub fn staggered(&self, span_s: f64) -> Load {
        let mut out = self.clone();
        if let Arrival::Concurrency { clients } = self.arrival {
            let mut rng = StdRng::seed_from_u64(STEADY_STATE_SEED);
            for r in out.requests.iter_mut().take(clients as usize) {
                r.arrival_s = span_s.max(0.0) * rng.random::<f64>();
            }
        }
        out
    }

    /// Longest prompt plus output of any request.
    pub fn max_context(&self) -> u64 {
        self.requests.iter().map(|r| r.input_len + r.output_len).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_parse_and_reject_nonsense() {
        assert_eq!("1024".parse::<Lengths>().unwrap(), Lengths::Fixed { tokens: 1024 });
        assert_eq!("uniform:10:20".parse::<Lengths>().unwrap(), Lengths::Uniform { lo: 10, hi: 20 });
        for bad in ["0", "-3", "uniform:20:10", "lognormal:100", "gamma:1:2", "abc", "99999999999", "lognormal:1e30:0.5", "lognormal:1024:1e200"] {
            assert!(bad.parse::<Lengths>().is_err(), "{bad}");
        }
    }

    #[test]
    fn synthetic_loads_are_deterministic_for_a_seed() {
        let l = |seed| Load::synthetic(200, Arrival::Rate { per_s: 5.0 }, "uniform:10:100".parse().unwrap(), "lognormal:50:1".parse().unwrap(), seed).unwrap();
        assert_eq!(l(7), l(7));
        assert_ne!(l(7), l(8));
        let a = l(7);
        assert!(a.requests.windows(2).all(|w| w[0].arrival_s <= w[1].arrival_s));
        assert!(a.requests.iter().all(|r| (10..=100).contains(&r.input_len) && r.output_len >= 1));
        // 200 arrivals at 5/s take about 40 s.
        let last = a.requests.last().unwrap().arrival_s;
        assert!((25.0..60.0).contains(&last), "{last}");
    }

    #[test]
    fn steady_state_starts_each_user_at_its_own_random_moment() {
        let closed = Load::synthetic(40, Arrival::Concurrency { clients: 8 }, Lengths::Fixed { tokens: 100 }, Lengths::Fixed { tokens: 10 }, 0).unwrap();
        let s = closed.staggered(2.0);
        assert_eq!(s, closed.staggered(2.0), "reproducible");
        let starts: Vec<f64> = s.requests[..8].iter().map(|r| r.arrival_s).collect();
        assert!(starts.iter().all(|t| (0.0..2.0).contains(t)), "{starts:?}");
        let mut distinct = starts.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        assert_eq!(distinct.len(), 8, "every user has its own phase: {starts:?}");
        assert_eq!(s.requests[8..], closed.requests[8..], "later requests follow their user's previous one");
        let open = Load::synthetic(40, Arrival::Rate { per_s: 5.0 }, Lengths::Fixed { tokens: 100 }, Lengths::Fixed { tokens: 10 }, 0).unwrap();
        assert_eq!(open.staggered(2.0), open);
    }

    #[test]
    fn the_first_round_is_each_users_first_request() {
        let closed = Load::synthetic(40, Arrival::Concurrency { clients: 8 }, Lengths::Fixed { tokens: 100 }, Lengths::Fixed { tokens: 10 }, 0).unwrap();
        let first = closed.first_round();
        assert_eq!(first.arrival, closed.arrival);
        assert_eq!(first.requests, closed.requests[..8]);
        assert!(first.requests.iter().all(|r| r.arrival_s == 0.0), "released together");
        let open = Load::synthetic(40, Arrival::Rate { per_s: 5.0 }, Lengths::Fixed { tokens: 100 }, Lengths::Fixed { tokens: 10 }, 0).unwrap();
        assert_eq!(open.first_round(), open);
    }

    #[test]
    fn traces_are_read_and_bad_rows_named() {
        let l = Load::from_csv("arrival_s,input_len,output_len\n0.5,100,10\n0.1,50,5\n", "t.csv").unwrap();
        assert_eq!(l.requests[0], Request { arrival_s: 0.1, input_len: 50, output_len: 5 });
        assert_eq!(l.max_context(), 110);
        let e = Load::from_csv("arrival_s,input_len\n0,1\n", "t.csv").unwrap_err().to_string();
        assert!(e.contains("no output_len column"), "{e}");
        let e = Load::from_csv("arrival_s,input_len,output_len\n0,1,x\n", "t.csv").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("output length 'x'"), "{e}");
        let e = Load::from_csv("arrival_s,input_len,output_len\n-1,1,1\n", "t.csv").unwrap_err().to_string();
        assert!(e.contains("non-negative"), "{e}");
        assert!(Load::from_csv("arrival_s,input_len,output_len\n", "t.csv").is_err());
    }
}
