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
    for dtype in [Dtype::F32, Dtype::F16] {
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
    assert!(e.contains("F32 or F16") && e.contains("I32"), "{e}");
}
