//! The one place reports become JSON, for the CLI's `--json` and the Python package alike.
//!
//! A negative zero (`-0.0`, what `0.0 * -1.0` or a rounding of a tiny negative difference
//! gives) means nothing in a report and reads as a bug; it is written as `0.0` here, at the
//! serialization boundary, instead of at every subtraction.

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::io;

/// A JSON formatter that writes `-0.0` as `0.0` and leaves everything else to `F`.
struct PositiveZero<F>(F);

impl<F: Formatter> Formatter for PositiveZero<F> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        // -0.0 + 0.0 is +0.0; every other value is unchanged.
        self.0.write_f64(writer, value + 0.0)
    }
    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.0.write_f32(writer, value + 0.0)
    }
    // The layout (indentation, separators) is `F`'s.
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_key(writer)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

fn write<T: Serialize + ?Sized, F: Formatter>(value: &T, formatter: F) -> serde_json::Result<String> {
    let mut out = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, PositiveZero(formatter)))?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// `value` as indented JSON (the CLI's `--json`).
pub fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, PrettyFormatter::new())
}

/// `value` as compact JSON (what the Python package parses).
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, CompactFormatter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_is_written_as_zero_and_nothing_else_changes() {
        let v = serde_json::json!({"a": -0.0, "b": [-0.0, -1.5, 0.0, 2.0], "c": {"d": -0.0f32, "e": "x"}});
        assert_eq!(to_json(&v).unwrap(), r#"{"a":0.0,"b":[0.0,-1.5,0.0,2.0],"c":{"d":0.0,"e":"x"}}"#);
        // The pretty layout is serde_json's own, number for number.
        let positive = serde_json::json!({"a": 0.0, "b": [0.0, -1.5, 0.0, 2.0], "c": {"d": 0.0, "e": "x"}});
        assert_eq!(to_json_pretty(&v).unwrap(), serde_json::to_string_pretty(&positive).unwrap());
    }
}
