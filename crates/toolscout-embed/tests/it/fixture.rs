//! A tiny BERT (hidden 8, 2 heads, 1 layer) with random weights, written as a model
//! directory, and a naive forward pass to check the real one against.

use std::collections::BTreeMap;
use std::path::Path;

use safetensors::Dtype;
use safetensors::tensor::TensorView;

/// The vocabulary of the tiny model and of the tokenizer tests.
pub(crate) const VOCAB: &[&str] = &[
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "un", "##aff", "##able",
    "cafe", "resume", "!", ",", ".", "'", "中", "国", "##s", "the", "weather", "get", "_", "a",
    "##a", "b", "don", "t",
];

pub(crate) const HIDDEN: usize = 8;
pub(crate) const HEADS: usize = 2;
pub(crate) const INTERMEDIATE: usize = 16;
pub(crate) const POSITIONS: usize = 16;

/// Writes a `tokenizer.json` like all-MiniLM-L6-v2's over `vocab`.
pub(crate) fn write_tokenizer(dir: &Path, vocab: &[&str]) {
    let vocab: serde_json::Map<String, serde_json::Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| ((*t).to_owned(), i.into()))
        .collect();
    let json = serde_json::json!({
        "version": "1.0",
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
            "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
            "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
            "vocab": vocab},
    });
    std::fs::write(dir.join("tokenizer.json"), json.to_string()).unwrap();
}

/// The tiny model's tensors, by name, each as (shape, values).
pub(crate) type Tensors = BTreeMap<String, (Vec<usize>, Vec<f32>)>;

/// Random tensors for a tiny BERT, from a fixed seed.
pub(crate) fn tiny_tensors(seed: u64) -> Tensors {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.8
    };
    let mut t = Tensors::new();
    let mut add = |name: String, shape: Vec<usize>, offset: f32| {
        let n = shape.iter().product();
        let values = (0..n).map(|_| offset + random()).collect();
        t.insert(name, (shape, values));
    };
    let (h, i) = (HIDDEN, INTERMEDIATE);
    add(
        "embeddings.word_embeddings.weight".into(),
        vec![VOCAB.len(), h],
        0.0,
    );
    add(
        "embeddings.position_embeddings.weight".into(),
        vec![POSITIONS, h],
        0.0,
    );
    add(
        "embeddings.token_type_embeddings.weight".into(),
        vec![2, h],
        0.0,
    );
    let p = "encoder.layer.0";
    for (name, out, inp) in [
        ("attention.self.query", h, h),
        ("attention.self.key", h, h),
        ("attention.self.value", h, h),
        ("attention.output.dense", h, h),
        ("intermediate.dense", i, h),
        ("output.dense", h, i),
    ] {
        add(format!("{p}.{name}.weight"), vec![out, inp], 0.0);
        add(format!("{p}.{name}.bias"), vec![out], 0.0);
    }
    for norm in [
        "embeddings.LayerNorm".to_owned(),
        format!("{p}.attention.output.LayerNorm"),
        format!("{p}.output.LayerNorm"),
    ] {
        add(format!("{norm}.weight"), vec![h], 1.0);
        add(format!("{norm}.bias"), vec![h], 0.0);
    }
    t
}

/// Writes `tensors` as a safetensors file.
pub(crate) fn write_safetensors(path: &Path, tensors: &Tensors) {
    let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
        .iter()
        .map(|(name, (shape, values))| {
            let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            (name.clone(), shape.clone(), data)
        })
        .collect();
    let views = bytes.iter().map(|(name, shape, data)| {
        (
            name.as_str(),
            TensorView::new(Dtype::F32, shape.clone(), data).unwrap(),
        )
    });
    safetensors::serialize_to_file(views, None, path).unwrap();
}

