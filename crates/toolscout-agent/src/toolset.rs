//! The tools array of one run: the tools offered first, then activated ones, appended.

use std::collections::HashMap;

use serde_json::Value;
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::openai::{MAX_OPENAI_NAME_LEN, NameMap, to_openai_named};

struct Entry {
    spec: ToolSpec,
    alias: String,
    /// Offered from the start: never evicted.
    pinned: bool,
    last_used: u64,
}

/// What [`ToolSet::activate`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Activation {
    /// The tool was in the array already (its use was recorded).
    Present,
    /// The tool was appended.
    Added {
        alias: String,
        evicted: Option<String>,
    },
}

/// The tools array, in the order the model sees it.
///
/// **Invariant:** entries only ever get appended, or removed by eviction; the relative
/// order of the rest never changes, and a tool's OpenAI alias, once given, is never
/// given to another tool during the run (old calls in the history stay resolvable).
pub(crate) struct ToolSet {
    entries: Vec<Entry>,
    /// Alias → tool name, for every alias ever given in this run.
    aliases: HashMap<String, String>,
    cap: usize,
    clock: u64,
}

impl ToolSet {
    pub(crate) fn new(initial: Vec<ToolSpec>, cap: usize) -> Self {
        let map = NameMap::new(initial.iter().map(|s| s.name.as_str()));
        let mut set = ToolSet {
            entries: Vec::new(),
            aliases: HashMap::new(),
            cap,
            clock: 0,
        };
        for spec in initial {
            if set.get(&spec.name).is_some() {
                continue;
            }
            let alias = map
                .alias(&spec.name)
                .map_or_else(|| spec.name.to_string(), str::to_owned);
            set.aliases.insert(alias.clone(), spec.name.to_string());
            set.entries.push(Entry {
                spec,
                alias,
                pinned: true,
                last_used: 0,
            });
        }
        set
    }

    /// The OpenAI tools array.
    pub(crate) fn to_openai(&self) -> Vec<Value> {
        self.entries
            .iter()
            .map(|e| to_openai_named(&e.spec, &e.alias, false))
            .collect()
    }

    /// The tools array without the tools named in `hidden`.
    pub(crate) fn to_openai_without(&self, hidden: &[String]) -> Vec<Value> {
        self.entries
            .iter()
            .filter(|e| !hidden.iter().any(|h| h == e.spec.name.as_str()))
            .map(|e| to_openai_named(&e.spec, &e.alias, false))
            .collect()
    }

    /// The array holding only the tools named in `shown`, in array order.
    pub(crate) fn to_openai_only(&self, shown: &[String]) -> Vec<Value> {
        self.entries
            .iter()
            .filter(|e| shown.iter().any(|h| h == e.spec.name.as_str()))
            .map(|e| to_openai_named(&e.spec, &e.alias, false))
            .collect()
    }

    /// Tool names in array order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| e.spec.name.to_string())
            .collect()
    }

    /// The tool name behind an alias given in this run.
    pub(crate) fn original(&self, alias: &str) -> Option<&str> {
        self.aliases.get(alias).map(String::as_str)
    }

    /// The name the model sees for `name`, a tool currently in the array: its alias.
    pub(crate) fn alias(&self, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.spec.name.as_str() == name)
            .map(|e| e.alias.as_str())
    }

    /// A tool currently in the array.
    pub(crate) fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.entries
            .iter()
            .find(|e| e.spec.name.as_str() == name)
            .map(|e| &e.spec)
    }

    /// Records a use of `name`, for least-recently-used eviction.
    pub(crate) fn touch(&mut self, name: &str) {
        self.clock += 1;
        let now = self.clock;
        if let Some(e) = self
            .entries
            .iter_mut()
            .find(|e| e.spec.name.as_str() == name)
        {
            e.last_used = now;
        }
    }

    /// Appends `spec` unless it is present, evicting the least recently used
    /// activated tool when the cap is reached.
    pub(crate) fn activate(&mut self, spec: ToolSpec) -> Activation {
        if self.get(&spec.name).is_some() {
            self.touch(&spec.name);
            return Activation::Present;
        }
        let mut evicted = None;
        let active = self.entries.iter().filter(|e| !e.pinned).count();
        if active >= self.cap.max(1)
            && let Some(pos) = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| !e.pinned)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i)
        {
            evicted = Some(self.entries.remove(pos).spec.name.to_string());
        }
        let alias = self.new_alias(&spec.name);
        self.aliases.insert(alias.clone(), spec.name.to_string());
        self.clock += 1;
        self.entries.push(Entry {
            spec,
            alias: alias.clone(),
            pinned: false,
            last_used: self.clock,
        });
        Activation::Added { alias, evicted }
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
