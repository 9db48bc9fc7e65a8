//! What a viewer sees of a [`State`], and which tool a bare name stands for: the
//! bundles in view, the [`NameRank`] of a tool for a viewer, the holders of names.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::{RawTool, State};
use crate::model::{Bundle, NameClaim};
use crate::viewer::Viewer;

/// How strongly a tool holds its bare name in a viewer's eyes: the greater rank wins
/// ([`CatalogView::name_holders`](crate::CatalogView::name_holders)).
///
/// In order: an enabled built-in (built-in names are reserved, see
/// [`Catalog::check_tool_name`](crate::Catalog::check_tool_name)); then where the
/// tool's bundle stands for the viewer — its own (for the operator, the bundles no
/// tenant owns), then a shared bundle (the
/// operator's before tenants', tenants' by the order they were made in), then a
/// built-in one; then, among one owner's tools, the [`NameClaim`] (callable first, then
/// the one changed last: versions of one tool, bundles of one owner).
///
/// **Rationale:** a name must not move to another owner's tool because that tool was
/// put later: a tenant's `note_time` put after the operator's took over the operator's
/// describe, calls, approvals and recipes (issue 61). A disabled tool of one's own still
/// holds its name (its call says why it is disabled) rather than hand it to another
/// owner's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct NameRank {
    // The field order is the order of precedence (the derived `Ord` compares in it).
    built_in_callable: bool,
    standing: Standing,
    operator_first: bool,
    /// Tenants made first come first (ids are UUIDv7, ordered by time); reversed so that
    /// the greater rank is the older.
    owner: std::cmp::Reverse<u128>,
    claim: NameClaim,
}

impl NameRank {
    /// The tool's [`NameClaim`] within its owner's tools.
    pub fn claim(&self) -> NameClaim {
        self.claim
    }
}

/// Where a bundle stands for a viewer resolving a bare name (the greater first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Standing {
    BuiltIn,
    Shared,
    Own,
}

/// How `viewer` ranks `bundle` for bare names; `None` when it does not reach the
/// bundle's tools by bare name: outside its view, or (the operator) a tenant's bundle
/// that is not shared.
fn standing(viewer: &Viewer, bundle: &Bundle) -> Option<Standing> {
    if !viewer.sees(bundle) {
        return None;
    }
    if bundle.is_built_in {
        return Some(Standing::BuiltIn);
    }
    let own = match viewer {
        Viewer::Operator => bundle.owner.is_none(),
        Viewer::Tenant(t) => bundle.owner == Some(*t),
        Viewer::Public => false,
    };
    if own {
        Some(Standing::Own)
    } else if bundle.shared {
        Some(Standing::Shared)
    } else {
        None
    }
}

/// The [`NameRank`] of `raw` for `viewer`; `None` when the viewer does not reach it by
/// its bare name.
pub(crate) fn name_rank(state: &State, viewer: &Viewer, raw: &RawTool) -> Option<NameRank> {
    let bundle = state.bundles.get(&raw.head.bundle_id)?;
    let standing = standing(viewer, bundle)?;
    let claim = claim_of(state, raw);
    Some(NameRank {
        built_in_callable: raw.head.is_built_in && claim.callable(),
        standing,
        operator_first: bundle.owner.is_none(),
        owner: std::cmp::Reverse(bundle.owner.map_or(0, |t| t.as_u128())),
        claim,
    })
}

/// Of `tools`, the one of greatest [`NameRank`] for `viewer` (the first in iteration
/// order among equals), with whether it can be called.
pub(crate) fn best_of<'t>(
    state: &State,
    viewer: &Viewer,
    tools: impl Iterator<Item = &'t RawTool>,
) -> Option<(Uuid, bool)> {
    let mut best: Option<(NameRank, Uuid)> = None;
    for raw in tools {
        if let Some(rank) = name_rank(state, viewer, raw)
            && best.is_none_or(|(held, _)| rank > held)
        {
            best = Some((rank, raw.head.id));
        }
    }
    best.map(|(rank, id)| (id, rank.claim.callable()))
}

/// The ids of the bundles `viewer` sees; `None`: every one (the operator).
pub(crate) fn visible_bundles(state: &State, viewer: &Viewer) -> Option<HashSet<Uuid>> {
    if *viewer == Viewer::Operator {
        return None;
    }
    Some(
        state
            .bundles
            .values()
            .filter(|b| viewer.sees(b))
            .map(|b| b.id)
            .collect(),
    )
}

/// Whether `bundle` is among `visible` (see [`visible_bundles`]).
pub(crate) fn in_view(visible: Option<&HashSet<Uuid>>, bundle: Uuid) -> bool {
    visible.is_none_or(|v| v.contains(&bundle))
}

/// Whether `viewer` sees the bundle `bundle` (none: not).
pub(crate) fn sees_id(state: &State, viewer: &Viewer, bundle: Uuid) -> bool {
    state.bundles.get(&bundle).is_some_and(|b| viewer.sees(b))
}

/// Among the tools `keep` keeps, the one each name stands for (the greatest
/// [`NameClaim`]; in id order, a later tool takes a name only with a greater claim), by
/// name. Every name is looked at in place: nothing is copied but the ids.
pub(crate) fn holders_where(
    state: &State,
    keep: impl Fn(&RawTool) -> bool,
) -> HashMap<&str, (NameClaim, Uuid)> {
    let mut best: HashMap<&str, (NameClaim, Uuid)> = HashMap::new();
    for raw in state.tools.values().filter(|raw| keep(raw)) {
        let claim = claim_of(state, raw);
        best.entry(raw.head.name.as_str())
            .and_modify(|held| {
                if claim > held.0 {
                    *held = (claim, raw.head.id);
                }
            })
            .or_insert((claim, raw.head.id));
    }
    best
}

/// The holders' ids, with whether each can be called, in id order.
pub(crate) fn sorted_holders(best: HashMap<&str, (NameClaim, Uuid)>) -> Vec<(Uuid, bool)> {
    let mut out: Vec<(Uuid, bool)> = best
        .into_values()
        .map(|(claim, id)| (id, claim.callable()))
        .collect();
    out.sort_unstable_by_key(|(id, _)| *id);
    out
}

/// How strongly the tool `raw` claims its name (see [`NameClaim`]).
pub(crate) fn claim_of(state: &State, raw: &RawTool) -> NameClaim {
    let h = &raw.head;
    NameClaim::new(
        state.disabled_reason(raw).is_none(),
        h.is_built_in,
        h.modified_at,
    )
}
