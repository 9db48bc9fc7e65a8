//! The one error type of `toolscout-spec`.

/// What went wrong while building, validating, disclosing or converting a [`crate::ToolSpec`].
///
/// Every variant carries the context a person needs to fix the input: the tool, the
/// parameter, the offending character and its position, the format being converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool name is empty or longer than [`crate::name::MAX_NAME_LEN`] characters.
    #[error("invalid tool name {name:?}: {reason}")]
    NameLength {
        /// The rejected name.
        name: String,
        /// Why its length is wrong.
        reason: String,
    },
    /// A tool name contains a character outside `A-Z a-z 0-9 _ - .`.
    #[error(
        "invalid tool name {name:?}: character {ch:?} at position {position} is not allowed \
         (use ASCII letters, digits, '_', '-' or '.')"
    )]
    NameCharacter {
        /// The rejected name.
        name: String,
        /// The first character that is not allowed.
        ch: char,
        /// Its position, counted in characters from 1.
        position: usize,
    },
    /// A slug or version label breaks the rules of the tools spec.
    #[error("invalid {what} {value:?}: {reason}")]
    Label {
        /// `"slug"` or `"version"`.
        what: &'static str,
        /// The rejected label.
        value: String,
        /// Why it is rejected.
        reason: String,
    },
    /// A parameter name that the tool does not have.
    #[error("tool '{tool}' has no parameter '{parameter}'; its parameters are: {}", list_or_none(.available))]
    UnknownParameter {
        /// The tool that was asked.
        tool: String,
        /// The parameter that was asked for.
        parameter: String,
        /// The parameters the tool does have, in schema order.
        available: Vec<String>,
    },
    /// A tool's parameter or output schema is not a usable JSON Schema object.
    #[error("tool '{tool}': invalid {field}: {reason}")]
    Schema {
        /// The tool whose schema is wrong.
        tool: String,
        /// `"parameters"` or `"output_schema"`.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A field holds a value it must not, e.g. an empty or multi-line summary.
    #[error("tool '{tool}': {field} {reason}")]
    Field {
        /// The tool.
        tool: String,
        /// The field.
        field: &'static str,
        /// What is wrong, phrased to follow the field name.
        reason: String,
    },
    /// A document in another format could not be converted.
    #[error("{format}: {reason}")]
    Format {
        /// The format being read, e.g. `"openai"`, `"mcp"`, `"jsonl line 3"`.
        format: String,
        /// What is wrong with the document.
        reason: String,
    },
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}

impl Error {
    pub(crate) fn format(format: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Error::Format {
            format: format.into(),
            reason: reason.to_string(),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
