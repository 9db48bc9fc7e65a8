//! [`ToolSpec`]: one tool, described at every level of detail.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::{Error, Result, ToolName, usage};

/// The names an object schema's `required` lists, as a set.
///
/// **Rationale:** a schema from a catalog or a remote manifest may list a hundred thousand
/// properties, all required; looking each property up in the list took quadratic time
/// (a 1 MB manifest, over a minute; #36).
pub(crate) fn required_names(schema: &Value) -> fnv::FnvHashSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// How expensive a call is, relative to other tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cost {
    /// Cheap: local, fast, no paid API.
    #[default]
    Low,
    /// Noticeable: a network call or some compute.
    Medium,
    /// Expensive: paid APIs, long computations, agents.
    High,
    /// Depends on the arguments.
    Variable,
}

impl Cost {
    /// The lowercase name used in every format.
    pub fn as_str(self) -> &'static str {
        match self {
            Cost::Low => "low",
            Cost::Medium => "medium",
            Cost::High => "high",
            Cost::Variable => "variable",
        }
    }
}

/// Orchestration metadata: how a host should treat calls to the tool.
///
/// The first seven fields are those of the tool-discovery manifest; `read_only`,
/// `destructive` and `open_world` feed the Model Context Protocol's annotations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Metadata {
    /// Whether the tool is active when first installed.
    pub enabled_by_default: bool,
    /// Whether a person must approve each call.
    pub requires_approval: bool,
    /// Default timeout of a call, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// How many calls a minute are allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit_per_minute: Option<u32>,
    /// Relative cost of a call.
    pub cost_estimate: Cost,
    /// Whether a call may take a long time.
    pub long_running: bool,
    /// Whether repeating a call with the same arguments is safe (and so may be retried).
    pub idempotent: bool,
    /// Whether the tool only reads (changes nothing).
    pub read_only: bool,
    /// Whether the tool may destroy or overwrite data.
    pub destructive: bool,
    /// Whether the tool reaches the world outside the host (network, other people).
    pub open_world: bool,
}

impl Default for Metadata {
    fn default() -> Self {
        Metadata {
            enabled_by_default: true,
            requires_approval: false,
            timeout_seconds: None,
            rate_limit_per_minute: None,
            cost_estimate: Cost::Low,
            long_running: false,
            idempotent: false,
            read_only: false,
            destructive: false,
            open_world: false,
        }
    }
}

impl Metadata {
    fn is_default(&self) -> bool {
        *self == Metadata::default()
    }
}

/// One example call: arguments and what they do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// What the example shows.
    pub description: String,
    /// The arguments, a JSON object.
    pub input: Value,
}

/// One way a call can fail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCase {
    /// A short machine-friendly kind, e.g. `not_found`.
    pub kind: String,
    /// When it happens.
    pub when: String,
}

/// A tool, described at three levels of detail.
///
/// * Level 1 — [`name`](Self::name) and [`summary`](Self::summary): enough to browse.
/// * Level 2 — description, usage, parameter names, returns: enough to decide.
/// * Level 3 — full parameter schemas, examples, errors, notes: enough to call.
///
/// Build one with [`ToolSpec::builder`], from an argument type with
/// [`ToolSpec::from_args`](crate::ToolSpec::from_args), or read one with serde (its JSON
/// form is the canonical toolscout format; deserialising validates the name, and
/// [`ToolSpec::validate`] checks the rest).
///
/// ```
/// use serde_json::json;
/// use toolscout_spec::{Level, ToolSpec};
///
/// let spec = ToolSpec::builder("get_weather", "Current weather for a city")
///     .description("Returns the current weather conditions for a city.")
///     .parameters(json!({
///         "type": "object",
///         "properties": {"city": {"type": "string", "description": "City name"}},
///         "required": ["city"]
///     }))
///     .returns("object: temperature and conditions")
///     .build()?;
/// assert_eq!(spec.usage(), r#"get_weather(city="…")"#);
/// assert!(spec.disclose(Level::L2).to_text().contains("Parameters: city"));
/// # Ok::<(), toolscout_spec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Unique name (see [`ToolName`]).
    pub name: ToolName,
    /// Human display name, e.g. "Read file". Used as MCP `title` and `displayName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Level 1: one line saying what the tool does.
    pub summary: String,
    /// Level 2: a few sentences. Defaults to the summary.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// How a call looks; generated from the schema when absent (see [`ToolSpec::usage`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    /// What a call returns, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub returns: String,
    /// JSON Schema of the arguments: an object schema.
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
    /// JSON Schema of the result, when it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Example calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// How calls fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorCase>,
    /// Edge cases, limits, performance notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Sample requests, in a user's own words, that this tool serves ("will it rain in
    /// Paris tomorrow?"). Search matches them by words and by meaning, so the tool is
    /// found however a user puts it; no level shows them. At most [`MAX_UTTERANCES`],
    /// each one line of at most [`MAX_UTTERANCE_CHARS`] characters
    /// ([`ToolSpec::validate`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub utterances: Vec<String>,
    /// Category id used for browsing, e.g. `files`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Free labels used for filtering.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Opaque version label, part of the tool-set identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Orchestration metadata.
    #[serde(default, skip_serializing_if = "Metadata::is_default")]
    pub metadata: Metadata,
    /// The steps of a recipe ([`crate::recipe`]), as level 3 shows them; empty for
    /// every other tool. Taken from the recipe's `impl` block, never written to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::recipe::StepOutline>,
}

