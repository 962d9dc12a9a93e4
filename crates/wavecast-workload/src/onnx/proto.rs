//! The subset of the ONNX protobuf schema (`onnx.proto`, IR version 3 and later) the importer
//! reads, declared as prost messages. Field numbers are the schema's; fields not declared here
//! (documentation strings, sparse initializers, sub-graphs of control-flow ops, training info)
//! are skipped by the decoder. Tests encode the same messages to build small ONNX files.

use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    #[prost(string, tag = "2")]
    pub producer_name: String,
    #[prost(string, tag = "3")]
    pub producer_version: String,
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct OperatorSetIdProto {
    /// Empty (or "ai.onnx") for the default operator set.
    #[prost(string, tag = "1")]
    pub domain: String,
    #[prost(int64, tag = "2")]
    pub version: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct GraphProto {
    /// Nodes in topological order.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constant tensors: weights, and constants the graph reads (e.g. reshape targets).
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
    /// Shapes of intermediate values, when the exporter ran shape inference.
    #[prost(message, repeated, tag = "13")]
    pub value_info: Vec<ValueInfoProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    #[prost(string, tag = "3")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub op_type: String,
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    #[prost(string, tag = "7")]
    pub domain: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(float, tag = "2")]
    pub f: f32,
    #[prost(int64, tag = "3")]
    pub i: i64,
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    #[prost(float, repeated, tag = "7")]
    pub floats: Vec<f32>,
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    /// AttributeType: 1 float, 2 int, 3 string, 4 tensor, 5 graph, 6 floats, 7 ints, 8 strings.
    #[prost(int32, tag = "20")]
    pub r#type: i32,
}

/// TensorProto.DataType values the importer distinguishes.
pub mod elem {
    pub const FLOAT: i32 = 1;
    pub const UINT8: i32 = 2;
    pub const INT8: i32 = 3;
    pub const INT32: i32 = 6;
    pub const INT64: i32 = 7;
    pub const BOOL: i32 = 9;
    pub const FLOAT16: i32 = 10;
    pub const DOUBLE: i32 = 11;
    pub const BFLOAT16: i32 = 16;
    pub const FLOAT8E4M3FN: i32 = 17;

    pub fn is_float(t: i32) -> bool {
        matches!(t, FLOAT | FLOAT16 | DOUBLE | BFLOAT16 | FLOAT8E4M3FN | 18..=20)
    }
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorProto {
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    #[prost(int32, repeated, tag = "5")]
    pub int32_data: Vec<i32>,
    #[prost(int64, repeated, tag = "7")]
    pub int64_data: Vec<i64>,
    #[prost(string, tag = "8")]
    pub name: String,
    /// Little-endian packed values (the usual encoding of large tensors).
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
    #[prost(double, repeated, tag = "10")]
    pub double_data: Vec<f64>,
    /// 1: the values live in an external file (only the shape is needed here).
    #[prost(int32, tag = "14")]
    pub data_location: i32,
}

#[derive(Clone, PartialEq, Message)]
pub struct ValueInfoProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

/// TypeProto with its `tensor_type` member (the other members of its oneof — sequences, maps,
/// optionals — are not tensors and are skipped).
#[derive(Clone, PartialEq, Message)]
pub struct TypeProto {
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TypeTensor>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TypeTensor {
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// One dimension: a number, a symbolic name, or neither (unknown).
#[derive(Clone, PartialEq, Message)]
pub struct Dimension {
    #[prost(int64, optional, tag = "1")]
    pub dim_value: Option<i64>,
    #[prost(string, optional, tag = "2")]
    pub dim_param: Option<String>,
}

impl TensorProto {
    /// Small integer or float constants as f64 (shape vectors, axes, scales), when the values
    /// are stored in the file and there are at most `limit` of them.
    pub fn values(&self, limit: usize) -> Option<Vec<f64>> {
        let n = self.dims.iter().try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) })?;
        if n as usize > limit || self.data_location == 1 {
            return None;
        }
        let n = n as usize;
        let raw = &self.raw_data;
        let from_raw = |size: usize, f: &dyn Fn(&[u8]) -> f64| -> Option<Vec<f64>> {
            (raw.len() == n * size).then(|| raw.chunks_exact(size).map(f).collect())
        };
        let v: Vec<f64> = match self.data_type {
            elem::INT64 if !raw.is_empty() => from_raw(8, &|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f64)?,
            elem::INT64 => self.int64_data.iter().map(|&v| v as f64).collect(),
            elem::INT32 if !raw.is_empty() => from_raw(4, &|b| i32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64)?,
            elem::INT32 | elem::INT8 | elem::UINT8 | elem::BOOL if raw.is_empty() => self.int32_data.iter().map(|&v| v as f64).collect(),
            elem::INT8 => from_raw(1, &|b| b[0] as i8 as f64)?,
            elem::UINT8 | elem::BOOL => from_raw(1, &|b| b[0] as f64)?,
            elem::FLOAT if !raw.is_empty() => from_raw(4, &|b| f32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64)?,
            elem::FLOAT => self.float_data.iter().map(|&v| v as f64).collect(),
            elem::DOUBLE if !raw.is_empty() => from_raw(8, &|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8])))?,
            elem::DOUBLE => self.double_data.clone(),
            _ => return None,
        };
        (v.len() == n).then_some(v)
    }
}
