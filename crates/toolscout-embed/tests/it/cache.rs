//! The vector cache file.

use std::path::Path;

use toolscout_embed::{CachedEncoder, Encoder, Error};
use toolscout_search::Embedder;

use crate::fixture::tiny_model;

fn open(dir: &Path, file: &Path) -> CachedEncoder {
    CachedEncoder::open(Encoder::load(dir).unwrap(), file).unwrap()
}

fn size(file: &Path) -> u64 {
    std::fs::metadata(file).unwrap().len()
}

#[test]
fn vectors_survive_a_reopen_and_are_not_written_twice() {
    let (tmp, dir) = tiny_model();
    let file = tmp.path().join("vectors/nested/cache.bin");
    let cached = open(&dir, &file);
    assert!(cached.is_empty());
    let texts = ["hello", "the weather", "hello", "a b"];
    let first = cached.embed(&texts);
    assert_eq!(first, Encoder::load(&dir).unwrap().embed_batch(&texts));
    assert_eq!(
        cached.len(),
        3,
        "a text repeated in one batch is stored once"
    );
    let written = size(&file);

    let reopened = open(&dir, &file);
    assert_eq!(reopened.len(), 3);
    assert_eq!(Embedder::model(&reopened), "tiny-bert");
    assert_eq!(Embedder::embed(&reopened, &texts), first);
    assert_eq!(size(&file), written, "hits must not be appended again");
    reopened.embed(&["b"]);
    assert!(size(&file) > written);
    assert_eq!(open(&dir, &file).len(), 4);
}

#[test]
fn a_record_cut_short_by_a_crash_is_ignored() {
    let (tmp, dir) = tiny_model();
    let file = tmp.path().join("cache.bin");
    open(&dir, &file).embed(&["hello", "world", "a"]);
    let full = size(&file);
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(full - 5).unwrap();
    drop(f);

    let cached = open(&dir, &file);
    assert_eq!(cached.len(), 2);
    // The lost vector is computed again and appended after the torn record, where the
    // next reader still finds it.
    let again = cached.embed(&["hello", "world", "a", "b"]);
    assert_eq!(again[2], Encoder::load(&dir).unwrap().embed_one("a"));
    assert_eq!(open(&dir, &file).len(), 4);
}

#[test]
fn a_cache_of_another_model_or_limit_is_an_error_that_says_so() {
    let (tmp, dir) = tiny_model();
    let file = tmp.path().join("cache.bin");
    open(&dir, &file).embed(&["hello"]);
    let other = Encoder::load(&dir).unwrap().with_max_tokens(8);
    let err = CachedEncoder::open(other, &file).unwrap_err();
    assert!(matches!(err, Error::CacheMismatch { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("cache.bin")
            && message.contains("\"tiny-bert\" with 16 tokens")
            && message.contains("\"tiny-bert\" with 8 tokens"),
        "{message}"
    );

    std::fs::write(&file, b"something else").unwrap();
    let message = CachedEncoder::open(Encoder::load(&dir).unwrap(), &file)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("not a toolscout vector cache"),
        "{message}"
    );
}

#[test]
fn default_cache_file_names_model_and_limit() {
    if let Some(path) = CachedEncoder::default_cache_file("all-MiniLM-L6-v2", 128) {
        assert!(
            path.ends_with("toolscout/vectors/all-MiniLM-L6-v2-128.bin"),
            "{}",
            path.display()
        );
    }
}

#[test]
fn one_text_is_encoded_without_reading_the_file() {
    let (tmp, dir) = tiny_model();
    let file = tmp.path().join("cache.bin");
    let first = open(&dir, &file).embed(&["hello", "world"]);
    let written = size(&file);
    // A lone text (a query) is encoded without reading the file...
    let cached = open(&dir, &file);
    assert_eq!(cached.embed(&["hello"])[0], first[0]);
    assert_eq!(size(&file), written, "a lone text is not appended");
    // ...and the file is read, whole, when a batch comes.
    assert_eq!(
        cached.embed(&["world", "hello"]),
        [first[1].clone(), first[0].clone()]
    );
    assert_eq!(cached.len(), 2);
    assert_eq!(size(&file), written);
}