/// Writes the config, tokenizer and weights of the tiny model into `dir`.
pub(crate) fn write_tiny_model(dir: &Path, tensors: &Tensors) {
    std::fs::create_dir_all(dir).unwrap();
    let config = serde_json::json!({
        "hidden_size": HIDDEN, "num_hidden_layers": 1, "num_attention_heads": HEADS,
        "intermediate_size": INTERMEDIATE, "vocab_size": VOCAB.len(),
        "max_position_embeddings": POSITIONS, "type_vocab_size": 2,
        "layer_norm_eps": 1e-12, "hidden_act": "gelu",
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    write_tokenizer(dir, VOCAB);
    write_safetensors(&dir.join("model.safetensors"), tensors);
}

/// A tiny model in a fresh temporary directory named `tiny-bert`.
pub(crate) fn tiny_model() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-bert");
    write_tiny_model(&dir, &tiny_tensors(7));
    (tmp, dir)
}

/// The forward pass written plainly, in f64: one loop per formula.
pub(crate) fn naive_embed(t: &Tensors, ids: &[u32]) -> Vec<f32> {
    let x = naive_hidden(t, ids);
    let n = x.len();
    let mean: Vec<f64> = (0..HIDDEN)
        .map(|k| x.iter().map(|r| r[k]).sum::<f64>() / n as f64)
        .collect();
    unit(&mean)
}

/// [`naive_embed`] with the `[CLS]` token's row as the text's vector (CLS pooling).
pub(crate) fn naive_embed_cls(t: &Tensors, ids: &[u32]) -> Vec<f32> {
    unit(&naive_hidden(t, ids)[0])
}

fn unit(v: &[f64]) -> Vec<f32> {
    let len = v.iter().map(|v| v * v).sum::<f64>().sqrt();
    v.iter().map(|v| (v / len) as f32).collect()
}

/// The last layer's rows, one per token, computed plainly in f64.
fn naive_hidden(t: &Tensors, ids: &[u32]) -> Vec<Vec<f64>> {
    let get = |name: &str| {
        t[name]
            .1
            .iter()
            .map(|&v| f64::from(v))
            .collect::<Vec<f64>>()
    };
    let (h, heads) = (HIDDEN, HEADS);
    let d = h / heads;
    let n = ids.len();
    let linear = |x: &[Vec<f64>], name: &str| -> Vec<Vec<f64>> {
        let (w, b) = (get(&format!("{name}.weight")), get(&format!("{name}.bias")));
        let out = b.len();
        let inp = w.len() / out;
        x.iter()
            .map(|row| {
                (0..out)
                    .map(|o| b[o] + (0..inp).map(|k| row[k] * w[o * inp + k]).sum::<f64>())
                    .collect()
            })
            .collect()
    };
    let norm = |x: &mut Vec<Vec<f64>>, name: &str| {
        let (g, b) = (get(&format!("{name}.weight")), get(&format!("{name}.bias")));
        for row in x.iter_mut() {
            let mean = row.iter().sum::<f64>() / h as f64;
            let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / h as f64;
            for k in 0..h {
                row[k] = (row[k] - mean) / (var + 1e-12).sqrt() * g[k] + b[k];
            }
        }
    };
    let (word, pos, ty) = (
        get("embeddings.word_embeddings.weight"),
        get("embeddings.position_embeddings.weight"),
        get("embeddings.token_type_embeddings.weight"),
    );
    let mut x: Vec<Vec<f64>> = ids
        .iter()
        .enumerate()
        .map(|(p, &id)| {
            (0..h)
                .map(|k| word[id as usize * h + k] + pos[p * h + k] + ty[k])
                .collect()
        })
        .collect();
    norm(&mut x, "embeddings.LayerNorm");
    let l = "encoder.layer.0";
    let q = linear(&x, &format!("{l}.attention.self.query"));
    let k = linear(&x, &format!("{l}.attention.self.key"));
    let v = linear(&x, &format!("{l}.attention.self.value"));
    let mut ctx = vec![vec![0.0; h]; n];
    for head in 0..heads {
        let cols = head * d..(head + 1) * d;
        for i in 0..n {
            let scores: Vec<f64> = (0..n)
                .map(|j| cols.clone().map(|c| q[i][c] * k[j][c]).sum::<f64>() / (d as f64).sqrt())
                .collect();
            let max = scores.iter().copied().fold(f64::MIN, f64::max);
            let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            for c in cols.clone() {
                ctx[i][c] = (0..n).map(|j| e[j] / sum * v[j][c]).sum();
            }
        }
    }
    let a = linear(&ctx, &format!("{l}.attention.output.dense"));
    for (row, a) in x.iter_mut().zip(&a) {
        row.iter_mut().zip(a).for_each(|(x, a)| *x += a);
    }
    norm(&mut x, &format!("{l}.attention.output.LayerNorm"));
    let mut inter = linear(&x, &format!("{l}.intermediate.dense"));
    for v in inter.iter_mut().flatten() {
        *v = 0.5 * *v * (1.0 + erf(*v / 2f64.sqrt()));
    }
    let o = linear(&inter, &format!("{l}.output.dense"));
    for (row, o) in x.iter_mut().zip(&o) {
        row.iter_mut().zip(o).for_each(|(x, o)| *x += o);
    }
    norm(&mut x, &format!("{l}.output.LayerNorm"));
    x
}

/// erf by its Taylor series; beyond 4, erf is ±1 to within 2e-8.
fn erf(x: f64) -> f64 {
    if x.abs() >= 4.0 {
        return x.signum();
    }
    let (mut term, mut sum, mut n) = (x, x, 0.0);
    while term.abs() > 1e-17 {
        n += 1.0;
        term *= -x * x / n;
        sum += term / (2.0 * n + 1.0);
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}
