//! Tool names, slugs and version labels: validation and repair.
//!
//! Tool names follow the Model Context Protocol: ASCII letters, digits, `_`, `-` and `.`,
//! 1 to [`MAX_NAME_LEN`] characters. Real catalogs use dots (`math.factorial`); the OpenAI
//! adapter maps those to legal aliases (see [`crate::adapters::openai::NameMap`]).
//!
//! Slugs and versions follow the tools spec: Unicode letters, digits and the ASCII dash
//! (a dot too, in versions), at most [`MAX_LABEL_LEN`] characters, case-sensitive.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The longest tool name accepted, in characters.
pub const MAX_NAME_LEN: usize = 128;
/// The longest slug or version label accepted, in characters.
pub const MAX_LABEL_LEN: usize = 64;

/// A validated tool name.
///
/// ```
/// use toolscout_spec::ToolName;
/// assert!(ToolName::new("math.factorial").is_ok());
/// let err = ToolName::new("get weather").unwrap_err();
/// assert!(err.to_string().contains("' ' at position 4"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolName(String);

impl ToolName {
    /// Validates `name` and wraps it.
    pub fn new(name: impl Into<String>) -> Result<Self> {
        let name = name.into();
        validate_name(&name)?;
        Ok(ToolName(name))
    }

    /// A name that is never shown: builders replace it before they return.
    pub(crate) fn placeholder() -> Self {
        ToolName(String::from("_"))
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ToolName {
    type Error = Error;
    fn try_from(value: String) -> Result<Self> {
        ToolName::new(value)
    }
}

impl From<ToolName> for String {
    fn from(value: ToolName) -> Self {
        value.0
    }
}

impl std::ops::Deref for ToolName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for ToolName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for ToolName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for ToolName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Checks a tool name; the error names the first bad character and its position.
pub fn validate_name(name: &str) -> Result<()> {
    let len = name.chars().count();
    if len == 0 {
        return Err(Error::NameLength {
            name: name.to_owned(),
            reason: "a name needs at least one character".to_owned(),
        });
    }
    if let Some((i, ch)) = name.chars().enumerate().find(|(_, c)| !is_name_char(*c)) {
        return Err(Error::NameCharacter {
            name: name.to_owned(),
            ch,
            position: i + 1,
        });
    }
    if len > MAX_NAME_LEN {
        return Err(Error::NameLength {
            name: name.to_owned(),
            reason: format!("{len} characters, at most {MAX_NAME_LEN} are allowed"),
        });
    }
    Ok(())
}

/// Turns any string into a valid tool name, deterministically.
///
/// Valid names come back unchanged. Otherwise every character that is not allowed becomes
/// `_`, and a name longer than [`MAX_NAME_LEN`] keeps its head and gets a short hash of the
/// whole original, so two long names that share a prefix stay distinct. Importers use it
/// for catalogs whose names break the rules (`PDF&URLTool`, 200-character OpenAPI ids);
/// apply the same function to names that refer to those tools.
///
/// ```
/// use toolscout_spec::name::sanitize_name;
/// assert_eq!(sanitize_name("PDF&URLTool"), "PDF_URLTool");
/// assert_eq!(sanitize_name("read_file"), "read_file");
/// assert!(sanitize_name(&"x".repeat(300)).len() <= 128);
/// ```
pub fn sanitize_name(raw: &str) -> String {
    if validate_name(raw).is_ok() {
        return raw.to_owned();
    }
    let mut out: String = raw
        .chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    if out.chars().count() > MAX_NAME_LEN {
        let hash = short_hash(raw);
        out = out.chars().take(MAX_NAME_LEN - hash.len() - 1).collect();
        out.push('-');
        out.push_str(&hash);
    }
    out
}

/// An 8-hex-digit hash (64-bit FNV-1a, its halves xor-folded): stable across platforms
/// and releases.
pub(crate) fn short_hash(s: &str) -> String {
    use std::hash::Hasher as _;
    let mut h = fnv::FnvHasher::default();
    h.write(s.as_bytes());
    let h = h.finish();
    format!("{:08x}", (h >> 32) ^ (h & 0xffff_ffff))
}

/// Checks a bundle or tool slug: Unicode letters, digits and `-`, 1–64 characters.
pub fn validate_slug(slug: &str) -> Result<()> {
    validate_label("slug", slug, false)
}

/// Checks a version label: Unicode letters, digits, `-` and `.`, 1–64 characters.
///
/// Versions are opaque: no ordering is implied.
pub fn validate_version(version: &str) -> Result<()> {
    validate_label("version", version, true)
}

fn validate_label(what: &'static str, value: &str, dot_ok: bool) -> Result<()> {
    let err = |reason: String| Error::Label {
        what,
        value: value.to_owned(),
        reason,
    };
    let len = value.chars().count();
    if len == 0 {
        return Err(err("it must not be empty".to_owned()));
    }
    if len > MAX_LABEL_LEN {
        return Err(err(format!(
            "{len} characters, at most {MAX_LABEL_LEN} are allowed"
        )));
    }
    for (i, c) in value.chars().enumerate() {
        let ok = c.is_alphanumeric() || c == '-' || (dot_ok && c == '.');
        if !ok {
            let allowed = if dot_ok {
                "letters, digits, '-' and '.'"
            } else {
                "letters, digits and '-'"
            };
            return Err(err(format!(
                "character {c:?} at position {} is not allowed (use {allowed})",
                i + 1
            )));
        }
    }
    Ok(())
}

/// Derives a slug from a tool name: `read_file` → `read-file`, `math.factorial` → `math-factorial`.
pub fn slug_from_name(name: &str) -> String {
    let mut slug: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    if slug.chars().count() > MAX_LABEL_LEN {
        let hash = short_hash(name);
        slug = slug.chars().take(MAX_LABEL_LEN - hash.len() - 1).collect();
        slug.push('-');
        slug.push_str(&hash);
    }
    slug
}

/// A tool named by where it is kept, `[owner:]bundle/tool`: its owner (a tenant's
/// name; none for the operator's and the built-in bundles), its bundle's slug, and the
/// tool's slug or name in that bundle. No name, slug or tenant name holds `/` or `:`, so
/// the form never reads as a bare name.
///
/// **Rationale:** a bare name is whatever a catalog entry says it is, and two owners may
/// each hold one; an approval or a secret's grant that must reach one tool names it so
/// (`files/write-file`, `acme:crm/lookup`).
///
/// ```
/// use toolscout_spec::name::QualifiedName;
///
/// let q = QualifiedName::parse("acme:crm/lookup")?.unwrap();
/// assert_eq!(q.owner.as_deref(), Some("acme"));
/// assert_eq!((q.bundle.as_str(), q.tool.as_str()), ("crm", "lookup"));
/// assert_eq!(q.to_string(), "acme:crm/lookup");
/// assert_eq!(QualifiedName::parse("write_file")?, None);
/// assert!(QualifiedName::parse("crm/").is_err());
/// # Ok::<(), toolscout_spec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QualifiedName {
    /// The owner's (tenant's) name; `None` for the operator's and the built-in bundles.
    pub owner: Option<String>,
    /// The bundle's slug.
    pub bundle: String,
    /// The tool's slug, or its name, in the bundle.
    pub tool: String,
}

impl QualifiedName {
    /// A tool of `bundle` kept by `owner`.
    pub fn new(owner: Option<&str>, bundle: &str, tool: &str) -> QualifiedName {
        QualifiedName {
            owner: owner.map(str::to_owned),
            bundle: bundle.to_owned(),
            tool: tool.to_owned(),
        }
    }

