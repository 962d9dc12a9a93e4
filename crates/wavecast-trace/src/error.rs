//! Trace import errors. Every message names the file and, where one is at fault, the event
//! (its index in `traceEvents`, its category and name).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum TraceError {
    #[error("cannot read trace {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}: the gzip stream is damaged or cut short ({reason}); re-export or re-copy the trace")]
    Gzip { path: String, reason: String },
    #[error("{path}: the trace is truncated: it ends inside {at}{after}; the export was probably interrupted")]
    Truncated { path: String, at: String, after: String },
    #[error("{path}: malformed JSON in {at}{after}: {reason}")]
    Syntax { path: String, at: String, after: String, reason: String },
    #[error("{path}: bad event traceEvents[{index}] ({what}): {reason}")]
    Event { path: String, index: usize, what: String, reason: String },
    #[error("{path}: not a PyTorch profiler trace: {reason}")]
    NotATrace { path: String, reason: String },
}
