//! The tokenizer against a small hand-written vocabulary.

use toolscout_embed::{Error, Tokenizer};

use crate::fixture::{VOCAB, write_tokenizer};

fn tokenizer() -> Tokenizer {
    let dir = tempfile::tempdir().unwrap();
    write_tokenizer(dir.path(), VOCAB);
    Tokenizer::from_file(&dir.path().join("tokenizer.json")).unwrap()
}

/// The tokens of `text` joined by spaces, `[CLS]` and `[SEP]` left out.
fn check(text: &str, max_tokens: usize) -> String {
    let ids = tokenizer().encode(text, max_tokens);
    assert_eq!(ids.first(), Some(&2), "{text:?} must start with [CLS]");
    assert_eq!(ids.last(), Some(&3), "{text:?} must end with [SEP]");
    ids[1..ids.len() - 1]
        .iter()
        .map(|&id| VOCAB[id as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn splits_on_whitespace_and_every_punctuation_char() {
    assert_eq!(
        check("Hello,World!!  the\tweather.", 128),
        "hello , world ! ! the weather ."
    );
    assert_eq!(check("don't", 128), "don ' t");
    assert_eq!(check("get_weather", 128), "get _ weather");
}

#[test]
fn lowercases_and_strips_accents() {
    assert_eq!(check("CAFÉ Résumé", 128), "cafe resume");
    // A decomposed accent (e + U+0301) is stripped too.
    assert_eq!(check("cafe\u{301}", 128), "cafe");
}

#[test]
fn cjk_ideographs_are_words_of_their_own() {
    assert_eq!(check("中国人a", 128), "中 国 [UNK] a");
}

#[test]
fn continues_words_with_double_hash_pieces() {
    assert_eq!(check("unaffable hellos", 128), "un ##aff ##able hello ##s");
}

#[test]
fn a_word_with_an_unknown_part_is_one_unk() {
    assert_eq!(check("hellox unaffablex b", 128), "[UNK] [UNK] b");
}

#[test]
fn a_word_over_100_chars_is_one_unk() {
    let hundred = "a".repeat(100);
    assert_eq!(check(&hundred, 512).split(' ').count(), 100);
    assert_eq!(check(&format!("{hundred}a b"), 512), "[UNK] b");
}

#[test]
fn control_chars_are_dropped_and_odd_spaces_split() {
    assert_eq!(
        check("hel\u{200b}lo\u{0}\u{a0}world\u{2028}b", 128),
        "hello world b"
    );
    assert_eq!(check("", 128), "");
    assert_eq!(check(" \n\t ", 128), "");
}

#[test]
fn truncates_to_max_tokens_including_cls_and_sep() {
    assert_eq!(check("hello world hello world", 4), "hello world");
    // A word's pieces may be cut in the middle, as Hugging Face's truncation does.
    assert_eq!(check("unaffable", 4), "un ##aff");
    assert_eq!(check("hello", 2), "");
    assert_eq!(tokenizer().encode(&"a ".repeat(1000), 128).len(), 128);
}

#[test]
fn a_tokenizer_without_cls_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_tokenizer(dir.path(), &["[UNK]", "[SEP]", "a"]);
    let path = dir.path().join("tokenizer.json");
    let err = Tokenizer::from_file(&path).unwrap_err();
    assert!(matches!(err, Error::Tokenizer { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("tokenizer.json") && message.contains("[CLS]"),
        "{message}"
    );
}
