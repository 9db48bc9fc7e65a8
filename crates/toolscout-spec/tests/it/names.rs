//! Name, slug and version validation: bad input gets a message that says which
//! character and where.

use insta::assert_snapshot;
use toolscout_spec::ToolName;
use toolscout_spec::name::{sanitize_name, validate_name, validate_slug, validate_version};

fn check(name: &str) -> String {
    match validate_name(name) {
        Ok(()) => "ok".to_owned(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn good_names() {
    for name in [
        "read_file",
        "math.factorial",
        "Alarm_1_AddAlarm",
        "a",
        "x-y.z_9",
        &"n".repeat(128),
    ] {
        assert_eq!(check(name), "ok", "{name}");
    }
}

#[test]
fn bad_names_say_which_character_and_where() {
    assert_snapshot!(check("get weather"), @r#"invalid tool name "get weather": character ' ' at position 4 is not allowed (use ASCII letters, digits, '_', '-' or '.')"#);
    assert_snapshot!(check("PDF&URLTool"), @r#"invalid tool name "PDF&URLTool": character '&' at position 4 is not allowed (use ASCII letters, digits, '_', '-' or '.')"#);
    assert_snapshot!(check("天气"), @r#"invalid tool name "天气": character '天' at position 1 is not allowed (use ASCII letters, digits, '_', '-' or '.')"#);
    assert_snapshot!(check("files/read"), @r#"invalid tool name "files/read": character '/' at position 6 is not allowed (use ASCII letters, digits, '_', '-' or '.')"#);
    assert_snapshot!(check(""), @r#"invalid tool name "": a name needs at least one character"#);
    assert_eq!(
        check(&"n".repeat(129)),
        format!(
            "invalid tool name \"{}\": 129 characters, at most 128 are allowed",
            "n".repeat(129)
        )
    );
}

#[test]
fn names_are_validated_when_deserialised() {
    let err = serde_json::from_str::<ToolName>("\"a b\"").unwrap_err();
    assert!(
        err.to_string().contains("character ' ' at position 2"),
        "{err}"
    );
    let spec =
        serde_json::from_str::<toolscout_spec::ToolSpec>(r#"{"name":"bad name","summary":"x"}"#);
    assert!(spec.is_err());
}

#[test]
fn sanitize_repairs_any_string_deterministically() {
    assert_eq!(sanitize_name("PDF&URLTool"), "PDF_URLTool");
    assert_eq!(sanitize_name(""), "_");
    let long = "vtex_local__Logistics_API__get__".repeat(8);
    let a = sanitize_name(&long);
    assert_eq!(a.chars().count(), 128);
    assert!(validate_name(&a).is_ok());
    assert_eq!(a, sanitize_name(&long));
    // Two long names sharing their first 128 characters stay distinct.
    let b = sanitize_name(&format!("{long}x"));
    assert_ne!(a, b);
    for odd in ["\u{0}", "🦀🦀", "a\nb", "   ", "名前"] {
        assert!(validate_name(&sanitize_name(odd)).is_ok(), "{odd:?}");
    }
}

#[test]
fn slugs_and_versions() {
    let check_slug =
        |s: &str| validate_slug(s).map_or_else(|e| e.to_string(), |()| "ok".to_owned());
    let check_version =
        |s: &str| validate_version(s).map_or_else(|e| e.to_string(), |()| "ok".to_owned());
    assert_eq!(check_slug("weather"), "ok");
    assert_eq!(check_slug("météo-2"), "ok");
    assert_eq!(check_slug("天气"), "ok");
    assert_eq!(check_version("v2.1-beta"), "ok");
    assert_snapshot!(check_slug("read_file"), @r#"invalid slug "read_file": character '_' at position 5 is not allowed (use letters, digits and '-')"#);
    assert_snapshot!(check_slug("v1.2"), @r#"invalid slug "v1.2": character '.' at position 3 is not allowed (use letters, digits and '-')"#);
    assert_snapshot!(check_slug("a b"), @r#"invalid slug "a b": character ' ' at position 2 is not allowed (use letters, digits and '-')"#);
    assert_snapshot!(check_version("1/2"), @r#"invalid version "1/2": character '/' at position 2 is not allowed (use letters, digits, '-' and '.')"#);
    assert_snapshot!(check_version(""), @r#"invalid version "": it must not be empty"#);
    assert_snapshot!(check_slug(&"é".repeat(65)), @r#"invalid slug "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé": 65 characters, at most 64 are allowed"#);
    assert_eq!(check_slug(&"é".repeat(64)), "ok");
}
