//! [`Activated`]: the tools one MCP session has activated, in the order it lists them.

/// The tools one MCP session has activated: listed after `discover_tools` and
/// `call_tool`, in the order they were activated.
///
/// **Invariant:** names are only ever appended, or removed by eviction; the relative order
/// of the rest never changes, so the prefix of a client's tools array (and its prompt
/// cache) survives an activation. At most `cap` names are kept; beyond that the least
/// recently used (activated again or called) is evicted first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Activated {
    entries: Vec<Entry>,
    cap: usize,
    clock: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    last_used: u64,
}

impl Activated {
    /// An empty list that keeps at most `cap` tools (0: activation is off).
    pub(crate) fn new(cap: usize) -> Self {
        Activated {
            entries: Vec::new(),
            cap,
            clock: 0,
        }
    }

    /// The activated names, in list order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.name.clone()).collect()
    }

    /// Whether `name` is activated.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.name == name)
    }

    /// Records a use of `name` (a call), for least-recently-used eviction.
    pub(crate) fn touch(&mut self, name: &str) {
        self.clock += 1;
        let now = self.clock;
        if let Some(e) = self.entries.iter_mut().find(|e| e.name == name) {
            e.last_used = now;
        }
    }

    /// Activates `names` in order: a present name counts as used, a new one is appended
    /// (evicting the least recently used when the list is full). Returns whether the
    /// list changed, that is whether a name was added.
    pub(crate) fn activate<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) -> bool {
        if self.cap == 0 {
            return false;
        }
        let mut changed = false;
        for name in names {
            if self.contains(name) {
                self.touch(name);
                continue;
            }
            if self.entries.len() >= self.cap
                && let Some(pos) = self
                    .entries
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, e)| e.last_used)
                    .map(|(i, _)| i)
            {
                self.entries.remove(pos);
            }
            self.clock += 1;
            self.entries.push(Entry {
                name: name.to_owned(),
                last_used: self.clock,
            });
            changed = true;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activation_appends_in_order_and_reports_changes() {
        let mut a = Activated::new(4);
        assert!(a.activate(["b", "a"]));
        assert!(!a.activate(["a"]), "a present name is no change");
        assert!(a.activate(["a", "c"]));
        assert_eq!(a.names(), ["b", "a", "c"]);
    }

    #[test]
    fn the_cap_evicts_the_least_recently_used() {
        let mut a = Activated::new(2);
        a.activate(["one"]);
        a.activate(["two"]);
        a.touch("one");
        assert!(a.activate(["three"]));
        assert_eq!(a.names(), ["one", "three"]);
        // Activating a present tool again also counts as a use.
        a.activate(["one"]);
        a.activate(["four"]);
        assert_eq!(a.names(), ["one", "four"]);
    }

    #[test]
    fn a_cap_of_zero_turns_activation_off() {
        let mut a = Activated::new(0);
        assert!(!a.activate(["one"]));
        assert!(a.names().is_empty());
    }
}
