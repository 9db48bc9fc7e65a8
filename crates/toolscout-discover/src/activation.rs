//! [`ActivationList`]: the tools a client has been given, in the order it lists them —
//! one MCP session's activated tools (the server) and one agent run's tools array (the
//! agent loop) are both one.

/// How many active tools a client keeps by default (an MCP session's `tools/list`, an
/// agent run's tools array beyond its first tools).
pub const DEFAULT_ACTIVATION_CAP: usize = 16;

/// How many of the best hits of a search are activated by default (an MCP session's
/// `discover_tools`, the agent's `discover_*` searches).
pub const DEFAULT_ACTIVATE_HITS: usize = 3;

/// How a tool stands in an [`ActivationList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Standing {
    /// Given from the start (the discover tools, a run's first tools): never evicted,
    /// not counted against the cap.
    Pinned,
    /// Offered ahead of need (one of a server's tools, shown compactly): not counted
    /// against the cap, never evicted; [`ActivationList::activate`] makes it
    /// [`Active`](Standing::Active) where it stands.
    Offered,
    /// Activated (found, described or called): counted against the cap, the least
    /// recently used evicted first.
    Active,
}

/// What [`ActivationList::activate`] did.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Activated<T> {
    /// The name was active or pinned already (its use was recorded), or activation is
    /// off (a cap of 0).
    Present,
    /// The name was appended, or, offered until now, made active where it stands;
    /// `evicted` is the tool that left to make room, if one did.
    Added {
        /// The least recently used active tool, removed.
        evicted: Option<(String, T)>,
    },
}

#[derive(Debug, Clone)]
struct Slot<T> {
    name: String,
    value: T,
    standing: Standing,
    last_used: u64,
}

/// The tools given to one client (an MCP session, an agent run), each a name and what
/// the holder keeps with it (`T`: nothing, or its spec and alias), in list order.
///
/// **Invariant:** entries are only ever appended, or removed by eviction; the relative
/// order of the rest never changes, so the prefix of a client's tools array (and its
/// prompt cache) survives an activation. At most `cap` [`Standing::Active`] tools are
/// kept; beyond that the least recently used (activated again, or
/// [`touched`](Self::touch) by a call) is evicted first. A cap of 0 turns activation
/// off.
///
/// ```
/// use toolscout_discover::{ActivationList, Activated};
///
/// let mut list: ActivationList<()> = ActivationList::new(2);
/// list.pin("discover_tools", ());
/// list.activate("get_weather", || ());
/// list.activate("get_time", || ());
/// list.touch("get_weather");
/// // Full: the least recently used active tool leaves; the pinned one never does.
/// let done = list.activate("send_sms", || ());
/// assert_eq!(done, Activated::Added { evicted: Some(("get_time".to_owned(), ())) });
/// assert_eq!(list.names(), ["discover_tools", "get_weather", "send_sms"]);
/// ```
#[derive(Debug, Clone)]
pub struct ActivationList<T> {
    slots: Vec<Slot<T>>,
    cap: usize,
    clock: u64,
}

impl<T> ActivationList<T> {
    /// An empty list that keeps at most `cap` active tools (0: activation is off).
    pub fn new(cap: usize) -> Self {
        ActivationList {
            slots: Vec::new(),
            cap,
            clock: 0,
        }
    }

    /// The most active tools it keeps.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// The names, in list order.
    pub fn names(&self) -> Vec<String> {
        self.slots.iter().map(|s| s.name.clone()).collect()
    }

