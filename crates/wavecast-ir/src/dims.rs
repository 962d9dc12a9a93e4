//! Overflow-safe shape arithmetic. Shapes come from user files, so every product is checked and
//! zero or absurd sizes are errors rather than panics or wrapped numbers.

use thiserror::Error;

/// Largest single dimension we accept; far above any real model (2^40 elements).
pub const MAX_DIM: u64 = 1 << 40;

/// Largest tensor, parameter count or repeat-weighted total we accept (2^50, about 10^15): a
/// thousand times the largest model, and small enough that sums of such counts stay exact in
/// 64-bit integers and in f64.
pub const MAX_ELEMENTS: u64 = 1 << 50;

/// Most FLOPs or bytes one operator may do in a step, repeats included (10^24: a million seconds
/// of the fastest GPU's work, so no real step comes near it).
pub const MAX_WORK: f64 = 1e24;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum DimError {
    #[error("{name} must be at least 1, got 0")]
    Zero { name: String },
    #[error("{name} = {value} is larger than the supported maximum {max}")]
    TooLarge { name: String, value: u64, max: u64 },
    #[error("the workload is too large to price: {what} exceeds 64-bit arithmetic (is the batch or sequence length a typo?)")]
    Overflow { what: String },
    /// A shape that is not zero or too large but still impossible (e.g. groups that do not
    /// divide the channels, a kernel larger than its input).
    #[error("{what}")]
    Invalid { what: String },
}

/// A number as a refusal quotes it back: as written where it has an ordinary size, in
/// scientific notation where writing it out would take dozens of digits (`1e-300`, `1e300`).
pub fn quoted(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e9).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Validates one dimension: non-zero and below [`MAX_DIM`].
pub fn dim(name: &str, value: u64) -> Result<u64, DimError> {
    if value == 0 {
        return Err(DimError::Zero { name: name.to_string() });
    }
    if value > MAX_DIM {
        return Err(DimError::TooLarge { name: name.to_string(), value, max: MAX_DIM });
    }
    Ok(value)
}

/// Product of several factors, failing instead of wrapping.
pub fn checked_mul(what: &str, factors: &[u64]) -> Result<u64, DimError> {
    factors.iter().try_fold(1u64, |acc, &f| {
        acc.checked_mul(f).ok_or_else(|| DimError::Overflow { what: what.to_string() })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal quotes an absurd number in a few characters, an ordinary one as typed.
    #[test]
    fn quoted_numbers_stay_short() {
        assert_eq!(quoted(1e-300), "1e-300");
        assert_eq!(quoted(-1e300), "-1e300");
        assert_eq!(quoted(2.5), "2.5");
        assert_eq!(quoted(0.001), "0.001");
        assert_eq!(quoted(100000.0), "100000");
        assert_eq!(quoted(f64::NAN), "NaN");
    }

    #[test]
    fn zero_and_huge_dims_are_errors() {
        assert!(matches!(dim("batch", 0), Err(DimError::Zero { .. })));
        assert!(matches!(dim("seq", MAX_DIM + 1), Err(DimError::TooLarge { .. })));
        assert_eq!(dim("seq", 2048), Ok(2048));
    }

    #[test]
    fn overflow_is_reported() {
        assert!(checked_mul("x", &[u64::MAX, 2]).is_err());
        assert_eq!(checked_mul("x", &[3, 4, 5]), Ok(60));
    }
}
