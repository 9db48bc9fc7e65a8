//! The tools array of one run: the tools offered first, then activated ones, appended.

use std::collections::HashMap;

use serde_json::Value;
use toolscout_discover::{Activated, ActivationList, Standing};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::openai::{MAX_OPENAI_NAME_LEN, NameMap, to_openai_named};

/// What the run keeps with each tool of its array.
struct Entry {
    spec: ToolSpec,
    alias: String,
}

impl Entry {
    /// Its OpenAI function: whole, or compactly (its name, summary and parameters'
    /// names and types, see [`compact_openai`]) while it is only offered.
    fn to_openai(&self, standing: Standing) -> Value {
        if standing == Standing::Offered {
            compact_openai(&self.spec, &self.alias)
        } else {
            let mut function = to_openai_named(&self.spec, &self.alias, false);
            bound_descriptions(&mut function["function"]);
            function
        }
    }
}

/// The most characters of a tool's description the tools array carries.
const DESCRIPTION_CHARS: usize = 600;

/// The most characters of a parameter's description the tools array carries.
const PARAMETER_CHARS: usize = 300;

/// Cuts a function's description to [`DESCRIPTION_CHARS`] and each of its parameters'
/// to [`PARAMETER_CHARS`], at the end of a sentence (or a word) and with "…"; the tool
/// checks calls against its whole schema, and `discover_tools` shows its whole text.
///
/// **Rationale:** some MCP servers' tools describe themselves in thousands of
/// characters (BioMCP's average 1,757 with their schemas): six of them made a first
/// request of 7,500 tokens, over 12 minutes of prompt processing for a small local
/// model, where their first sentences say what each does. One BFCL tool of 1,974 and
/// no MetaTool tool is that long.
fn bound_descriptions(function: &mut Value) {
    if let Some(Value::String(d)) = function.get_mut("description") {
        cut(d, DESCRIPTION_CHARS);
    }
    if let Some(Value::Object(props)) = function.pointer_mut("/parameters/properties") {
        for prop in props.values_mut() {
            if let Some(Value::String(d)) = prop.get_mut("description") {
                cut(d, PARAMETER_CHARS);
            }
        }
    }
}

/// `text` cut to at most `max` characters: after the last sentence that ends in the
/// second half of them, else after the last whole word, then "…".
fn cut(text: &mut String, max: usize) {
    if text.chars().count() <= max {
        return;
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    let sentence = head
        .rmatch_indices(['.', '!', '?', '\n'])
        .map(|(i, _)| i + 1)
        .find(|&i| i >= head.len() / 2);
    let end = sentence
        .or_else(|| head.rfind(char::is_whitespace))
        .unwrap_or(head.len());
    *text = format!("{}…", head[..end].trim_end());
}

/// What [`ToolSet::activate`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Activation {
    /// The tool was in the array already (its use was recorded).
    Present,
    /// The tool was appended (or, offered compactly until now, is offered whole where
    /// it stands).
    Added {
        alias: String,
        evicted: Option<String>,
    },
}

/// The tools array, in the order the model sees it: an [`ActivationList`] (the tools
/// offered first pinned, a server's tools offered compactly, activated ones appended)
/// with the OpenAI alias of each.
///
/// **Invariant:** the list's (entries only ever appended, or removed by eviction; the
/// relative order of the rest never changes), and a tool's OpenAI alias, once given, is
/// never given to another tool during the run (old calls in the history stay
/// resolvable).
pub(crate) struct ToolSet {
    list: ActivationList<Entry>,
    /// Alias → tool name, for every alias ever given in this run.
    aliases: HashMap<String, String>,
}

impl ToolSet {
    pub(crate) fn new(initial: Vec<ToolSpec>, cap: usize) -> Self {
        let map = NameMap::new(initial.iter().map(|s| s.name.as_str()));
        let mut set = ToolSet {
            list: ActivationList::new(cap.max(1)),
            aliases: HashMap::new(),
        };
        for spec in initial {
            if set.list.contains(&spec.name) {
                continue;
            }
            let alias = map
                .alias(&spec.name)
                .map_or_else(|| spec.name.to_string(), str::to_owned);
            set.aliases.insert(alias.clone(), spec.name.to_string());
            let name = spec.name.to_string();
            set.list.pin(&name, Entry { spec, alias });
        }
        set
    }

    /// The OpenAI tools array.
    pub(crate) fn to_openai(&self) -> Vec<Value> {
        self.list.iter().map(|(_, e, st)| e.to_openai(st)).collect()
    }

    /// The tools array without the tools named in `hidden`.
    pub(crate) fn to_openai_without(&self, hidden: &[String]) -> Vec<Value> {
        self.list
            .iter()
            .filter(|(name, _, _)| !hidden.iter().any(|h| h == name))
            .map(|(_, e, st)| e.to_openai(st))
            .collect()
    }

