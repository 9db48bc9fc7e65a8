//! [`Bm25`]: a plain Okapi BM25 over name + description (+ parameters), the floor that
//! toolscout's ranking is measured against.
//!
//! It is the same computation as `shared/data/bm25_baseline.py` (k1 = 1.2, b = 0.75; the
//! name counted twice, then the description, parameter names and their descriptions;
//! lowercase words split on anything but ASCII letters, digits and CJK ideographs, and
//! between a lower and an upper case letter), so its figures match that script's. It
//! shares nothing with the index and none of its tuning.

use std::collections::HashMap;

use serde_json::Value;
use toolscout_spec::ToolSpec;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// An in-memory BM25 over a list of tools.
#[derive(Debug, Default)]
pub struct Bm25 {
    postings: HashMap<String, Vec<(u32, u32)>>,
    idf: HashMap<String, f64>,
    doc_len: Vec<f64>,
    avg_len: f64,
}

impl Bm25 {
    /// Indexes the tools; hits are their positions in `tools`.
    pub fn new(tools: &[ToolSpec]) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut doc_len = Vec::with_capacity(tools.len());
        for (i, t) in tools.iter().enumerate() {
            let mut tf: HashMap<String, u32> = HashMap::new();
            let text = doc_text(t);
            let words = tokens(&text);
            doc_len.push(words.len() as f64);
            for w in words {
                *tf.entry(w).or_default() += 1;
            }
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for (w, n) in tf {
                postings.entry(w).or_default().push((i, n));
            }
        }
        let n = tools.len() as f64;
        let idf = postings
            .iter()
            .map(|(w, p)| {
                let df = p.len() as f64;
                (w.clone(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
            })
            .collect();
        let avg_len = if doc_len.is_empty() {
            1.0
        } else {
            (doc_len.iter().sum::<f64>() / n).max(1e-9)
        };
        Bm25 {
            postings,
            idf,
            doc_len,
            avg_len,
        }
    }

    /// The best `k` tools for `query`: (position, score), best first.
    pub fn search(&self, query: &str, k: usize) -> Vec<(usize, f64)> {
        let mut words = tokens(query);
        words.sort();
        words.dedup();
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for w in &words {
            let (Some(post), Some(idf)) = (self.postings.get(w), self.idf.get(w)) else {
                continue;
            };
            for &(i, n) in post {
                let n = f64::from(n);
                let dl = self.doc_len.get(i as usize).copied().unwrap_or(0.0);
                *scores.entry(i).or_default() +=
                    idf * n * (K1 + 1.0) / (n + K1 * (1.0 - B + B * dl / self.avg_len));
            }
        }
        let mut ranked: Vec<(usize, f64)> =
            scores.into_iter().map(|(i, s)| (i as usize, s)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(k);
        ranked
    }
}

fn doc_text(t: &ToolSpec) -> String {
    let mut parts = vec![
        t.name.to_string(),
        t.name.to_string(),
        t.description.clone(),
    ];
    if let Some(props) = t.parameters.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            parts.push(k.clone());
            if let Some(d) = v.get("description") {
                parts.push(match d {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            }
        }
    }
    parts.join(" ")
}

/// Lowercase words, split as the reference script splits them.
fn tokens(s: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(s.len() + 8);
    let mut prev: Option<char> = None;
    for c in s.chars() {
        if prev.is_some_and(|p| p.is_ascii_lowercase()) && c.is_ascii_uppercase() {
            spaced.push(' ');
        }
        spaced.push(c);
        prev = Some(c);
    }
    spaced
        .to_lowercase()
        .split(|c: char| !(c.is_ascii_alphanumeric() || ('\u{4e00}'..='\u{9fff}').contains(&c)))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_the_reference_script() {
        assert_eq!(
            tokens("getWeather in Tokyo_2"),
            ["get", "weather", "in", "tokyo", "2"]
        );
    }
}