/// `{"type":"object","properties":{}}`: the schema of a tool without arguments.
pub fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

impl ToolSpec {
    /// Starts a spec with its level-1 fields; the name is validated by [`ToolSpecBuilder::build`].
    pub fn builder(name: impl Into<String>, summary: impl Into<String>) -> ToolSpecBuilder {
        ToolSpecBuilder {
            name: name.into(),
            spec: ToolSpec {
                name: ToolName::placeholder(),
                title: None,
                summary: summary.into(),
                description: String::new(),
                usage: None,
                returns: String::new(),
                parameters: empty_object_schema(),
                output_schema: None,
                examples: Vec::new(),
                errors: Vec::new(),
                notes: Vec::new(),
                utterances: Vec::new(),
                category: None,
                tags: Vec::new(),
                version: None,
                metadata: Metadata::default(),
                steps: Vec::new(),
            },
        }
    }

    /// The description, or the summary when there is none.
    pub fn description_or_summary(&self) -> &str {
        if self.description.is_empty() {
            &self.summary
        } else {
            &self.description
        }
    }

    /// The usage line: the stored one, or one generated from the schema, e.g.
    /// `read_file(file_path="…", offset=1)`.
    pub fn usage(&self) -> String {
        match &self.usage {
            Some(u) if !u.is_empty() => u.clone(),
            _ => usage::generate(&self.name, &self.parameters),
        }
    }

    /// The `properties` object of the parameter schema (empty when there is none).
    pub fn properties(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.parameters
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Map::iter)
    }

    /// Parameter names, in schema order.
    pub fn parameter_names(&self) -> Vec<String> {
        self.properties().map(|(k, _)| k.clone()).collect()
    }

    /// Whether the schema lists `name` as required.
    pub fn is_required(&self, name: &str) -> bool {
        self.parameters
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(name)))
    }

    /// Checks everything serde cannot: a non-empty summary, object schemas, and a
    /// `required` list that names existing properties.
    pub fn validate(&self) -> Result<()> {
        if self.summary.trim().is_empty() {
            return Err(Error::Field {
                tool: self.name.to_string(),
                field: "summary",
                reason: "must not be empty".to_owned(),
            });
        }
        if self.summary.contains('\n') {
            return Err(Error::Field {
                tool: self.name.to_string(),
                field: "summary",
                reason: "must be a single line (put the rest in the description)".to_owned(),
            });
        }
        check_object_schema(&self.name, "parameters", &self.parameters)?;
        self.check_utterances()?;
        if let Some(out) = &self.output_schema
            && !out.is_object()
            && !out.is_boolean()
        {
            return Err(Error::Schema {
                tool: self.name.to_string(),
                field: "output_schema",
                reason: format!("expected a JSON Schema object, found {}", kind(out)),
            });
        }
        Ok(())
    }
}

/// How many [`ToolSpec::utterances`] a tool may have.
///
/// **Rationale:** each is embedded and indexed with the tool; a handful in different words
/// is what finds it (five per tool were measured), and a cap keeps one tool from costing
/// the index more than a few dozen.
pub const MAX_UTTERANCES: usize = 32;
/// How long one of [`ToolSpec::utterances`] may be, in characters: a request, not a
/// document.
pub const MAX_UTTERANCE_CHARS: usize = 300;