    /// The array holding only the tools named in `shown`, in array order.
    pub(crate) fn to_openai_only(&self, shown: &[String]) -> Vec<Value> {
        self.list
            .iter()
            .filter(|(name, _, _)| shown.iter().any(|h| h == name))
            .map(|(_, e, st)| e.to_openai(st))
            .collect()
    }

    /// Tool names in array order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.list.names()
    }

    /// The tool name behind an alias given in this run.
    pub(crate) fn original(&self, alias: &str) -> Option<&str> {
        self.aliases.get(alias).map(String::as_str)
    }

    /// The name the model sees for `name`, a tool currently in the array: its alias.
    pub(crate) fn alias(&self, name: &str) -> Option<&str> {
        self.list.get(name).map(|e| e.alias.as_str())
    }

    /// A tool currently in the array.
    pub(crate) fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.list.get(name).map(|e| &e.spec)
    }

    /// Records a use of `name`, for least-recently-used eviction.
    pub(crate) fn touch(&mut self, name: &str) {
        self.list.touch(name);
    }

    /// Whether `name` is in the array compactly (see [`ToolSet::offer_compact`]).
    pub(crate) fn is_compact(&self, name: &str) -> bool {
        self.list.standing(name) == Some(Standing::Offered)
    }

    /// Appends `spec` compactly unless it is present: its name, summary and parameters'
    /// names and types (see [`compact_openai`]), so that a server's tools can be offered
    /// together for the tokens of a few whole schemas. The model may call it; the call
    /// is checked against the full schema, and [`ToolSet::activate`] (which the loop
    /// makes on a call) offers it whole from then on. Whether it was appended.
    pub(crate) fn offer_compact(&mut self, spec: ToolSpec) -> Option<String> {
        if self.list.contains(&spec.name) {
            return None;
        }
        let name = spec.name.to_string();
        let alias = self.new_alias(&name);
        self.aliases.insert(alias.clone(), name.clone());
        self.list.offer(
            &name,
            Entry {
                spec,
                alias: alias.clone(),
            },
        );
        Some(alias)
    }

    /// Appends `spec` unless it is present, evicting the least recently used
    /// activated tool when the cap is reached; a tool offered compactly is offered whole
    /// from now on, where it stands.
    pub(crate) fn activate(&mut self, spec: ToolSpec) -> Activation {
        let name = spec.name.to_string();
        // Made before the list changes, recorded only once the tool is in it (the cap
        // is at least 1, so an absent tool always is).
        let alias = self.new_alias(&name);
        match self.list.activate(&name, || Entry {
            spec,
            alias: alias.clone(),
        }) {
            Activated::Added { evicted } => {
                let alias = self.alias(&name).unwrap_or(&alias).to_owned();
                self.aliases.insert(alias.clone(), name);
                Activation::Added {
                    alias,
                    evicted: evicted.map(|(n, _)| n),
                }
            }
            _ => Activation::Present,
        }
    }

    /// An alias for `name` that no other tool of this run has had: the one
    /// [`NameMap`] gives it, or that with a numeric suffix.
    fn new_alias(&self, name: &str) -> String {
        let base = NameMap::new([name])
            .alias(name)
            .map_or_else(|| name.to_owned(), str::to_owned);
        let free = |a: &str| self.aliases.get(a).is_none_or(|n| n == name);
        if free(&base) {
            return base;
        }
        (2u32..)
            .map(|i| {
                let suffix = format!("_{i}");
                let head: String = base
                    .chars()
                    .take(MAX_OPENAI_NAME_LEN - suffix.len())
                    .collect();
                format!("{head}{suffix}")
            })
            .find(|a| free(a))
            .unwrap_or(base)
    }
}

