//! The encoder built into the crate: potion-base-8M, int8, calibrated onto MiniLM's scale.

use toolscout_embed::{BUNDLED_MODEL, CachedEncoder, Encoder};
use toolscout_search::Embedder;

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn the_bundled_encoder_loads_and_tells_related_tools_from_unrelated_ones() {
    let encoder = Encoder::bundled().unwrap();
    assert_eq!(encoder.model(), BUNDLED_MODEL);
    assert!(encoder.is_static());
    assert_eq!(encoder.dim(), 256);
    let tools = encoder.embed_documents(&[
        "convert currency: convert an amount of money from one currency to another",
        "get weather: the current weather and forecast for a city",
        "send email: send an email message to a recipient",
    ]);
    for v in &tools {
        assert!((cosine(v, v) - 1.0).abs() < 1e-4, "unit length");
    }
    for (query, right) in [
        ("how many Canadian dollars do I get for 500 US dollars", 0),
        ("will it rain in Paris tomorrow", 1),
        ("write to my boss that I will be late", 2),
    ] {
        let q = encoder.embed_query(query);
        let best = (0..tools.len())
            .max_by(|&a, &b| cosine(&q, &tools[a]).total_cmp(&cosine(&q, &tools[b])))
            .unwrap();
        assert_eq!(best, right, "{query}");
    }
}

#[test]
fn the_bundled_table_read_from_disk_gives_the_same_vectors() {
    // The same files in a directory, as a user would point `--encoder` at them: the int8
    // table and its per-row weights are read by the ordinary loader.
    let dir = tempfile::tempdir().unwrap();
    // The package's directory as cargo gives it to the running test (a test binary
    // reused from a shared build cache may have been compiled in another clone).
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(
        || env!("CARGO_MANIFEST_DIR").into(),
        std::path::PathBuf::from,
    );
    let root = manifest_dir.join("models/potion-base-8M-int8");
    for file in ["model.safetensors", "tokenizer.json"] {
        std::fs::copy(root.join(file), dir.path().join(file)).unwrap();
    }
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"model_type": "model2vec", "hidden_dim": 256, "normalize": true}"#,
    )
    .unwrap();
    let loaded = Encoder::load(dir.path()).unwrap();
    let bundled = Encoder::bundled().unwrap();
    let texts = [
        "find restaurants near me",
        "the weather in Tokyo",
        "ünïcödé ☃",
    ];
    assert_eq!(loaded.embed_batch(&texts), bundled.embed_batch(&texts));
    // Only the bundled one carries the calibration.
    assert!(loaded.calibration().is_none() && bundled.calibration().is_some());
    assert_eq!(loaded.calibrate(0.5), 0.5);
}

#[test]
fn the_calibration_maps_potions_levels_onto_minilms_and_reaches_search_through_the_cache() {
    let encoder = Encoder::bundled().unwrap();
    // potion's cosine of 0.384 is MiniLM's 0.3, its 0.87 MiniLM's 0.8 (the knots).
    assert!((encoder.calibrate(0.384) - 0.3).abs() < 1e-6);
    assert!((encoder.calibrate(0.87) - 0.8).abs() < 1e-6);
    assert!(encoder.calibrate(0.2) < 0.2 && encoder.calibrate(1.0) == 1.0);
    let dir = tempfile::tempdir().unwrap();
    let cached = CachedEncoder::open(encoder, &dir.path().join("v.bin")).unwrap();
    assert!((Embedder::calibrate(&cached, 0.384) - 0.3).abs() < 1e-6);
}