impl ToolSpec {
    fn check_utterances(&self) -> Result<()> {
        let err = |reason: String| Error::Field {
            tool: self.name.to_string(),
            field: "utterances",
            reason,
        };
        if self.utterances.len() > MAX_UTTERANCES {
            return Err(err(format!(
                "must be at most {MAX_UTTERANCES}, found {}",
                self.utterances.len()
            )));
        }
        for (i, u) in self.utterances.iter().enumerate() {
            if u.trim().is_empty() {
                return Err(err(format!("must each hold a request: #{i} is blank")));
            }
            if u.contains('\n') {
                return Err(err(format!("must each be one line: #{i} is not")));
            }
            let chars = u.chars().count();
            if chars > MAX_UTTERANCE_CHARS {
                return Err(err(format!(
                    "must each be at most {MAX_UTTERANCE_CHARS} characters: #{i} has {chars}"
                )));
            }
        }
        Ok(())
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn check_object_schema(tool: &str, field: &'static str, schema: &Value) -> Result<()> {
    let err = |reason: String| Error::Schema {
        tool: tool.to_owned(),
        field,
        reason,
    };
    let obj = schema.as_object().ok_or_else(|| {
        err(format!(
            "expected a JSON Schema object, found {}",
            kind(schema)
        ))
    })?;
    match obj.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(err(format!(
                "the top-level \"type\" must be \"object\", found {other}"
            )));
        }
    }
    let props = match obj.get("properties") {
        None => None,
        Some(Value::Object(p)) => Some(p),
        Some(other) => {
            return Err(err(format!(
                "\"properties\" must be an object, found {}",
                kind(other)
            )));
        }
    };
    if let Some(req) = obj.get("required") {
        let list = req.as_array().ok_or_else(|| {
            err(format!(
                "\"required\" must be an array of names, found {}",
                kind(req)
            ))
        })?;
        for item in list {
            let name = item.as_str().ok_or_else(|| {
                err(format!(
                    "\"required\" must list names (strings), found {item}"
                ))
            })?;
            if !props.is_some_and(|p| p.contains_key(name)) {
                return Err(err(format!(
                    "\"required\" names '{name}', which is not in \"properties\""
                )));
            }
        }
    }
    Ok(())
}

/// Builds a [`ToolSpec`]; see [`ToolSpec::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolSpecBuilder {
    name: String,
    spec: ToolSpec,
}

impl ToolSpecBuilder {
    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.spec.title = Some(title.into());
        self
    }
    /// Sets the level-2 description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.spec.description = description.into();
        self
    }
    /// Sets the usage line (otherwise generated).
    pub fn usage(mut self, usage: impl Into<String>) -> Self {
        self.spec.usage = Some(usage.into());
        self
    }
    /// Says what a call returns.
    pub fn returns(mut self, returns: impl Into<String>) -> Self {
        self.spec.returns = returns.into();
        self
    }
    /// Sets the parameter schema (a JSON Schema object).
    pub fn parameters(mut self, schema: Value) -> Self {
        self.spec.parameters = schema;
        self
    }
    /// Sets the output schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.spec.output_schema = Some(schema);
        self
    }
    /// Adds an example call.
    pub fn example(mut self, description: impl Into<String>, input: Value) -> Self {
        self.spec.examples.push(Example {
            description: description.into(),
            input,
        });
        self
    }
    /// Adds a failure mode.
    pub fn error(mut self, kind: impl Into<String>, when: impl Into<String>) -> Self {
        self.spec.errors.push(ErrorCase {
            kind: kind.into(),
            when: when.into(),
        });
        self
    }
    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.spec.notes.push(note.into());
        self
    }
    /// Sets the steps level 3 shows of a recipe ([`ToolSpec::steps`]).
    pub fn steps(mut self, steps: Vec<crate::recipe::StepOutline>) -> Self {
        self.spec.steps = steps;
        self
    }
    /// Adds a sample request in a user's words ([`ToolSpec::utterances`]).
    pub fn utterance(mut self, utterance: impl Into<String>) -> Self {
        self.spec.utterances.push(utterance.into());
        self
    }
    /// Sets the category.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.spec.category = Some(category.into());
        self
    }
    /// Adds a tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.spec.tags.push(tag.into());
        self
    }
    /// Sets the version label.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.spec.version = Some(version.into());
        self
    }
    /// Sets all metadata at once.
    pub fn metadata(mut self, metadata: Metadata) -> Self {
        self.spec.metadata = metadata;
        self
    }
    /// Changes the metadata in place.
    pub fn with_metadata(mut self, f: impl FnOnce(&mut Metadata)) -> Self {
        f(&mut self.spec.metadata);
        self
    }
    /// Validates the name and the rest (see [`ToolSpec::validate`]) and returns the spec.
    pub fn build(self) -> Result<ToolSpec> {
        let mut spec = self.spec;
        spec.name = ToolName::new(self.name)?;
        spec.validate()?;
        Ok(spec)
    }
}
