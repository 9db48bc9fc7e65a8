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
    /// Its tools of its best tool's server (see [`ToolHost::server_of`](crate::ToolHost::server_of)),
    /// the best one left out: all it may still be put with once the best has run.
    pub(crate) siblings: Vec<String>,
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
    /// need whose best tool has run is put only with a next tool of that tool's server
    /// ([`Need::siblings`]), and dropped when it has none: its own search says the call
    /// that ran is what it asks for, unless the call was one step of a server's work.
    /// Its other tools are offered one by one when a call made for it is refused (see
    /// [`Needs::refused`]).
    ///
    /// **Rationale:** a request often states one need in two sentences ("I need to
    /// understand legal ethics in the United States. Please retrieve the ethical
    /// guidelines and case laws…"); both find the same tool first, and once it has run,
    /// the second sentence's next tool is a near-twin from another API that the task
    /// does not use. In 43 Seal-Tools runs, 6 follow-ups were put with the next tool of a
    /// need whose best tool had run (`getEthicsGuidelines` after `getLegalEthics`,
    /// `analyzeForensicEvidence` after `analyzeDentalRecords`, `getWCAGGuidelines` after
    /// `checkWebAccessibility`, …): none was a tool the task uses, 5 were called and one
    /// refused; the follow-ups of needs whose best tool had not run called a task's tool
    /// in 100 of 120. On BFCL, 3 of 50 runs made such a follow-up, each a stray call ("do
    /// the same for the polynomial …" put `calculate_derivative` after the area tool had
    /// run). Dropping every such need (paired, 43 Seal-Tools tasks) removed those 5 calls
    /// and no call of a task's tool; but on 20 MCP-Bench tasks it cost two complete
    /// successes, both where the next tool was of the same server as the one that ran
    /// and the sentence asked for both ("where the fast temperature and the official
    /// one differ": `get_live_temp` had run, `get_current_weather_tool` was needed; "which
    /// brands are on the cheaper end": `get_car_brands` had run, `search_car_price` was
    /// needed). A server's tools are built to be used together; a near-twin of another
    /// bundle is an alternative. Of the 6 Seal-Tools cases, 4 were of another bundle.
    /// Kept to the server, the rule completed both MCP-Bench tasks again, and on BFCL,
    /// whose tools are in no server, it took stray calls from 0.27 to 0.22 a task at the
    /// same hits (49 tasks, paired).
    ///
    /// **Rationale:** shown a need's two or three tools, a small model picks a weaker one
    /// more often than the weaker one is right: in 21 traced Seal-Tools tasks, of the
    /// follow-ups with several tools where it called one but the first, the first was
    /// the right tool in 4 and the one it called in 1.
    pub(crate) fn next(&mut self) -> Option<Need> {
        while !self.pending.is_empty() {
            let mut need = self.pending.remove(0);
            let best_ran = need.tools.first().is_some_and(|t| self.ran.contains(t));
            if best_ran && !need.again {
                let siblings = &need.siblings;
                need.tools.retain(|t| siblings.contains(t));
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
            siblings: Vec::new(),
        }
    }

    #[test]
    fn a_need_whose_best_tool_ran_is_not_put_with_its_next_tool() {
        let restated = need(
            "Please retrieve the ethical guidelines and case laws on legal ethics",
            &["getLegalEthics", "getEthicsGuidelines"],
        );
        let other = need(
            "I would like a list of bioethics organizations",
            &["getBioethicsOrganizations", "getLegalEthics"],
        );
        let mut needs = Needs {
            pending: vec![restated, other],
            ..Needs::default()
        };
        // `getLegalEthics` ran for the first request's own need.
        needs.ran.push("getLegalEthics".to_owned());
        let next = needs.next().unwrap();
        assert_eq!(next.text, "I would like a list of bioethics organizations");
        assert_eq!(next.tools, ["getBioethicsOrganizations"]);
        assert!(needs.asked.is_some());
        assert!(needs.next().is_none(), "the restated need is served");
        assert_eq!(needs.made, 1);
    }

    #[test]
    fn a_need_whose_best_tool_ran_is_put_with_a_tool_of_its_server() {
        // "Where the fast temperature and the official one differ": both tools of one
        // weather server, and the first has run.
        let both = Need {
            siblings: vec!["get_current_weather".to_owned()],
            ..need(
                "where the fast temperature and the official one differ",
                &[
                    "get_live_temp",
                    "get_forecast_elsewhere",
                    "get_current_weather",
                ],
            )
        };
        let mut needs = Needs {
            pending: vec![both],
            ..Needs::default()
        };
        needs.ran.push("get_live_temp".to_owned());
        let next = needs.next().unwrap();
        assert_eq!(next.tools, ["get_current_weather"]);
        // Refused: no other tool of the server is left, so it is not asked again.
        assert!(!needs.refused("get_current_weather"));
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
