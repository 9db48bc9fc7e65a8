//! The Unigram tokenizer (XLM-R's kind) against ids from Hugging Face `tokenizers` 0.23
//! on two small `tokenizer.json`s (`tests/data/unigram_tiny.json`): 34 pieces, a
//! character map of seven rules (`ﬁ` → `fi`, `Ａ` → `A`, `e` + U+0301 → `é`, U+3000 and tab
//! → space, U+200B → nothing, `ｈ` → `h`), in the two layouts XLM-R's files come in:
//! WhitespaceSplit then Metaspace (multilingual-e5-small's), and Metaspace alone after a
//! run of spaces is made one (`tokenizers` 0.14 and later), which keeps a trailing space.

use serde::Deserialize;
use serde_json::{Value, json};
use toolscout_embed::{Error, Tokenizer};

#[derive(Deserialize)]
struct Fixture {
    legacy: Value,
    metaspace: Value,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    legacy: Vec<u32>,
    legacy_5: Vec<u32>,
    metaspace: Vec<u32>,
    metaspace_5: Vec<u32>,
}

fn fixture() -> Fixture {
    serde_json::from_str(include_str!("../data/unigram_tiny.json")).unwrap()
}

fn load(json: &Value) -> Tokenizer {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokenizer.json");
    std::fs::write(&path, json.to_string()).unwrap();
    Tokenizer::from_file(&path).unwrap()
}

#[test]
fn matches_hugging_face_in_both_layouts() {
    let f = fixture();
    let legacy = load(&f.legacy);
    let metaspace = load(&f.metaspace);
    assert_eq!(legacy.vocab_size(), 34);
    for case in &f.cases {
        let text = &case.text;
        assert_eq!(legacy.encode(text, 512), case.legacy, "legacy {text:?}");
        assert_eq!(legacy.encode(text, 5), case.legacy_5, "legacy, 5: {text:?}");
        assert_eq!(metaspace.encode(text, 512), case.metaspace, "{text:?}");
        assert_eq!(metaspace.encode(text, 5), case.metaspace_5, "5: {text:?}");
    }
}

#[test]
fn unknown_characters_in_a_row_are_one_unk() {
    let t = load(&fixture().legacy);
    // `▁` then one `<unk>` (3) for "qqq", not three; across words they stay apart.
    assert_eq!(t.encode("qqq", 512), [0, 4, 3, 2]);
    assert_eq!(t.encode("q q", 512), [0, 4, 3, 4, 3, 2]);
}

#[test]
fn the_character_map_rewrites_before_segmenting() {
    let t = load(&fixture().legacy);
    for (written, read) in [
        ("ﬁne", "fine"),
        ("cafe\u{301}", "café"),
        ("x\u{200b}y", "xy"),
    ] {
        assert_eq!(t.encode(written, 512), t.encode(read, 512), "{written:?}");
    }
    assert_eq!(t.encode("ﬁne", 512), [0, 19, 2]);
}

#[test]
fn truncation_keeps_the_template() {
    let t = load(&fixture().legacy);
    assert_eq!(t.encode("hello world", 2), [0, 2]);
    assert_eq!(t.encode("hello world", 3), [0, 5, 2]);
    assert_eq!(t.encode(&"a ".repeat(1000), 128).len(), 128);
}

#[test]
fn errors_name_the_file_and_what_is_wrong() {
    let f = fixture();
    let check = |edit: &dyn Fn(&mut Value), needle: &str| {
        let mut json = f.legacy.clone();
        edit(&mut json);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, json.to_string()).unwrap();
        let err = Tokenizer::from_file(&path).unwrap_err();
        assert!(matches!(err, Error::Tokenizer { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains("tokenizer.json") && message.contains(needle),
            "{message}"
        );
    };
    check(
        &|j: &mut Value| j["model"]["byte_fallback"] = true.into(),
        "byte_fallback",
    );
    check(
        &|j: &mut Value| j["normalizer"] = json!({"type": "NFKC"}),
        "\"NFKC\"",
    );
    check(
        &|j: &mut Value| j["normalizer"]["precompiled_charsmap"] = "not base64!".into(),
        "base64",
    );
    check(&|j: &mut Value| j["model"]["unk_id"] = 99.into(), "unk_id");
    check(
        &|j: &mut Value| j["model"]["vocab"][5] = json!(["▁hello"]),
        "entry 5",
    );
    check(
        &|j: &mut Value| j["pre_tokenizer"] = json!({"type": "ByteLevel"}),
        "\"ByteLevel\"",
    );
    check(
        &|j: &mut Value| j["model"]["type"] = "BPE".into(),
        "\"BPE\"",
    );
}
