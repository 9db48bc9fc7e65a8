//! A static model (model2vec's format): a row per token, and a text's vector is the
//! unit-length mean of its word pieces' rows.

use std::collections::BTreeMap;
use std::path::Path;

use safetensors::Dtype;
use safetensors::tensor::TensorView;
use toolscout_embed::Encoder;

use crate::fixture::{VOCAB, write_tokenizer};

const DIM: usize = 3;

/// Row `i` of the table: distinct, so that every mean says which tokens went in.
fn row(i: usize) -> [f32; DIM] {
    [i as f32, 1.0, (i % 3) as f32]
}

/// Writes a model2vec directory over [`VOCAB`], its table stored as `dtype`.
fn write_static_model(dir: &Path, dtype: Dtype) {
    std::fs::create_dir_all(dir).unwrap();
    let config =
        serde_json::json!({"model_type": "model2vec", "hidden_dim": DIM, "normalize": true});
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    write_tokenizer(dir, VOCAB);
    let values: Vec<f32> = (0..VOCAB.len()).flat_map(row).collect();
    let data: Vec<u8> = match dtype {
        Dtype::F16 => values
            .iter()
            // Small integers are exact in half precision: sign 0, exponent, mantissa.
            .flat_map(|&v| to_f16(v).to_le_bytes())
            .collect(),
        // model2vec's int8 tables: the rows here are small whole numbers, so exact.
        Dtype::I8 => values.iter().map(|&v| (v as i8).to_le_bytes()[0]).collect(),
        _ => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
    let view = TensorView::new(dtype, vec![VOCAB.len(), DIM], &data).unwrap();
    let tensors: BTreeMap<&str, TensorView> = [("embeddings", view)].into_iter().collect();
    safetensors::serialize_to_file(tensors, None, &dir.join("model.safetensors")).unwrap();
}

/// A small non-negative integer as IEEE half precision.
fn to_f16(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let bits = v.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mantissa = (bits >> 13) & 0x3ff;
    ((exp as u16) << 10) | mantissa as u16
}

fn id(token: &str) -> usize {
    VOCAB.iter().position(|t| *t == token).unwrap()
}

/// The unit-length mean of the rows of `tokens`.
fn expected(tokens: &[&str]) -> Vec<f32> {
    let mut sum = [0f32; DIM];
    for t in tokens {
        for (s, v) in sum.iter_mut().zip(row(id(t))) {
            *s += v;
        }
    }
    let n = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    sum.iter().map(|x| x / n).collect()
}

fn assert_close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-6, "{a:?} vs {b:?}");
    }
}

#[test]
fn a_text_is_the_mean_of_its_pieces_without_special_or_unknown_tokens() {
    for dtype in [Dtype::F32, Dtype::F16, Dtype::I8] {
        let dir = tempfile::tempdir().unwrap();
        write_static_model(dir.path(), dtype);
        let encoder = Encoder::load(dir.path()).unwrap();
        assert!(encoder.is_static());
        assert_eq!(encoder.dim(), DIM);
        // "unaffable" is three pieces; "zzz" is unknown and left out, as are [CLS]/[SEP].
        let v = encoder.embed_one("Hello unaffable zzz weather!");
        assert_close(
            &v,
            &expected(&["hello", "un", "##aff", "##able", "weather", "!"]),
        );
        // A batch gives each text exactly its own vector.
        let batch = encoder.embed_batch(&["hello world", "the weather"]);
        assert_close(&batch[0], &expected(&["hello", "world"]));
        assert_close(&batch[1], &expected(&["the", "weather"]));
        // Nothing known: the zero vector, close to nothing.
        assert_eq!(encoder.embed_one("zzz"), vec![0.0; DIM]);
    }
}

#[test]
fn a_static_model_without_its_table_is_an_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    write_static_model(dir.path(), Dtype::F32);
    let values = vec![0u8; 8 * 4];
    let view = TensorView::new(Dtype::F32, vec![2, 4], &values).unwrap();
    let path = dir.path().join("model.safetensors");
    safetensors::serialize_to_file([("other", view)], None, &path).unwrap();
    let e = Encoder::load(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("model.safetensors") && e.contains("`embeddings` is missing"),
        "{e}"
    );

    // A table smaller than the tokenizer's vocabulary.
    let view = TensorView::new(Dtype::F32, vec![2, 4], &values).unwrap();
    safetensors::serialize_to_file([("embeddings", view)], None, &path).unwrap();
    let e = Encoder::load(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("tokenizer.json") && e.contains("vocabulary of 2"),
        "{e}"
    );

    // The wrong element type.
    let bytes = vec![0u8; 8];
    let view = TensorView::new(Dtype::I32, vec![2, 1], &bytes).unwrap();
    safetensors::serialize_to_file([("embeddings", view)], None, &path).unwrap();
    let e = Encoder::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("F32, F16 or I8") && e.contains("I32"), "{e}");
}

