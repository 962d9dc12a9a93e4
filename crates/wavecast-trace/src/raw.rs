//! Streaming read of the Chrome-trace JSON: `traceEvents` is visited one event at a time and
//! each event is turned into a compact record straight away, so no JSON tree of the whole file
//! is ever built (traces reach hundreds of MB). Strings are borrowed from the input where the
//! JSON has no escapes, and kernel and operator names are interned.
//!
//! Values are read leniently where profiler versions disagree on types (`stream: "0x0"` on
//! ROCm, string `pid`s on annotation rows); what matters for prediction (a kernel's duration,
//! grid and block) is checked strictly, and a bad value names its event.

use crate::model::{CpuOp, DeviceProps, Kernel, Metrics, Trace, Transfer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A number that may arrive as a JSON number, a numeric or hex string, or something else
/// (then absent).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Num(pub Option<f64>);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumVisitor)
    }
}

struct NumVisitor;

impl<'de> Visitor<'de> for NumVisitor {
    type Value = Num;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Num, E> {
        Ok(Num(Some(v as f64)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Num, E> {
        Ok(Num(Some(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Num, E> {
        Ok(Num(Some(v)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Num, E> {
        let s = s.trim();
        let v = match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok().map(|v| v as f64),
            None => s.parse().ok(),
        };
        Ok(Num(v))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Num, E> {
        Ok(Num(None))
    }
    fn visit_unit<E>(self) -> Result<Num, E> {
        Ok(Num(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Num, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Num(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Num, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Num(None))
    }
}

/// A process or thread id: numbers as they are, strings (`"Spans"`) hashed.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Id(pub u64);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a process or thread id")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Id, E> {
                Ok(Id(v as u64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Id, E> {
                Ok(Id(v))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Id, E> {
                Ok(Id(v as u64))
            }
            fn visit_str<E>(self, s: &str) -> Result<Id, E> {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                s.hash(&mut h);
                Ok(Id(h.finish() | 1 << 63))
            }
        }
        d.deserialize_any(V)
    }
}

/// A string, borrowed when possible; any other JSON value reads as absent.
#[derive(Debug, Default)]
pub(crate) struct Text<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Borrowed(s))))
            }
            fn visit_str<E>(self, s: &str) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Owned(s.to_string()))))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_unit<E>(self) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text<'a>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text<'a>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawArgs {
    correlation: Num,
    device: Num,
    stream: Num,
    // Any JSON value: Triton's cpu_ops carry `"grid": "grid(100,)"`; only kernels are checked.
    grid: Option<serde_json::Value>,
    block: Option<serde_json::Value>,
    #[serde(rename = "registers per thread")]
    registers: Num,
    #[serde(rename = "shared memory")]
    shared_memory: Num,
    #[serde(rename = "blocks per SM")]
    blocks_per_sm: Num,
    #[serde(rename = "est. achieved occupancy %")]
    occupancy: Num,
    #[serde(rename = "Input Dims")]
    input_dims: Option<Vec<serde_json::Value>>,
    #[serde(rename = "Input type")]
    input_types: Option<Vec<serde_json::Value>>,
    bytes: Num,
    flops: Num,
    #[serde(rename = "dram bytes")]
    dram_bytes: Num,
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(default, borrow)]
    ph: Text<'a>,
    #[serde(default, borrow)]
    cat: Text<'a>,
    #[serde(default, borrow)]
    name: Text<'a>,
    #[serde(default)]
    pid: Id,
    #[serde(default)]
    tid: Id,
    #[serde(default)]
    ts: Num,
    #[serde(default)]
    dur: Num,
    #[serde(default)]
    args: Option<RawArgs>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawDevice<'a> {
    id: Num,
    #[serde(borrow)]
    name: Text<'a>,
    compute_major: Num,
    compute_minor: Num,
    num_sms: Num,
    total_global_mem: Num,
    warp_size: Num,
    max_threads_per_multiprocessor: Num,
    regs_per_multiprocessor: Num,
    shared_mem_per_multiprocessor: Num,
    #[serde(rename = "maxSharedMemoryPerMultiProcessor")]
    max_shared_memory_per_multi_processor: Num,
    shared_mem_per_block: Num,
}

impl RawDevice<'_> {
    fn props(&self) -> DeviceProps {
        let u = |n: Num| n.0.unwrap_or(0.0).max(0.0) as u64;
        DeviceProps {
            id: u(self.id) as u32,
            name: self.name.0.as_deref().unwrap_or("").to_string(),
            compute_major: u(self.compute_major) as u32,
            compute_minor: u(self.compute_minor) as u32,
            sm_count: u(self.num_sms) as u32,
            total_memory_bytes: u(self.total_global_mem),
            warp_size: u(self.warp_size) as u32,
            max_threads_per_sm: u(self.max_threads_per_multiprocessor) as u32,
            registers_per_sm: u(self.regs_per_multiprocessor) as u32,
            shared_mem_per_sm: u(self.shared_mem_per_multiprocessor).max(u(self.max_shared_memory_per_multi_processor)),
            shared_mem_per_block: u(self.shared_mem_per_block),
        }
    }
}

/// A kernel launch on the host (`cuda_runtime` / `cuda_driver` event).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Launch {
    pub correlation: u64,
    pub pid: u64,
    pub tid: u64,
    pub ts: f64,
}

/// Collects records while the events stream by.
#[derive(Default)]
pub(crate) struct Sink {
    pub trace: Trace,
    pub launches: Vec<Launch>,
    pub saw_events: bool,
    /// Inside `traceEvents`, and the index of the event being read.
    pub in_events: bool,
    pub index: usize,
    /// The last event read whole (index, "category 'name'"), for error messages.
    pub last_index: usize,
    pub last: String,
    /// An event that parsed as JSON but makes no sense: (index, what, reason).
    pub failure: Option<(usize, String, String)>,
    names: HashSet<Arc<str>>,
}

fn short(s: &str) -> &str {
    match s.char_indices().nth(80) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

impl Sink {
    fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.names.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.names.insert(a.clone());
        a
    }

    fn describe(cat: &str, name: &str) -> String {
        format!("{cat} '{}'", short(name))
    }

    /// Turns one event into a record; `Err` names what is wrong with it.
    fn accept(&mut self, ev: RawEvent<'_>) -> Result<(), (String, String)> {
        let cat = ev.cat.0.as_deref().unwrap_or("");
        let name = ev.name.0.as_deref().unwrap_or("");
        let complete = ev.ph.0.as_deref().is_none_or(|p| p == "X");
        // Remember the event for error messages without allocating per event.
        self.last_index = self.index;
        self.last.clear();
        self.last.push_str(cat);
        self.last.push_str(" '");
        self.last.push_str(short(name));
        self.last.push('\'');
        if !complete {
            return Ok(());
        }
        let is = |c: &str| cat.eq_ignore_ascii_case(c);
        let what = || Sink::describe(cat, name);
        let args = ev.args.unwrap_or_default();
        if is("kernel") {
            let k = self.kernel(name, ev.ts, ev.dur, &args).map_err(|r| (what(), r))?;
            self.trace.kernels.push(k);
        } else if is("cpu_op") || is("operator") {
            let op = self.op(name, ev.pid, ev.tid, ev.ts, ev.dur, &args).map_err(|r| (what(), r))?;
            self.trace.ops.push(op);
        } else if is("cuda_runtime") || is("cuda_driver") || is("runtime") {
            if let (Some(c), Some(ts)) = (args.correlation.0, ev.ts.0) {
                self.launches.push(Launch { correlation: c as u64, pid: ev.pid.0, tid: ev.tid.0, ts });
            }
        } else if is("gpu_memcpy") || is("gpu_memset") || is("memcpy") || is("memset") {
            let dur = duration(ev.dur).map_err(|r| (what(), r))?;
            let name = self.intern(name);
            self.trace.transfers.push(Transfer { name, dur, bytes: args.bytes.0.map(|b| b as u64), device: args.device.0.map(|d| d as u32) });
        } else if is("user_annotation") && name.starts_with("ProfilerStep#") {
            self.trace.profiler_steps += 1;
        }
        Ok(())
    }

    fn kernel(&mut self, name: &str, ts: Num, dur: Num, a: &RawArgs) -> Result<Kernel, String> {
        if name.is_empty() {
            return Err("kernel without a name".into());
        }
        let ts = ts.0.filter(|t| t.is_finite()).ok_or("missing or non-numeric 'ts'")?;
        let dur = duration(dur)?;
        let grid = triple("grid", &a.grid)?;
        let block = triple("block", &a.block)?;
        let metrics = match (a.flops.0, a.dram_bytes.0) {
            (Some(flops), Some(dram_bytes)) if flops >= 0.0 && dram_bytes >= 0.0 => Some(Metrics { flops, dram_bytes }),
            _ => None,
        };
        Ok(Kernel {
            name: self.intern(name),
            ts,
            dur,
            device: a.device.0.map(|d| d as u32),
            stream: a.stream.0.map(|s| s as u64),
            correlation: a.correlation.0.map(|c| c as u64),
            grid,
            block,
            registers_per_thread: a.registers.0.map(|r| r as u32),
            shared_mem_bytes: a.shared_memory.0.map(|s| s as u64),
            reported_blocks_per_sm: a.blocks_per_sm.0,
            reported_occupancy_pct: a.occupancy.0,
            metrics,
            op: None,
            event: self.index,
        })
    }

    fn op(&mut self, name: &str, pid: Id, tid: Id, ts: Num, dur: Num, a: &RawArgs) -> Result<CpuOp, String> {
        let ts = ts.0.filter(|t| t.is_finite()).ok_or("missing or non-numeric 'ts'")?;
        let dur = duration(dur)?;
        let input_dims = a.input_dims.as_deref().unwrap_or(&[]).iter().map(dims).collect();
        let input_types = a.input_types.as_deref().unwrap_or(&[]).iter().map(|v| v.as_str().unwrap_or("").to_string()).collect();
        Ok(CpuOp { name: self.intern(name), ts, dur, pid: pid.0, tid: tid.0, input_dims, input_types, event: self.index })
    }
}

/// Longest event accepted, in µs: a day. Profiler traces cover a few steps; anything longer is
/// a corrupt field, and sums of such values would stop being exact or finite.
const MAX_EVENT_US: f64 = 86_400e6;

fn duration(dur: Num) -> Result<f64, String> {
    match dur.0 {
        None => Err("missing or non-numeric 'dur'".into()),
        Some(d) if !d.is_finite() || d < 0.0 => Err(format!("duration {d} is not a non-negative number")),
        Some(d) if d > MAX_EVENT_US => Err(format!("duration {d} µs is longer than a day")),
        Some(d) => Ok(d),
    }
}

/// A `grid`/`block` triple: absent is fine (ROCm), anything but three positive integers is not.
/// Largest grid or block dimension CUDA and HIP launch (2^31 − 1, the grid's x limit).
const MAX_LAUNCH_DIM: u64 = (1 << 31) - 1;

fn triple(field: &str, v: &Option<serde_json::Value>) -> Result<Option<[u64; 3]>, String> {
    let Some(v) = v else { return Ok(None) };
    let bad = || format!("'{field}' must be three integers in 1..={MAX_LAUNCH_DIM} whose product fits in 64 bits, got {v}");
    let arr = v.as_array().filter(|a| a.len() == 3).ok_or_else(bad)?;
    let mut out = [0u64; 3];
    for (o, x) in out.iter_mut().zip(arr) {
        *o = x.as_u64().filter(|&n| (1..=MAX_LAUNCH_DIM).contains(&n)).ok_or_else(bad)?;
    }
    // Within the per-dimension limit, three dimensions still multiply past 64 bits.
    out.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).ok_or_else(bad)?;
    Ok(Some(out))
}

/// Most elements a recorded tensor can have (2^48, far beyond any GPU's memory): dims whose
/// product exceeds it are corrupt and count as not recorded, so no shape product overflows.
const MAX_TENSOR_ELEMENTS: u64 = 1 << 48;

/// One `Input Dims` entry: a list of sizes for a tensor; `None` for scalars, tensor lists, None.
fn dims(v: &serde_json::Value) -> Option<Vec<u64>> {
    let arr = v.as_array()?;
    if arr.is_empty() {
        return None;
    }
    let dims: Vec<u64> = arr.iter().map(|x| x.as_u64()).collect::<Option<_>>()?;
    let elements = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))?;
    (elements <= MAX_TENSOR_ELEMENTS).then_some(dims)
}

/// Visits `traceEvents`, one event at a time.
struct Events<'s>(&'s mut Sink);

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let sink = self.0;
        sink.saw_events = true;
        sink.in_events = true;
        while let Some(ev) = seq.next_element::<RawEvent>()? {
            if let Err((what, reason)) = sink.accept(ev) {
                sink.failure = Some((sink.index, what, reason.clone()));
                return Err(de::Error::custom(reason));
            }
            sink.index += 1;
        }
        sink.in_events = false;
        sink.trace.events = sink.index;
        Ok(())
    }
}

/// The top level: an object with `traceEvents` (and `deviceProperties`), or a bare event array.
pub(crate) struct Top<'s>(pub &'s mut Sink);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object with 'traceEvents' or an array of events")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let sink = self.0;
        while let Some(key) = map.next_key::<Cow<str>>()? {
            match key.as_ref() {
                "traceEvents" => map.next_value_seed(Events(sink))?,
                "deviceProperties" => {
                    let devs: Vec<RawDevice> = map.next_value()?;
                    sink.trace.devices = devs.iter().map(RawDevice::props).collect();
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Events(self.0).visit_seq(seq)
    }
}