    /// Reads `[owner:]bundle/tool`; `Ok(None)` for text without `/` (a bare name), an
    /// error naming the part that is empty or the character that does not belong.
    pub fn parse(text: &str) -> Result<Option<QualifiedName>> {
        let Some((head, tool)) = text.split_once('/') else {
            return Ok(None);
        };
        let bad = |reason: String| Error::Format {
            format: format!("qualified tool name {text:?}"),
            reason,
        };
        let (owner, bundle) = match head.split_once(':') {
            Some((owner, bundle)) => (Some(owner), bundle),
            None => (None, head),
        };
        for (what, part) in [
            ("owner", owner.unwrap_or("-")),
            ("bundle", bundle),
            ("tool", tool),
        ] {
            if part.is_empty() {
                return Err(bad(format!(
                    "the {what} is empty; write [owner:]bundle/tool, e.g. acme:crm/lookup"
                )));
            }
            if let Some(c) = part
                .chars()
                .find(|c| matches!(c, '/' | ':') || c.is_whitespace())
            {
                return Err(bad(format!(
                    "the {what} {part:?} holds {c:?}; write [owner:]bundle/tool, e.g. acme:crm/lookup"
                )));
            }
        }
        Ok(Some(QualifiedName {
            owner: owner.map(str::to_owned),
            bundle: bundle.to_owned(),
            tool: tool.to_owned(),
        }))
    }
}

impl fmt::Display for QualifiedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(owner) = &self.owner {
            write!(f, "{owner}:")?;
        }
        write!(f, "{}/{}", self.bundle, self.tool)
    }
}

impl Serialize for QualifiedName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
