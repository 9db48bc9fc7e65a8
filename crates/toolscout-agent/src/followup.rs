//! The needs of a request of several that a run follows up (see
//! [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)): which are left,
//! which was just put to the model, which tools have run.

use crate::Message;

/// One need of a request of several, whose own search found tools: the tools found for it
/// (the first activated with the request's, the others when they are put to the model),
/// so that the run can tell whether a call has served it.
#[derive(Debug, Clone)]
pub(crate) struct Need {
    /// The need, as the request states it.
    pub(crate) text: String,
    /// Its best tools.
    pub(crate) tools: Vec<String>,
    /// It was asked for once and the call refused: these are its other tools.
    pub(crate) again: bool,
    /// How sure its own search was of its best tool (see [`Retrieval::confidence`](crate::Retrieval::confidence)).
    pub(crate) confidence: Option<f32>,
}

/// The needs of a request of several that the run follows up (see
/// [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)).
#[derive(Debug, Default)]
pub(crate) struct Needs {
    /// The needs no call has served yet, in the request's order.
    pub(crate) pending: Vec<Need>,
    /// The need last put to the model, until a call serves it.
    pub(crate) asked: Option<Need>,
    /// Follow-ups made, at most [`MAX_FOLLOW_UPS`].
    pub(crate) made: u32,
    /// The tools that have run successfully.
    pub(crate) ran: Vec<String>,
    /// Where in the conversation each need was put to the model, in order.
    pub(crate) said: Vec<usize>,
}

impl Needs {
    /// A successful call of `tool` serves one need: the one just asked for when `tool` is
    /// one of its tools, else the pending need `tool` ranks highest for (the first on a
    /// tie). One call never serves two needs: "the weather in Oslo, and also in Rome"
    /// needs two calls of one tool, and a tool found second for the next need ("once I
    /// have the cooking time, the food waste figures") was found for its words.
    pub(crate) fn served(&mut self, tool: &str) {
        if !self.ran.iter().any(|t| t == tool) {
            self.ran.push(tool.to_owned());
        }
        if self
            .asked
            .as_ref()
            .is_some_and(|need| need.tools.iter().any(|t| t == tool))
        {
            self.asked = None;
            return;
        }
        if let Some(i) = self.ranked_highest(tool) {
            self.pending.remove(i);
        }
    }

    /// Whether the run followed needs up and every one has been served (or dropped,
    /// its tools having run for another): none is pending, none is waiting for its call.
    pub(crate) fn all_served(&self) -> bool {
        self.made > 0 && self.pending.is_empty() && self.asked.is_none()
    }

    /// Whether an answer given before any call succeeded leaves needs to put to the
    /// model one at a time: the run follows needs up already (one was put, and was
    /// declined or its call refused), or the request holds two or more needs whose own
    /// searches found tools, and the model declined them all at once.
    ///
    /// **Rationale:** shown the tools of three or four needs at once, a small model
    /// sometimes answers the first request with a made-up account of the work ("I
    /// have retrieved … and calculated …") and no call; put one need at a time, with its
    /// tool, it calls it (in 50 Seal-Tools multi-tool runs, 3 ended so with no tool
    /// called). A request of one need still ends on
    /// its answer: that is how a request no tool serves is declined; and so does a
    /// request the model was never required to call a tool for (its text answer is how
    /// it answers then).
    pub(crate) fn declined_unserved(&self) -> bool {
        self.made > 0 || self.asked.is_some() || self.pending.len() >= 2
    }

