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

/// Nothing is silently dropped from a total: an op no predictor could price (or priced at zero
/// though it moves bytes or does math) makes the answer an error, unless the caller asked for
/// partial results (`--allow-partial`, `allow_partial=True`), which then list those ops.
pub(crate) fn refuse_partial(unpriced: &[String], allow_partial: bool) -> Result<()> {
    let Some(first) = unpriced.first().filter(|_| !allow_partial) else { return Ok(()) };
    let more = match unpriced.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Err(Error::new(format!(
        "the total would leave out work it cannot price: {first}{more}; pass --allow-partial (Python: allow_partial=True) for the time of the rest, with those ops listed"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpriced_work_is_an_error_unless_partial_results_were_asked_for() {
        let unpriced = ["decode layer.moe ×32: pm2lat has no model for moe".to_string(), "decode head ×1: …".to_string()];
        let e = refuse_partial(&unpriced, false).unwrap_err().to_string();
        assert!(e.contains("layer.moe ×32") && e.contains("and 1 more") && e.contains("--allow-partial"), "{e}");
        assert!(refuse_partial(&unpriced, true).is_ok());
        assert!(refuse_partial(&[], false).is_ok());
    }
}
