//! Cuts the small test fixtures under `tests/fixtures/modern/` from the public data in
//! `../shared/data` (a few rows per file, every column kept as it is):
//! `cargo run -p wavecast-data --example cut_fixtures -- ../shared/data tests/fixtures/modern`.

use parquet::basic::{ConvertedType, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::types::Type;
use std::path::Path;
use std::sync::Arc;

/// `rows` rows spread evenly over the parquet file `from`, written to `to` with its schema.
fn cut_parquet(from: &Path, to: &Path, rows: usize) {
    let reader = SerializedFileReader::new(std::fs::File::open(from).unwrap()).unwrap();
    let total = reader.metadata().file_metadata().num_rows() as usize;
    let step = (total / rows).max(1);
    let picked: Vec<_> = reader.get_row_iter(None).unwrap().step_by(step).take(rows).map(|r| r.unwrap()).collect();
    let schema_descr = reader.metadata().file_metadata().schema_descr_ptr();
    let fields: Vec<Arc<Type>> = schema_descr
        .columns()
        .iter()
        .map(|c| {
            let mut b = Type::primitive_type_builder(c.name(), c.physical_type()).with_repetition(parquet::basic::Repetition::REQUIRED);
            if c.physical_type() == Physical::BYTE_ARRAY {
                b = b.with_converted_type(ConvertedType::UTF8);
            }
            Arc::new(b.build().unwrap())
        })
        .collect();
    let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build().unwrap());
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let mut w = SerializedFileWriter::new(std::fs::File::create(to).unwrap(), schema, Arc::new(WriterProperties::builder().build())).unwrap();
    let mut group = w.next_row_group().unwrap();
    let mut i = 0;
    while let Some(mut col) = group.next_column().unwrap() {
        let values = picked.iter().map(|r| r.get_column_iter().nth(i).unwrap().1.clone());
        match schema_descr.column(i).physical_type() {
            Physical::INT64 => {
                let v: Vec<i64> = values.map(|f| if let Field::Long(x) = f { x } else { panic!("{f}") }).collect();
                col.typed::<Int64Type>().write_batch(&v, None, None).unwrap();
            }
            Physical::DOUBLE => {
                let v: Vec<f64> = values.map(|f| if let Field::Double(x) = f { x } else { panic!("{f}") }).collect();
                col.typed::<DoubleType>().write_batch(&v, None, None).unwrap();
            }
            _ => {
                let v: Vec<ByteArray> = values.map(|f| if let Field::Str(s) = f { ByteArray::from(s.as_str()) } else { panic!("{f}") }).collect();
                col.typed::<ByteArrayType>().write_batch(&v, None, None).unwrap();
            }
        }
        col.close().unwrap();
        i += 1;
    }
    group.close().unwrap();
    w.close().unwrap();
}

/// The header and `rows` rows spread evenly over the CSV `from`.
fn cut_csv(from: &Path, to: &Path, rows: usize, keep: impl Fn(&str) -> bool) {
    let text = std::fs::read_to_string(from).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let body: Vec<&str> = lines.filter(|l| keep(l)).collect();
    let step = (body.len() / rows).max(1);
    let picked: Vec<&str> = body.into_iter().step_by(step).take(rows).collect();
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(to, format!("{header}\n{}\n", picked.join("\n"))).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (shared, out) = (Path::new(&args[0]), Path::new(&args[1]));
    let aic = "aiconfigurator/systems/data";
    for (system, version) in [("h100_sxm", "0.24.0"), ("b200_sxm", "0.24.0"), ("l40s", "0.24.0")] {
        let gemm = format!("{aic}/{system}/gemm/vllm/{version}/gemm_perf.parquet");
        cut_parquet(&shared.join(&gemm), &out.join(&gemm), 48);
        let decode = format!("{aic}/{system}/attention/vllm/{version}/generation_attention_perf.parquet");
        cut_parquet(&shared.join(&decode), &out.join(&decode), 24);
    }
    // MLA: a whole timed module (H100) and an attention kernel alone (A100).
    for mla in ["h100_sxm/mla/vllm/0.24.0/mla_generation_module_perf.parquet", "a100_sxm/mla/vllm/0.14.0/generation_mla_perf.parquet"] {
        let mla = format!("{aic}/{mla}");
        cut_parquet(&shared.join(&mla), &out.join(&mla), 8);
    }
    // The gated delta rule: prompt (chunked) and decode (recurrent) rows, with the causal
    // conv1d rows the table also holds.
    let gdn = format!("{aic}/h100_sxm/linear_attention/vllm/0.24.0/gdn_perf.parquet");
    cut_parquet(&shared.join(&gdn), &out.join(&gdn), 40);
    // The engine's streaming kernel (activation quantization), which element-wise passes are priced as.
    let quant = format!("{aic}/h100_sxm/quantize/vllm/0.24.0/scale_matrix_perf.parquet");
    cut_parquet(&shared.join(&quant), &out.join(&quant), 8);
    let nccl = format!("{aic}/h100_sxm/comm/nccl/2.29.2/nccl_perf.parquet");
    if shared.join(&nccl).exists() {
        cut_parquet(&shared.join(&nccl), &out.join(&nccl), 12);
    }
    for license in ["aiconfigurator/LICENSE", "vidur/LICENSE", "pipeweave/LICENSE"] {
        if shared.join(license).exists() {
            std::fs::create_dir_all(out.join(license).parent().unwrap()).unwrap();
            std::fs::copy(shared.join(license), out.join(license)).unwrap();
        }
    }
    let mlp = "vidur/compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv";
    cut_csv(&shared.join(mlp), &out.join(mlp), 4, |_| true);
    let net = "vidur/network/h100_dgx/all_reduce.csv";
    cut_csv(&shared.join(net), &out.join(net), 6, |_| true);
    let gemm = "pipeweave/gemm_fp8_train.csv";
    cut_csv(&shared.join(gemm), &out.join("pipeweave/gemm_fp8_h20.csv"), 4, |l| l.contains("H20"));
    let ar = "pipeweave/collective/H20/all_reduce.csv";
    cut_csv(&shared.join(ar), &out.join(ar), 6, |_| true);
}