    /// The messages a request sends: the conversation without the needs put to the model
    /// before the last one. Those have been answered (served, declined or refused) and
    /// the calls that followed each say what was done; the transcript keeps them.
    ///
    /// **Rationale:** each was repeated in every later request of the run, 60-odd
    /// prompt tokens a request, on the runs that already make the most requests.
    pub(crate) fn sent<'m>(&self, messages: &'m [Message]) -> Vec<&'m Message> {
        let stale = &self.said[..self.said.len().saturating_sub(1)];
        messages
            .iter()
            .enumerate()
            .filter(|(i, _)| !stale.contains(i))
            .map(|(_, m)| m)
            .collect()
    }

    /// The pending need `tool` ranks highest for, the first on a tie.
    fn ranked_highest(&self, tool: &str) -> Option<usize> {
        self.pending
            .iter()
            .enumerate()
            .filter_map(|(i, need)| need.tools.iter().position(|t| t == tool).map(|r| (r, i)))
            .min()
            .map(|(_, i)| i)
    }

    /// A call of `tool` was refused for arguments the request does not give: it most
    /// likely was the wrong tool for the need it was made for — the need just asked for
    /// when `tool` is one of its tools, else (a call of the first request, which shows
    /// every need's tools) the pending need `tool` ranks highest for. That need goes
    /// back first in line with its other tools, and `true` says to ask for it again at
    /// once (a need with no other tool is not).
    pub(crate) fn refused(&mut self, tool: &str) -> bool {
        let mut need = match self.asked.take() {
            Some(need) if need.tools.iter().any(|t| t == tool) => need,
            Some(need) => {
                self.asked = Some(need);
                return false;
            }
            None => match self.ranked_highest(tool) {
                Some(i) => self.pending.remove(i),
                None => return false,
            },
        };
        need.tools.retain(|t| t != tool);
        if need.tools.is_empty() {
            return false;
        }
        need.again = true;
        self.pending.insert(0, need);
        true
    }

    /// The next need to put to the model, if the run may still follow one up
    /// ([`MAX_FOLLOW_UPS`]; a need asked again with its other tools does not count),
    /// with its best tool that no call has run yet: a tool that ran for another need is
    /// not offered again ("create the asset. The asset is a raw material named
    /// Chainlink" is one asset, not two), and a need left without tools is dropped. A
    /// need whose best tool has run and whose own search was unsure of it (below
    /// [`NEED_SURE`](crate::retrieval::NEED_SURE)) is dropped too, rather than put with its
    /// next tool: found by chance words, its next tool is more chance still. Its other
    /// tools are offered one by one if the call is refused (see [`Needs::refused`]).
    ///
    /// **Rationale:** in 22 MCP-Bench runs, two of the seven calls of a server the task
    /// does not use were such follow-ups: "I've seen 'user-profile' turned into
    /// 'person'… could you see which ones are available" (0.23 sure of `search_icons`,
    /// which had run) put a NixOS tool to the model, which called it; so did
    /// "documentation packed with real code examples" (0.28, after `resolve-library-id`)
    /// with BioMCP's `think`. A sure need keeps its next tool: "once I have the
    /// cryptocurrency price, check the timber resources" finds the price tool first, and
    /// the timber tool is the one it wants.
    ///
    /// **Rationale:** shown a need's two or three tools, a small model picks a weaker one
    /// more often than the weaker one is right: in 21 traced Seal-Tools tasks, of the
    /// follow-ups with several tools where it called one but the first, the first was
    /// the right tool in 4 and the one it called in 1.
    pub(crate) fn next(&mut self) -> Option<Need> {
        while !self.pending.is_empty() {
            let mut need = self.pending.remove(0);
            let best_ran = need.tools.first().is_some_and(|t| self.ran.contains(t));
            let unsure = need
                .confidence
                .is_some_and(|c| c < crate::retrieval::NEED_SURE);
            if best_ran && unsure && !need.again {
                continue;
            }
            need.tools.retain(|t| !self.ran.contains(t));
            if need.tools.is_empty() {
                continue;
            }
            if !need.again && self.made >= MAX_FOLLOW_UPS {
                self.pending.insert(0, need);
                return None;
            }
            self.made += u32::from(!need.again);
            let mut shown = need.clone();
            shown.tools.truncate(1);
            self.asked = Some(need);
            return Some(shown);
        }
        None
    }
}

pub(crate) const MAX_FOLLOW_UPS: u32 = 4;

#[cfg(test)]
mod tests {
    use super::{Need, Needs};

    fn need(text: &str, tools: &[&str]) -> Need {
        Need {
            text: text.to_owned(),
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
            again: false,
            confidence: Some(0.5),
        }
    }

    #[test]
    fn an_unsure_need_whose_best_tool_ran_is_not_put_with_its_next_tool() {
        let unsure = Need {
            confidence: Some(0.23),
            ..need(
                "see which icons go by other names",
                &["search_icons", "nix_options"],
            )
        };
        let sure = need(
            "once I have the icons, the usage snippets for React",
            &["search_icons", "get_platform_usage"],
        );
        let mut needs = Needs {
            pending: vec![unsure, sure],
            ..Needs::default()
        };
        // `search_icons` ran for the first request's own need.
        needs.ran.push("search_icons".to_owned());
        let next = needs.next().unwrap();
        assert_eq!(
            next.text,
            "once I have the icons, the usage snippets for React"
        );
        assert_eq!(next.tools, ["get_platform_usage"]);
        assert!(needs.next().is_none());
    }

    #[test]
    fn a_need_asked_again_after_a_refusal_keeps_its_next_tool() {
        let mut needs = Needs {
            pending: vec![need(
                "book a table for two",
                &["book_table", "find_restaurant"],
            )],
            ..Needs::default()
        };
        let first = needs.next().unwrap();
        assert_eq!(first.tools, ["book_table"]);
        // Refused for made-up values: put again with the next tool.
        assert!(needs.refused("book_table"));
        let again = needs.next().unwrap();
        assert_eq!(again.tools, ["find_restaurant"]);
    }
}
