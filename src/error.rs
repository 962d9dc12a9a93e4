//! The one error type of the facade: a single line naming the problem, which the CLI prints
//! (exit code 2) and Python raises as `ValueError`.

use std::fmt;

/// A problem with the input or the data, as one line of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(message: impl Into<String>) -> Error {
        Error(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

macro_rules! from_errors {
    ($($t:ty),* $(,)?) => {
        $(impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error(e.to_string())
            }
        })*
    };
}

from_errors!(
    String,
    &str,
    wavecast_gpu::CatalogError,
    wavecast_workload::WorkloadError,
    wavecast_predict::PredictError,
    wavecast_sim::SimError,
    wavecast_eval::EvalError,
    wavecast_trace::TraceError,
    wavecast_data::DataError,
    serde_json::Error,
    std::io::Error,
);
