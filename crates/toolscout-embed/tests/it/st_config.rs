//! A sentence-transformers folder's pooling and prompts, read beside the BERT.

use toolscout_embed::{CachedEncoder, Encoder, Error, Pooling};
use toolscout_search::Embedder;

use crate::fixture::{naive_embed, naive_embed_cls, tiny_model, tiny_tensors};

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn write(dir: &std::path::Path, file: &str, json: serde_json::Value) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, json.to_string()).unwrap();
}

#[test]
fn cls_pooling_takes_the_first_row_as_the_folder_says() {
    let (_tmp, dir) = tiny_model();
    assert_eq!(Encoder::load(&dir).unwrap().pooling(), Some(Pooling::Mean));
    write(
        &dir,
        "1_Pooling/config.json",
        serde_json::json!({"word_embedding_dimension": 8, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}),
    );
    let encoder = Encoder::load(&dir).unwrap();
    assert_eq!(encoder.pooling(), Some(Pooling::Cls));
    let tensors = tiny_tensors(7);
    for text in ["hello world", "the weather", ""] {
        let ids = encoder.token_ids(text);
        let got = encoder.embed_one(text);
        let cls = naive_embed_cls(&tensors, &ids);
        assert!(max_diff(&got, &cls) < 1e-5, "{text:?}: {got:?} vs {cls:?}");
        if ids.len() > 1 {
            let mean = naive_embed(&tensors, &ids);
            assert!(
                max_diff(&got, &mean) > 1e-3,
                "{text:?}: CLS equals the mean"
            );
        }
        // A batch pools each text the same way.
        assert_eq!(encoder.embed_batch(&[text, "hello"])[0], got);
    }
}

#[test]
fn a_pooling_it_cannot_run_is_refused_naming_the_file() {
    let (_tmp, dir) = tiny_model();
    write(
        &dir,
        "1_Pooling/config.json",
        serde_json::json!({"pooling_mode_max_tokens": true}),
    );
    let err = Encoder::load(&dir).unwrap_err();
    assert!(matches!(err, Error::Config { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("1_Pooling") && text.contains("\"max\""),
        "{text}"
    );
    write(
        &dir,
        "1_Pooling/config.json",
        serde_json::json!({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}),
    );
    assert!(
        Encoder::load(&dir)
            .unwrap_err()
            .to_string()
            .contains("more than one")
    );
    std::fs::write(dir.join("1_Pooling/config.json"), "{not json").unwrap();
    assert!(matches!(
        Encoder::load(&dir).unwrap_err(),
        Error::Json { .. }
    ));
}

#[test]
fn queries_and_documents_get_their_prompts() {
    let (tmp, dir) = tiny_model();
    write(
        &dir,
        "config_sentence_transformers.json",
        serde_json::json!({"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": null}),
    );
    let encoder = Encoder::load(&dir).unwrap();
    assert_eq!(encoder.prompts().query, "query: ");
    assert_eq!(encoder.prompts().document, "passage: ");
    let as_query = Embedder::embed_query(&encoder, "the weather");
    assert_eq!(as_query, encoder.embed_one("query: the weather"));
    let docs = Embedder::embed(&encoder, &["the weather", "hello"]);
    assert_eq!(docs[0], encoder.embed_one("passage: the weather"));
    assert_ne!(
        as_query,
        encoder.embed_one("the weather"),
        "the prompt is read"
    );
    // Through the vector cache too, which keys the prompted text.
    let file = tmp.path().join("vectors.bin");
    let cached = CachedEncoder::open(Encoder::load(&dir).unwrap(), &file).unwrap();
    assert_eq!(Embedder::embed(&cached, &["the weather", "hello"]), docs);
    assert_eq!(Embedder::embed_query(&cached, "the weather"), as_query);
    let reopened = CachedEncoder::open(Encoder::load(&dir).unwrap(), &file).unwrap();
    assert_eq!(reopened.len(), 2);
    assert_eq!(reopened.embed(&["passage: hello"])[0], docs[1]);
    // A folder without the file has no prompts: queries are embedded as written.
    let (_plain_tmp, plain) = tiny_model();
    let plain = Encoder::load(&plain).unwrap();
    assert_eq!(Embedder::embed_query(&plain, "x"), plain.embed_one("x"));
}
