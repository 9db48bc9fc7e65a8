//! The forward pass on a tiny random BERT written by the test.

use toolscout_embed::{Encoder, Error};
use toolscout_search::Embedder;

use crate::fixture::{HIDDEN, POSITIONS, naive_embed, tiny_model, tiny_tensors, write_tiny_model};

const TEXTS: &[&str] = &[
    "hello world",
    "",
    "the weather",
    "unaffable cafe, resume! 中国",
    "get_weather a b a b a b a b a b a b a b a b a b",
];

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn matches_a_plain_f64_forward_pass() {
    let (_tmp, dir) = tiny_model();
    let encoder = Encoder::load(&dir).unwrap();
    let tensors = tiny_tensors(7);
    for text in TEXTS {
        let ids = encoder.token_ids(text);
        let want = naive_embed(&tensors, &ids);
        let got = encoder.embed_one(text);
        let diff = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(
            diff < 1e-5,
            "{text:?}: max difference {diff}\n got {got:?}\nwant {want:?}"
        );
    }
}

#[test]
fn vectors_are_unit_length_and_distinct() {
    let (_tmp, dir) = tiny_model();
    let encoder = Encoder::load(&dir).unwrap();
    assert_eq!(encoder.dim(), HIDDEN);
    assert_eq!(encoder.model(), "tiny-bert");
    let vectors = encoder.embed_batch(TEXTS);
    for (text, v) in TEXTS.iter().zip(&vectors) {
        assert_eq!(v.len(), HIDDEN);
        assert!(
            (norm(v) - 1.0).abs() < 1e-5,
            "{text:?} has norm {}",
            norm(v)
        );
    }
    assert_ne!(vectors[0], vectors[2]);
}

#[test]
fn deterministic_across_calls_and_loads() {
    let (_tmp, dir) = tiny_model();
    let a = Encoder::load(&dir).unwrap();
    let b = Encoder::load(&dir).unwrap();
    for text in TEXTS {
        assert_eq!(a.embed_one(text), a.embed_one(text));
        assert_eq!(a.embed_one(text), b.embed_one(text));
    }
}

#[test]
fn a_batch_gives_each_text_its_own_vector_exactly() {
    let (_tmp, dir) = tiny_model();
    let encoder = Encoder::load(&dir).unwrap();
    // The short text sits among longer ones: padding, if any, must not leak.
    let batch = encoder.embed_batch(&["hello", TEXTS[4], "hello", TEXTS[3]]);
    assert_eq!(batch[0], encoder.embed_one("hello"));
    assert_eq!(batch[2], batch[0]);
    assert_eq!(batch[1], encoder.embed_one(TEXTS[4]));
    assert_eq!(batch[3], encoder.embed_one(TEXTS[3]));
    assert_eq!(Embedder::embed(&encoder, &["hello"])[0], batch[0]);
    assert!(encoder.embed_batch(&[]).is_empty());
}

#[test]
fn max_tokens_is_clamped_to_the_model_positions() {
    let (_tmp, dir) = tiny_model();
    let long = "a b ".repeat(100);
    let encoder = Encoder::load(&dir).unwrap().with_max_tokens(10_000);
    assert_eq!(encoder.max_tokens(), POSITIONS);
    assert_eq!(encoder.token_ids(&long).len(), POSITIONS);
    assert!((norm(&encoder.embed_one(&long)) - 1.0).abs() < 1e-5);
    let short = Encoder::load(&dir).unwrap().with_max_tokens(0);
    assert_eq!(short.token_ids(&long), [2, 3]);
    // Texts that differ only after the limit have the same vector.
    let four = Encoder::load(&dir).unwrap().with_max_tokens(4);
    assert_eq!(
        four.embed_one("hello world b"),
        four.embed_one("hello world a")
    );
}

fn load_error(edit: impl FnOnce(&mut crate::fixture::Tensors)) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("broken");
    let mut tensors = tiny_tensors(7);
    edit(&mut tensors);
    write_tiny_model(&dir, &tensors);
    Encoder::load(&dir).unwrap_err().to_string()
}

#[test]
fn a_missing_tensor_is_named_with_the_file() {
    let message = load_error(|t| {
        t.remove("encoder.layer.0.output.dense.weight");
    });
    assert!(message.contains("model.safetensors"), "{message}");
    assert!(
        message.contains("`encoder.layer.0.output.dense.weight` is missing"),
        "{message}"
    );
}

#[test]
fn a_tensor_of_the_wrong_shape_is_named_with_both_shapes() {
    let message = load_error(|t| {
        t.insert("embeddings.LayerNorm.bias".into(), (vec![4], vec![0.0; 4]));
    });
    assert!(message.contains("model.safetensors"), "{message}");
    assert!(
        message.contains("`embeddings.LayerNorm.bias` is F32 [4], expected F32 [8]"),
        "{message}"
    );
}

#[test]
fn a_corrupt_or_missing_weight_file_is_named() {
    let (_tmp, dir) = tiny_model();
    let weights = dir.join("model.safetensors");
    std::fs::write(&weights, b"\x10\0\0\0\0\0\0\0{not json").unwrap();
    let err = Encoder::load(&dir).unwrap_err();
    assert!(matches!(err, Error::Safetensors { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("model.safetensors: not a valid safetensors file"),
        "{err}"
    );

    std::fs::remove_file(&weights).unwrap();
    let err = Encoder::load(&dir).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
}

#[test]
fn a_bad_config_is_named() {
    let (_tmp, dir) = tiny_model();
    std::fs::write(dir.join("config.json"), r#"{"hidden_size": 8}"#).unwrap();
    let message = Encoder::load(&dir).unwrap_err().to_string();
    assert!(
        message.contains("config.json") && message.contains("num_hidden_layers"),
        "{message}"
    );
}

#[test]
fn encoders_can_be_shared_across_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Encoder>();
    shared::<toolscout_embed::CachedEncoder>();
}
