//! Measures how many texts per second the encoder embeds.
//!
//! `cargo run --release -p toolscout-embed --example embed_speed [COUNT]`
//! (2,000 texts of about 40 tokens by default). Skips when the model is absent.

use std::time::Instant;

use toolscout_embed::{Encoder, default_model_dir};

const WORDS: &[&str] = &[
    "convert",
    "currency",
    "amount",
    "weather",
    "forecast",
    "city",
    "search",
    "files",
    "directory",
    "calendar",
    "event",
    "invoice",
    "customer",
    "ticket",
    "status",
    "translate",
    "image",
    "resize",
    "database",
    "query",
    "records",
    "email",
    "send",
    "message",
    "stock",
    "price",
    "history",
    "route",
    "distance",
    "playlist",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 2000,
    };
    let Some(dir) = default_model_dir().filter(|d| d.join("model.safetensors").exists()) else {
        println!("skipped: no model found (run scripts/fetch-model.sh or set TOOLSCOUT_MODEL_DIR)");
        return Ok(());
    };
    let start = Instant::now();
    let encoder = Encoder::load(&dir)?;
    println!("loaded {} in {:.2?}", encoder.model(), start.elapsed());

    let texts: Vec<String> = (0..count)
        .map(|i| {
            let word = |k: usize| WORDS[(i * 7 + k * 13 + k * k) % WORDS.len()];
            format!(
                "tool_{i}_{}: {} the {} of a {} for the given {} and {}, returning {} {} \
                 with {} details. Use it when the user asks to {} {} or {} a {}.",
                word(0),
                word(1),
                word(2),
                word(3),
                word(4),
                word(5),
                word(6),
                word(7),
                word(8),
                word(9),
                word(10),
                word(11),
                word(12)
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = refs.iter().map(|t| encoder.token_ids(t).len()).sum();

    let start = Instant::now();
    let vectors = encoder.embed_batch(&refs);
    let elapsed = start.elapsed();
    println!(
        "{} texts, {:.1} tokens each on average, on {} threads: {:.2?}, {:.0} texts/s",
        vectors.len(),
        tokens as f64 / count as f64,
        rayon::current_num_threads(),
        elapsed,
        count as f64 / elapsed.as_secs_f64()
    );

    let start = Instant::now();
    let queries = 50;
    for i in 0..queries {
        encoder.embed_one(&format!(
            "how do I {} my {}",
            WORDS[i % 30],
            WORDS[(i * 7) % 30]
        ));
    }
    println!("one short query: {:.2?}", start.elapsed() / queries as u32);
    Ok(())
}
