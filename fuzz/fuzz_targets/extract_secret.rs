//! Redaction against extraction (issue 61): an HTTP tool's response that echoes a secret,
//! read through any `extractExpr`, never gives back a run of 4 characters of the secret —
//! raw, percent-decoded or inside base64 — in its value or its error.
//!
//! Input, by lines: the secret (4 to 64 characters); a flags line (its first character
//! chooses the response's status, text or JSON reading and error mode); the
//! `extractExpr` (empty: none); the response body, where `\x01` stands for the secret,
//! `\x02` for `user:<secret>` in base64, `\x03` for the secret percent-encoded and `\x04`
//! for it JSON-escaped.
#![no_main]

use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolscout_invoke::fuzzing::read_response;
use toolscout_invoke::{HttpImpl, REDACTED, SecretStore};

/// What the outcome shows: every string, key and number, cut at the `[REDACTED]` marks.
fn shown(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.extend(s.split(REDACTED).map(str::to_owned)),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| shown(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.extend(k.split(REDACTED).map(str::to_owned));
                shown(v, out);
            }
        }
        _ => {}
    }
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` read as base64 from each of its first four characters, in both alphabets.
fn base64_readings(text: &str) -> Vec<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let mut out = Vec::new();
    for run in text.split(|c: char| !(c.is_ascii_alphanumeric() || "+/-_".contains(c))) {
        for start in 0..4.min(run.len()) {
            let piece = &run[start..];
            let piece = &piece[..piece.len() - piece.len() % 4];
            for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                if let Ok(bytes) = engine.decode(piece) {
                    out.push(bytes);
                }
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.splitn(4, '\n');
    let (Some(secret), Some(flags), Some(expr), body) =
        (lines.next(), lines.next(), lines.next(), lines.next().unwrap_or(""))
    else {
        return;
    };
    let n = secret.chars().count();
    if !(4..=64).contains(&n) || secret.contains(['\u{1}', '\u{2}', '\u{3}', '\u{4}']) {
        return;
    }
    let flag = flags.bytes().next().unwrap_or(0);
    let status = match flag % 4 {
        0 | 1 => 200,
        2 => 500,
        _ => 404,
    };
    let mut block = json!({"urlTemplate": "http://fuzz.test/r"});
    if flag & 4 != 0 {
        block["responseEncoding"] = json!("text");
    }
    if flag & 8 != 0 {
        block["responseEncoding"] = json!("outcome");
    }
    if flag & 16 != 0 {
        block["errorMode"] = json!("empty");
    }
    if !expr.is_empty() {
        block["extractExpr"] = json!(expr);
    }
    let Ok(http) = serde_json::from_value::<HttpImpl>(block) else {
        return;
    };
    if http.validate("fuzz").is_err() {
        return;
    }
    let json_escaped = serde_json::to_string(secret).unwrap_or_default();
    let json_escaped = json_escaped.trim_matches('"');
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("user:{secret}"));
    let body = body
        .replace('\u{1}', secret)
        .replace('\u{2}', &basic)
        .replace('\u{3}', &percent_encode(secret))
        .replace('\u{4}', json_escaped);
    let mut secrets = SecretStore::default();
    secrets.insert("K", secret);
    // What the call gives: its value, or its error's message and details (the outcome's
    // own keys and the error's kind are the protocol's words, not the response's).
    let outcome = match read_response(&http, status, body.as_bytes(), &secrets) {
        Ok(value) => value,
        Err(e) => json!([e.message, e.details]),
    };
    let chars: Vec<char> = secret.chars().collect();
    let pieces: Vec<String> = chars.windows(4).map(|w| w.iter().collect()).collect();
    let mut texts = Vec::new();
    shown(&outcome, &mut texts);
    for text in &texts {
        let decoded = percent_decode(text);
        let readings = base64_readings(text);
        for p in &pieces {
            assert!(!text.contains(p.as_str()), "{p:?} in {text:?}");
            assert!(!decoded.contains(p.as_str()), "{p:?} in {decoded:?}");
            for bytes in &readings {
                assert!(
                    !bytes.windows(p.len()).any(|w| w == p.as_bytes()),
                    "{p:?} inside base64 in {text:?}"
                );
            }
        }
    }
});