/// A tensor to write: name, element type, shape, little-endian bytes.
type Tensor = (&'static str, Dtype, Vec<usize>, Vec<u8>);

/// Writes `model.safetensors` in `dir` from `tensors`.
fn write_tensors(dir: &Path, tensors: &[Tensor]) {
    let views: BTreeMap<&str, TensorView> = tensors
        .iter()
        .map(|(name, dtype, shape, data)| {
            (*name, TensorView::new(*dtype, shape.clone(), data).unwrap())
        })
        .collect();
    safetensors::serialize_to_file(views, None, &dir.join("model.safetensors")).unwrap();
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// model2vec's quantised vocabulary and per-token weights: token id `i` reads row
/// `mapping[i]`, scaled by `weights[i]` (its `StaticModel._encode_helper`).
#[test]
fn weights_and_a_vocabulary_mapping_are_applied_as_model2vec_applies_them() {
    let dir = tempfile::tempdir().unwrap();
    write_static_model(dir.path(), Dtype::F32);
    const ROWS: usize = 4;
    let table: Vec<f32> = (0..ROWS).flat_map(row).collect();
    let mapping: Vec<i64> = (0..VOCAB.len() as i64)
        .map(|i| (i * 7) % ROWS as i64)
        .collect();
    let weights: Vec<f32> = (0..VOCAB.len()).map(|i| 0.5 + i as f32 / 10.0).collect();
    write_tensors(
        dir.path(),
        &[
            ("embeddings", Dtype::F32, vec![ROWS, DIM], f32_bytes(&table)),
            (
                "mapping",
                Dtype::I64,
                vec![VOCAB.len()],
                mapping.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
            (
                "weights",
                Dtype::F32,
                vec![VOCAB.len()],
                f32_bytes(&weights),
            ),
        ],
    );
    let encoder = Encoder::load(dir.path()).unwrap();
    let mut sum = [0f32; DIM];
    for token in ["hello", "world", "the"] {
        let i = id(token);
        for (s, v) in sum.iter_mut().zip(row(mapping[i] as usize)) {
            *s += weights[i] * v;
        }
    }
    let n = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    let want: Vec<f32> = sum.iter().map(|x| x / n).collect();
    assert_close(&encoder.embed_one("hello world the"), &want);
}

/// Each malformed tensor is an error that names it and says what was expected.
#[test]
fn a_malformed_table_mapping_or_weights_is_an_error_that_names_the_tensor() {
    let vocab = VOCAB.len();
    let table = f32_bytes(&(0..vocab).flat_map(row).collect::<Vec<_>>());
    let ok_table = ("embeddings", Dtype::F32, vec![vocab, DIM], table.clone());
    let mut nan = (0..vocab).flat_map(row).collect::<Vec<_>>();
    nan[5] = f32::NAN;
    let cases: Vec<(Vec<Tensor>, &str, &str)> = vec![
        (
            vec![("embeddings", Dtype::F32, vec![vocab, DIM, 1], table.clone())],
            "`embeddings`",
            "[vocabulary, dim]",
        ),
        (
            vec![("embeddings", Dtype::F32, vec![0, DIM], Vec::new())],
            "`embeddings`",
            "both positive",
        ),
        (
            vec![("embeddings", Dtype::F32, vec![vocab, DIM], f32_bytes(&nan))],
            "`embeddings`",
            "finite",
        ),
        (
            vec![
                ok_table.clone(),
                ("mapping", Dtype::I64, vec![vocab], {
                    let mut m: Vec<i64> = (0..vocab as i64).collect();
                    m[3] = vocab as i64;
                    m.iter().flat_map(|v| v.to_le_bytes()).collect()
                }),
            ],
            "`mapping`",
            "rows of `embeddings`",
        ),
        (
            vec![
                ok_table.clone(),
                ("mapping", Dtype::F32, vec![vocab], vec![0; vocab * 4]),
            ],
            "`mapping`",
            "integers",
        ),
        (
            vec![
                ok_table.clone(),
                (
                    "weights",
                    Dtype::F32,
                    vec![vocab - 1],
                    vec![0; (vocab - 1) * 4],
                ),
            ],
            "`weights`",
            "a finite weight per token id",
        ),
        (
            vec![
                ok_table.clone(),
                (
                    "weights",
                    Dtype::F32,
                    vec![vocab],
                    f32_bytes(&vec![f32::INFINITY; vocab]),
                ),
            ],
            "`weights`",
            "a finite weight per token id",
        ),
    ];
    for (tensors, tensor, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        write_static_model(dir.path(), Dtype::F32);
        write_tensors(dir.path(), &tensors);
        let e = Encoder::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("model.safetensors") && e.contains(tensor) && e.contains(expected),
            "{tensor}: {e}"
        );
    }
}

/// A static model reads at most `max_tokens - 2` word pieces, as a BERT does.
#[test]
fn a_static_model_reads_no_more_pieces_than_its_token_limit() {
    let dir = tempfile::tempdir().unwrap();
    write_static_model(dir.path(), Dtype::F32);
    let encoder = Encoder::load(dir.path()).unwrap();
    assert_eq!(encoder.max_tokens(), 512);
    let encoder = encoder.with_max_tokens(4);
    assert_close(
        &encoder.embed_one("hello world the weather"),
        &expected(&["hello", "world"]),
    );
}
