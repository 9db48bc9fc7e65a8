//! The real all-MiniLM-L6-v2 against vectors from a numpy reference implementation
//! (`tests/data/minilm_ref.json`). Skipped, with a message, when the model is absent.

use serde::Deserialize;
use toolscout_embed::{Encoder, default_model_dir};

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn encoder() -> Option<Encoder> {
    let dir = default_model_dir()?;
    if !dir.join("model.safetensors").exists() {
        eprintln!(
            "skipped: no model in {} (run scripts/fetch-model.sh or set TOOLSCOUT_MODEL_DIR)",
            dir.display()
        );
        return None;
    }
    Some(Encoder::load(&dir).unwrap())
}

#[test]
fn all_minilm_matches_the_reference() {
    let Some(encoder) = encoder() else { return };
    let cases: Vec<Case> = serde_json::from_str(include_str!("../data/minilm_ref.json")).unwrap();
    assert_eq!(encoder.dim(), 384);
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    let batch = encoder.embed_batch(&texts);
    let mut worst = (0.0f32, 1.0f32);
    for (case, got) in cases.iter().zip(&batch) {
        assert_eq!(
            encoder.token_ids(&case.text),
            case.ids,
            "ids of {:?}",
            case.text
        );
        let diff = got
            .iter()
            .zip(&case.vector)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        let cosine: f32 = got.iter().zip(&case.vector).map(|(a, b)| a * b).sum();
        assert!(
            diff < 1e-4 && cosine > 0.9999,
            "{:?}: max diff {diff}, cosine {cosine}",
            case.text
        );
        worst = (worst.0.max(diff), worst.1.min(cosine));
    }
    // Stacking texts of different lengths in one pass changes nothing, bit for bit.
    for i in [2, 8, 16] {
        assert_eq!(encoder.embed_one(texts[i]), batch[i], "{:?}", texts[i]);
    }
    eprintln!(
        "{} texts: max component difference {:e}, min cosine {}",
        cases.len(),
        worst.0,
        worst.1
    );
}

#[test]
fn all_minilm_ranks_by_meaning() {
    let Some(encoder) = encoder() else { return };
    let v = encoder.embed_batch(&[
        "How many Canadian dollars can I get for 500 US dollars?",
        "currency_exchange_convert: Convert an amount from one currency to another.",
        "get_weather: Current weather conditions for a city.",
    ]);
    let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.1);
}
