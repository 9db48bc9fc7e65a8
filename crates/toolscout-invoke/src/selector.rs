//! [`ToolSelector`]: how an operator names the tools a rule is for — an approval given
//! up front (`--approve`), a secret's grant (`--secret-tool`) — by owner-qualified
//! identity, or by a bare name that only ever means a tool of the operator's own.

use std::fmt;

use toolscout_spec::name::QualifiedName;

/// The tools a rule names.
///
/// - `[owner:]bundle/tool` ([`QualifiedName`]) names one tool of one bundle: the owner
///   (a tenant's name; none for the operator's and the built-in bundles), the bundle's
///   slug, and the tool's slug or name.
/// - A bare name (`write_file`) names the tools of that name that are the operator's:
///   its own bundles and the built-ins, and tools in no catalog (registered in code).
///   **It never matches a tenant's tool,** whatever its name: a tenant could otherwise
///   name a tool after one the operator approves or grants a secret to.
///
/// ```
/// use toolscout_invoke::ToolSelector;
/// use toolscout_spec::name::QualifiedName;
///
/// let bare = ToolSelector::parse("get_weather")?;
/// let ops = QualifiedName::new(None, "weather", "get-weather");
/// let acme = QualifiedName::new(Some("acme"), "weather", "get-weather");
/// assert!(bare.matches("get_weather", Some(&ops)));
/// assert!(!bare.matches("get_weather", Some(&acme)));
/// let qualified = ToolSelector::parse("acme:weather/get_weather")?;
/// assert!(qualified.matches("get_weather", Some(&acme)));
/// assert!(!qualified.matches("get_weather", Some(&ops)));
/// # Ok::<(), toolscout_spec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolSelector {
    /// A bare name: the operator's tools of that name.
    Name(String),
    /// One tool of one bundle of one owner.
    Qualified(QualifiedName),
}

impl ToolSelector {
    /// Reads a selector: `[owner:]bundle/tool`, or a bare name. A qualified name that
    /// does not read is an error that says which part is wrong.
    pub fn parse(text: &str) -> toolscout_spec::Result<ToolSelector> {
        Ok(match QualifiedName::parse(text)? {
            Some(q) => ToolSelector::Qualified(q),
            None => ToolSelector::Name(text.to_owned()),
        })
    }

    /// Whether the tool named `name`, kept at `qualified` (`None`: in no catalog), is
    /// one this selector names.
    pub fn matches(&self, name: &str, qualified: Option<&QualifiedName>) -> bool {
        match self {
            ToolSelector::Name(n) => n == name && qualified.is_none_or(|q| q.owner.is_none()),
            ToolSelector::Qualified(want) => qualified.is_some_and(|q| {
                q.owner == want.owner
                    && q.bundle == want.bundle
                    && (q.tool == want.tool || name == want.tool)
            }),
        }
    }
}

impl fmt::Display for ToolSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolSelector::Name(n) => f.write_str(n),
            ToolSelector::Qualified(q) => q.fmt(f),
        }
    }
}