    /// Every entry in list order: name, what is kept with it, and how it stands.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T, Standing)> {
        self.slots
            .iter()
            .map(|s| (s.name.as_str(), &s.value, s.standing))
    }

    /// Whether `name` is in the list (however it stands).
    pub fn contains(&self, name: &str) -> bool {
        self.slot(name).is_some()
    }

    /// What is kept with `name`, if it is in the list.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.slot(name).map(|s| &s.value)
    }

    /// How `name` stands, if it is in the list.
    pub fn standing(&self, name: &str) -> Option<Standing> {
        self.slot(name).map(|s| s.standing)
    }

    /// Records a use of `name` (a call), for least-recently-used eviction.
    pub fn touch(&mut self, name: &str) {
        self.clock += 1;
        let now = self.clock;
        if let Some(s) = self.slots.iter_mut().find(|s| s.name == name) {
            s.last_used = now;
        }
    }

    /// Appends `name` as [`Standing::Pinned`] unless it is present; whether it was
    /// appended.
    pub fn pin(&mut self, name: &str, value: T) -> bool {
        self.push(name, value, Standing::Pinned)
    }

    /// Appends `name` as [`Standing::Offered`] unless it is present; whether it was
    /// appended.
    pub fn offer(&mut self, name: &str, value: T) -> bool {
        self.push(name, value, Standing::Offered)
    }

    /// Activates `name`: present and active or pinned, it counts as used; offered, it
    /// becomes active where it stands; absent, it is appended with `value()`, evicting
    /// the least recently used active tool when the cap is reached. Nothing happens with
    /// a cap of 0.
    pub fn activate(&mut self, name: &str, value: impl FnOnce() -> T) -> Activated<T> {
        if self.cap == 0 {
            return Activated::Present;
        }
        self.clock += 1;
        let now = self.clock;
        if let Some(s) = self.slots.iter_mut().find(|s| s.name == name) {
            s.last_used = now;
            if s.standing != Standing::Offered {
                return Activated::Present;
            }
            s.standing = Standing::Active;
            // It counts against the cap now; being the latest used, it stays.
            let evicted = self.evict_beyond(self.cap);
            return Activated::Added { evicted };
        }
        let evicted = self.evict_beyond(self.cap - 1);
        self.slots.push(Slot {
            name: name.to_owned(),
            value: value(),
            standing: Standing::Active,
            last_used: now,
        });
        Activated::Added { evicted }
    }

    fn slot(&self, name: &str) -> Option<&Slot<T>> {
        self.slots.iter().find(|s| s.name == name)
    }

    fn push(&mut self, name: &str, value: T, standing: Standing) -> bool {
        if self.contains(name) {
            return false;
        }
        self.slots.push(Slot {
            name: name.to_owned(),
            value,
            standing,
            last_used: 0,
        });
        true
    }

    /// Evicts the least recently used active tool when more than `keep` are.
    fn evict_beyond(&mut self, keep: usize) -> Option<(String, T)> {
        let active = || {
            self.slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.standing == Standing::Active)
        };
        if active().count() <= keep {
            return None;
        }
        let pos = active().min_by_key(|(_, s)| s.last_used).map(|(i, _)| i)?;
        let slot = self.slots.remove(pos);
        Some((slot.name, slot.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activate_all(list: &mut ActivationList<()>, names: &[&str]) -> bool {
        let mut changed = false;
        for n in names {
            changed |= matches!(list.activate(n, || ()), Activated::Added { .. });
        }
        changed
    }

    #[test]
    fn activation_appends_in_order_and_reports_changes() {
        let mut a = ActivationList::new(4);
        assert!(activate_all(&mut a, &["b", "a"]));
        assert!(!activate_all(&mut a, &["a"]), "a present name is no change");
        assert!(activate_all(&mut a, &["a", "c"]));
        assert_eq!(a.names(), ["b", "a", "c"]);
    }

    #[test]
    fn the_cap_evicts_the_least_recently_used_active_tool() {
        let mut a = ActivationList::new(2);
        a.pin("discover", ());
        activate_all(&mut a, &["one"]);
        activate_all(&mut a, &["two"]);
        a.touch("one");
        assert!(activate_all(&mut a, &["three"]));
        assert_eq!(a.names(), ["discover", "one", "three"]);
        // Activating a present tool again also counts as a use.
        activate_all(&mut a, &["one"]);
        activate_all(&mut a, &["four"]);
        assert_eq!(a.names(), ["discover", "one", "four"]);
    }

    #[test]
    fn an_offered_tool_is_outside_the_cap_until_it_is_activated_where_it_stands() {
        let mut a = ActivationList::new(1);
        activate_all(&mut a, &["one"]);
        assert!(a.offer("sibling", ()));
        assert!(!a.offer("sibling", ()), "offered once");
        assert_eq!(a.names(), ["one", "sibling"]);
        assert_eq!(a.standing("sibling"), Some(Standing::Offered));
        assert_eq!(
            a.activate("sibling", || ()),
            Activated::Added {
                evicted: Some(("one".to_owned(), ()))
            }
        );
        assert_eq!(a.names(), ["sibling"]);
        assert_eq!(a.standing("sibling"), Some(Standing::Active));
    }

    #[test]
    fn a_cap_of_zero_turns_activation_off() {
        let mut a = ActivationList::new(0);
        assert!(!activate_all(&mut a, &["one"]));
        assert!(a.names().is_empty());
    }
}
