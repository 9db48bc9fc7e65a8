//! Did-you-mean: the names closest to a name that is no tool's (or agent's), and the
//! phrase that offers them. The one rule behind every suggestion of the workspace: the
//! search index's, the discover tools', the catalog's checks of a recipe, the servers' and
//! the CLI's (`toolscout_search` re-exports it).

/// How alike a name must be to the one asked for to be suggested (Jaro-Winkler, case
/// folded, from 0 to 1).
pub const MIN_LIKENESS: f64 = 0.75;
/// How many names one suggestion offers at most.
pub const MAX_SUGGESTIONS: usize = 3;

/// The names among `candidates` closest to `name`, best first (ties by name), at most
/// [`MAX_SUGGESTIONS`], each at least [`MIN_LIKENESS`] alike; duplicates once.
///
/// ```
/// use toolscout_spec::suggest::closest_names;
/// let names = ["get_weather", "get_forecast", "send_email"];
/// assert_eq!(closest_names("GET_WETHER", names)[0], "get_weather");
/// assert!(!closest_names("get_wether", names).contains(&"send_email"));
/// assert!(closest_names("teleport", names).is_empty());
/// ```
pub fn closest_names<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    let asked = name.to_lowercase();
    let mut scored: Vec<(f64, &str)> = Vec::new();
    for candidate in candidates {
        if candidate.is_empty() || scored.iter().any(|(_, n)| *n == candidate) {
            continue;
        }
        let score = strsim::jaro_winkler(&asked, &candidate.to_lowercase());
        if score >= MIN_LIKENESS {
            scored.push((score, candidate));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, n)| n)
        .collect()
}

/// `did you mean: a, b?`, the phrase that offers `names` in a message; `None` when
/// there are none.
///
/// ```
/// assert_eq!(
///     toolscout_spec::suggest::did_you_mean(&["get_weather", "get_forecast"]).as_deref(),
///     Some("did you mean: get_weather, get_forecast?")
/// );
/// assert_eq!(toolscout_spec::suggest::did_you_mean::<&str>(&[]), None);
/// ```
pub fn did_you_mean<S: AsRef<str>>(names: &[S]) -> Option<String> {
    if names.is_empty() {
        return None;
    }
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    Some(format!("did you mean: {}?", names.join(", ")))
}