/// The OpenAI function of `spec` offered compactly: its summary for a description, and
/// its parameters' names and types (an `enum` of up to eight values kept; nested schemas
/// only by their type) with what is required; no descriptions, examples or bounds.
///
/// **Rationale:** a server's tools offered together in full cost what the model cannot
/// afford (some MCP servers' descriptions run to thousands of characters); by name and
/// summary a model can still pick one, and the parameters' names let it make a call that
/// usually checks out against the full schema, which it then sees.
pub(crate) fn compact_openai(spec: &ToolSpec, alias: &str) -> Value {
    const ANY: [&str; 7] = [
        "string", "number", "integer", "boolean", "object", "array", "null",
    ];
    let mut properties = serde_json::Map::new();
    if let Some(Value::Object(props)) = spec.parameters.get("properties") {
        for (name, schema) in props {
            let mut kept = serde_json::Map::new();
            match schema.get("type") {
                Some(t @ (Value::String(_) | Value::Array(_))) => {
                    kept.insert("type".to_owned(), t.clone());
                }
                _ => {
                    kept.insert("type".to_owned(), serde_json::json!(ANY));
                }
            }
            if let Some(Value::Array(values)) = schema.get("enum")
                && values.len() <= 8
            {
                kept.insert("enum".to_owned(), Value::Array(values.clone()));
            }
            properties.insert(name.clone(), Value::Object(kept));
        }
    }
    let mut parameters = serde_json::json!({"type": "object", "properties": properties});
    if let Some(required) = spec.parameters.get("required") {
        parameters["required"] = required.clone();
    }
    serde_json::json!({
        "type": "function",
        "function": {
            "name": alias,
            "description": spec.summary,
            "parameters": parameters,
            "strict": false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec::builder(name, "A tool").build().unwrap()
    }

    #[test]
    fn activation_appends_and_evicts_least_recently_used() {
        let mut set = ToolSet::new(vec![spec("discover_search"), spec("call_tool")], 2);
        assert!(
            matches!(set.activate(spec("a.one")), Activation::Added { ref alias, evicted: None } if alias == "a_one")
        );
        set.activate(spec("b"));
        set.touch("a.one");
        let Activation::Added { evicted, .. } = set.activate(spec("c")) else {
            panic!("expected an addition")
        };
        assert_eq!(evicted.as_deref(), Some("b"));
        assert_eq!(set.names(), ["discover_search", "call_tool", "a.one", "c"]);
        assert_eq!(set.activate(spec("c")), Activation::Present);
    }

    #[test]
    fn a_compact_tool_is_outside_the_cap_and_offered_whole_where_it_stands_once_activated() {
        let with_params = |name: &str| {
            ToolSpec::builder(name, "A tool")
                .description("A long description")
                .parameters(serde_json::json!({"type": "object", "properties": {
                    "q": {"type": "string", "description": "What to look for", "minLength": 2},
                    "n": {"description": "How many"}},
                    "required": ["q"]}))
                .build()
                .unwrap()
        };
        let mut set = ToolSet::new(vec![spec("discover_tools")], 1);
        set.activate(spec("a"));
        assert_eq!(set.offer_compact(with_params("b")).as_deref(), Some("b"));
        assert_eq!(set.offer_compact(with_params("a")), None, "present already");
        // Compact: not counted against the cap of 1, so `a` stays.
        assert!(set.is_compact("b"));
        assert_eq!(set.names(), ["discover_tools", "a", "b"]);
        let compact = &set.to_openai()[2]["function"];
        assert_eq!(compact["description"], "A tool");
        assert_eq!(
            compact["parameters"],
            serde_json::json!({"type": "object", "properties": {
                "q": {"type": "string"},
                "n": {"type": ["string", "number", "integer", "boolean", "object", "array", "null"]}},
                "required": ["q"]})
        );
        // Activated: whole, where it stood, and now it counts (`a` is evicted).
        assert_eq!(
            set.activate(with_params("b")),
            Activation::Added {
                alias: "b".to_owned(),
                evicted: Some("a".to_owned())
            }
        );
        assert!(!set.is_compact("b"));
        assert_eq!(set.names(), ["discover_tools", "b"]);
        assert_eq!(
            set.to_openai()[1]["function"]["description"],
            "A long description"
        );
    }

    #[test]
    fn long_descriptions_are_cut_at_a_sentence_in_the_array() {
        let long = format!(
            "Finds papers. {}",
            "It reads many sources and more. ".repeat(30)
        );
        let papers = ToolSpec::builder("papers", "Finds papers")
            .description(long.clone())
            .parameters(serde_json::json!({"type": "object", "properties": {
                "q": {"type": "string", "description": "word ".repeat(100)},
                "n": {"type": "integer", "description": "How many"}}}))
            .build()
            .unwrap();
        let mut set = ToolSet::new(vec![papers], 4);
        set.activate(spec("short"));
        let array = set.to_openai();
        let function = &array[0]["function"];
        let description = function["description"].as_str().unwrap();
        assert!(
            description.chars().count() <= DESCRIPTION_CHARS,
            "{description}"
        );
        assert!(description.ends_with("more.…"), "{description}");
        let q = function["parameters"]["properties"]["q"]["description"]
            .as_str()
            .unwrap();
        assert!(
            q.chars().count() <= PARAMETER_CHARS && q.ends_with("word…"),
            "{q}"
        );
        assert_eq!(
            function["parameters"]["properties"]["n"]["description"],
            "How many"
        );
        // A short one is as it was; the spec itself keeps every word.
        assert_eq!(array[1]["function"]["description"], "A tool");
        assert_eq!(set.get("papers").unwrap().description, long);
    }

    #[test]
    fn aliases_are_never_reused_for_another_tool() {
        let mut set = ToolSet::new(vec![spec("call_tool")], 4);
        set.activate(spec("math.factorial"));
        let Activation::Added { alias, .. } = set.activate(spec("math_factorial")) else {
            panic!("expected an addition")
        };
        assert_eq!(alias, "math_factorial_2");
        assert_eq!(set.original("math_factorial"), Some("math.factorial"));
        assert_eq!(set.original("math_factorial_2"), Some("math_factorial"));
    }
}
