//! [`Catalog::add_tools`]: tools added to a bundle named by its slug, created when
//! missing; a name the bundle already has is skipped, or with
//! [`OnExisting::NewVersion`] stored as a new version of that tool when it changed.
//! What an import does.

use std::collections::{HashMap, HashSet};

use toolscout_spec::name::slug_from_name;
use uuid::Uuid;

use crate::state::visible::{claim_of, holders_where};
use crate::state::{RawTool, State};
use crate::{BundlePut, BundleQuery, Catalog, Error, NameClaim, Result, Tool, ToolHead, ToolPut};

/// What [`Catalog::add_tools_with`] does with a tool whose name the bundle already has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnExisting {
    /// Leave the stored tool as it is and skip the new one (what [`Catalog::add_tools`]
    /// does).
    #[default]
    Skip,
    /// Store the new one as the next version of the stored tool (the one the name stands
    /// for in the bundle: same slug, the version after its labels, see below) when it
    /// differs from it; an unchanged tool is left alone. The new version keeps the
    /// stored tool's enabled flag, and its sample requests (`utterances`) when the put
    /// has none (an OpenAPI document or a server's tool list never has any). A
    /// spec-only put (a JSONL line, which says less than a stored tool may hold) changes
    /// only what it carries: the description when it has one that says something else
    /// (with the summary made from it, for a spec-only tool), the sample requests when
    /// it has some, the category and tags when it has some, and the parameters of a
    /// spec-only tool when it has some (a tool that runs keeps those its implementation
    /// maps); how the tool runs, its summary, examples, notes and metadata (approval
    /// rules among them) stay. Earlier versions stay stored; the new version, being
    /// the newest, is the one its name stands for by the [`NameClaim`] rule (unless
    /// another tool of the name can be called and it cannot, or is built in). The
    /// version label is one more than the greatest numeric label of the slug (labels
    /// are opaque: a bundle may use `v2` or `2024-01`), else the first number not taken.
    NewVersion,
}

/// What [`Catalog::add_tools`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Added {
    /// The bundle the tools went into.
    pub bundle: Uuid,
    /// Whether the bundle was made for them.
    pub created: bool,
    /// The tools added.
    pub added: Vec<ToolHead>,
    /// New versions of tools the bundle had ([`OnExisting::NewVersion`]).
    pub updated: Vec<ToolHead>,
    /// How many were left out under [`OnExisting::Skip`] because the bundle already has
    /// a tool of their name.
    pub skipped: usize,
    /// How many were left out because an earlier put of the same call has their name.
    pub duplicates: usize,
    /// How many were left out under [`OnExisting::NewVersion`] because the stored tool
    /// is the same.
    pub unchanged: usize,
}

impl Catalog {
    /// Adds `puts` to the bundle whose slug is `bundle.slug` (not deleted), made from
    /// `bundle` when there is none, in one write ([`Catalog::put_tools`]). A tool whose
    /// name the bundle already has is skipped (what is stored is never replaced), and
    /// each new tool gets version `1` and a slug from its name, unique in the bundle.
    /// A built-in tool's name or bundle's slug is refused ([`Error::ReservedName`], see
    /// [`Catalog::check_tool_name`]), and then nothing is written.
    ///
    /// A process killed half-way leaves all of it (a new bundle too) or none, so the
    /// same call made again completes it: what got in is then skipped.
    ///
    /// ```
    /// use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, ToolPut};
    /// use toolscout_spec::ToolSpec;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let catalog = Catalog::open_with(dir.path(), CatalogOptions::default().with_builtins(false))?;
    /// let spec = ToolSpec::builder("math.gcd", "Greatest common divisor").build()?;
    /// let put = ToolPut::http(spec, serde_json::json!({"method": "GET", "urlTemplate": "https://api.example.com/gcd"}));
    ///
    /// let first = catalog.add_tools(&BundlePut::new("math"), vec![put.clone()])?;
    /// assert!(first.created);
    /// assert_eq!(first.added[0].slug, "math-gcd");
    /// let again = catalog.add_tools(&BundlePut::new("math"), vec![put])?;
    /// assert_eq!((again.bundle, again.added.len(), again.skipped), (first.bundle, 0, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_tools(&self, bundle: &BundlePut, puts: Vec<ToolPut>) -> Result<Added> {
        self.add_tools_with(bundle, puts, OnExisting::Skip)
    }

    /// [`Catalog::add_tools`], deciding with `existing` what happens to a tool whose
    /// name the bundle already has. The catalog first catches up with other processes'
    /// writes ([`Catalog::reload`]); the tools are then written in one write, all or
    /// nothing (a bundle made for them in the same batch). What was planned from the bundle
    /// as read is checked under the write lock: if another process changed the bundle's
    /// tools in between, nothing is written and the error is [`Error::BundleChanged`].
    ///
    /// ```
    /// use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, OnExisting, ToolPut};
    /// use toolscout_spec::ToolSpec;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let catalog = Catalog::open_with(dir.path(), CatalogOptions::default().with_builtins(false))?;
    /// let spec = ToolSpec::builder("tide_times", "High and low water at a harbour").build()?;
    /// catalog.add_tools(&BundlePut::new("sea"), vec![ToolPut::spec_only(spec.clone())])?;
    ///
    /// // The same tool with sample requests: a new version of it.
    /// let mut enriched = spec.clone();
    /// enriched.utterances = vec!["Can I go sailing at noon?".into()];
    /// let put = vec![ToolPut::spec_only(enriched)];
    /// let again = catalog.add_tools_with(&BundlePut::new("sea"), put.clone(), OnExisting::NewVersion)?;
    /// assert_eq!((again.added.len(), again.updated.len()), (0, 1));
    /// assert_eq!((again.updated[0].slug.as_str(), again.updated[0].version.as_str()), ("tide-times", "2"));
    /// // Nothing changed since: nothing is written.
    /// let same = catalog.add_tools_with(&BundlePut::new("sea"), put, OnExisting::NewVersion)?;
    /// assert_eq!((same.updated.len(), same.unchanged), (0, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_tools_with(
        &self,
        bundle: &BundlePut,
        puts: Vec<ToolPut>,
        existing: OnExisting,
    ) -> Result<Added> {
        // What other processes wrote, read first: the plan is made from it.
        self.reload()?;
        let (bundle_id, created) = match self.bundle_by_slug(&bundle.slug)? {
            Some(id) => (id, false),
            // Made in the same batch as its tools, so that an import killed half-way
            // leaves no empty bundle behind.
            None => (Uuid::now_v7(), true),
        };
        let plan = self.plan(bundle_id, puts, existing)?;
        self.write_plan(bundle_id, bundle, created, plan)
    }

    /// What adding `puts` to the bundle `bundle_id` would write, from the bundle as this
    /// catalog holds it now.
    fn plan(&self, bundle_id: Uuid, puts: Vec<ToolPut>, existing: OnExisting) -> Result<Plan> {
        // The bundle's tools: the one each name stands for, each slug's versions, and
        // what must not have moved when the write takes the lock.
        let (holders, mut versions, read) = {
            let state = self.lock_state();
            let in_bundle = |raw: &RawTool| raw.head.bundle_id == bundle_id;
            let holders: HashMap<String, (Uuid, String)> = holders_where(&state, in_bundle)
                .into_iter()
                .filter_map(|(name, (_, id))| {
                    let slug = state.tools.get(&id)?.head.slug.clone();
                    Some((name.to_owned(), (id, slug)))
                })
                .collect();
            let mut versions: HashMap<String, Vec<String>> = HashMap::new();
            for raw in state.tools.values().filter(|raw| in_bundle(raw)) {
                versions
                    .entry(raw.head.slug.clone())
                    .or_default()
                    .push(raw.head.version.clone());
            }
            (holders, versions, relied_on(&state, bundle_id, existing))
        };
        let mut plan = Plan {
            existing,
            read,
            writes: Vec::with_capacity(puts.len()),
            new_versions: HashSet::new(),
            skipped: 0,
            duplicates: 0,
            unchanged: 0,
        };
        let mut seen = HashSet::new();
        for put in puts {
            if !seen.insert(put.spec.name.to_string()) {
                plan.duplicates += 1;
                continue;
            }
            if let Some((id, slug)) = holders.get(put.spec.name.as_str()) {
                if existing == OnExisting::Skip {
                    plan.skipped += 1;
                    continue;
                }
                let stored = self.tool(*id)?;
                let put = onto_stored(&stored, put);
                let taken = versions.entry(slug.clone()).or_default();
                let version = next_version(taken);
                if same_tool(&stored, &put, &version)? {
                    plan.unchanged += 1;
                    continue;
                }
                taken.push(version.clone());
                plan.new_versions.insert(put.spec.name.to_string());
                plan.writes.push((slug.clone(), version, put));
                continue;
            }
            let base = slug_from_name(&put.spec.name);
            let mut slug = base.clone();
            let mut n = 2;
            while versions.contains_key(&slug) {
                slug = format!("{base}-{n}");
                n += 1;
            }
            versions.insert(slug.clone(), vec!["1".to_owned()]);
            plan.writes.push((slug, "1".to_owned(), put));
        }
        Ok(plan)
    }

    /// Writes `plan` once the bundle, as read under the write lock, is still what the
    /// plan was made from; else nothing is written ([`Error::BundleChanged`]). When
    /// `created`, the bundle is made from `bundle` in the same batch.
    fn write_plan(
        &self,
        bundle_id: Uuid,
        bundle: &BundlePut,
        created: bool,
        plan: Plan,
    ) -> Result<Added> {
        let Plan {
            existing,
            read,
            writes,
            new_versions,
            skipped,
            duplicates,
            unchanged,
        } = plan;
        let written = if writes.is_empty() && !created {
            Vec::new()
        } else {
            // By value: each tool is dropped once its file is made.
            self.put_tools_if(
                &crate::Viewer::Operator,
                bundle_id,
                created.then_some(bundle),
                writes,
                |state| {
                    if relied_on(state, bundle_id, existing) == read {
                        return Ok(());
                    }
                    Err(Error::BundleChanged {
                        bundle: bundle_id,
                        bundle_slug: bundle.slug.clone(),
                    })
                },
            )?
        };
        let (updated, added) = written
            .into_iter()
            .partition(|h| new_versions.contains(h.name.as_str()));
        Ok(Added {
            bundle: bundle_id,
            created,
            added,
            updated,
            skipped,
            duplicates,
            unchanged,
        })
    }

    /// The bundle (not deleted) whose slug is `slug`.
    fn bundle_by_slug(&self, slug: &str) -> Result<Option<Uuid>> {
        let mut token: Option<String> = None;
        loop {
            let page = self.list_bundles(
                &BundleQuery::default()
                    .with_include_disabled(true)
                    .with_page_token(token.as_deref()),
            )?;
            if let Some(b) = page.items.iter().find(|b| b.slug == slug) {
                return Ok(Some(b.id));
            }
            match page.next_page_token {
                Some(t) => token = Some(t),
                None => return Ok(None),
            }
        }
    }
}

/// What [`Catalog::add_tools_with`] will write, and what it read to decide it.
struct Plan {
    existing: OnExisting,
    /// What the plan relies on of the bundle's tools ([`relied_on`]).
    read: Vec<(Uuid, Option<(NameClaim, bool)>)>,
    writes: Vec<(String, String, ToolPut)>,
    /// The names whose writes are new versions.
    new_versions: HashSet<String>,
    skipped: usize,
    duplicates: usize,
    unchanged: usize,
}

/// What a plan relies on of the bundle's tools, by id: that they are there, and for new
/// versions also how each claims its name and whether it is enabled (copied into them).
fn relied_on(
    state: &State,
    bundle: Uuid,
    existing: OnExisting,
) -> Vec<(Uuid, Option<(NameClaim, bool)>)> {
    // `state.tools` is ordered by id.
    state
        .tools
        .values()
        .filter(|raw| raw.head.bundle_id == bundle)
        .map(|raw| match existing {
            OnExisting::Skip => (raw.head.id, None),
            OnExisting::NewVersion => (
                raw.head.id,
                Some((claim_of(state, raw), raw.head.is_enabled)),
            ),
        })
        .collect()
}

/// `put` as the next version of `stored`: with the stored tool's enabled flag, and for a
/// spec-only put (a JSONL line, which says less than a stored tool may hold) the stored
/// tool with only what such a put carries laid over it (see [`OnExisting::NewVersion`]).
fn onto_stored(stored: &Tool, mut put: ToolPut) -> ToolPut {
    put.is_enabled = stored.is_enabled;
    if put.spec.utterances.is_empty() {
        // Nothing else writes them: an OpenAPI document or a server's list has none.
        put.spec.utterances.clone_from(&stored.spec.utterances);
    }
    if !put.is_spec_only() {
        return put;
    }
    let line = put.spec;
    let mut spec = stored.spec.clone();
    let runs = !stored.is_spec_only();
    if !line.description.is_empty()
        && line.description_or_summary() != stored.spec.description_or_summary()
    {
        spec.description = line.description;
        if !runs {
            // A JSONL tool's summary is made from its description.
            spec.summary = line.summary;
        }
    }
    if !runs && line.parameters != toolscout_spec::empty_object_schema() {
        spec.parameters = line.parameters;
    }
    spec.utterances = line.utterances;
    if line.category.is_some() {
        spec.category = line.category;
    }
    if !line.tags.is_empty() {
        spec.tags = line.tags;
    }
    ToolPut {
        spec,
        tool_type: stored.tool_type,
        implementation: stored.implementation.clone(),
        is_enabled: stored.is_enabled,
    }
}

/// Whether `put`, stored as `version` of `stored`'s slug, would hold what `stored` holds:
/// the same spec once stored (the version label aside), the same way of running and the
/// same enabled flag. An invalid put is an error naming that new version.
fn same_tool(stored: &Tool, put: &ToolPut, version: &str) -> Result<bool> {
    let (_, mut spec) = crate::model::new_tool_file(
        stored.bundle_id,
        stored.id,
        &stored.slug,
        version,
        put,
        stored.modified_at,
    )?;
    spec.version.clone_from(&stored.spec.version);
    Ok(spec == stored.spec
        && stored.tool_type == put.tool_type
        && stored.implementation == put.implementation
        && stored.is_enabled == put.is_enabled)
}

/// The version label after `taken`: one more than the greatest numeric label (1 when
/// there is none), else the first number not taken (labels are opaque: a bundle's may be
/// `v2`, `2024-01` or `1`).
fn next_version(taken: &[String]) -> String {
    let free = |n: &u64| !taken.iter().any(|v| *v == n.to_string());
    let after_greatest = taken
        .iter()
        .filter_map(|v| v.parse::<u64>().ok())
        .max()
        .map_or(Some(1), |m| m.checked_add(1));
    // Past u64::MAX (a label may be any 64 digits), the first free count from 1 does.
    after_greatest
        .filter(free)
        .or_else(|| (1..).find(free))
        .unwrap_or(0)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::{OnExisting, next_version};
    use crate::{BundlePut, Catalog, CatalogOptions, Error, ToolPut};
    use toolscout_spec::ToolSpec;

    #[test]
    fn a_plan_is_not_written_when_another_process_changed_the_bundle_since() {
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            Catalog::open_with(dir.path(), CatalogOptions::default().with_builtins(false)).unwrap()
        };
        let c = open();
        let spec = |request: &str| {
            let mut s = ToolSpec::builder("tides", "High and low water")
                .build()
                .unwrap();
            s.utterances = vec![request.to_owned()];
            ToolPut::spec_only(s)
        };
        let b = c
            .add_tools(&BundlePut::new("sea"), vec![spec("when is high water?")])
            .unwrap()
            .bundle;
        let plan = c
            .plan(b, vec![spec("is it low tide?")], OnExisting::NewVersion)
            .unwrap();
        assert_eq!(plan.writes.len(), 1);
        // Between the plan and the write, another process disables the tool: the plan
        // would have made an enabled version of it.
        open().patch_tool(b, "tides", "1", false).unwrap();
        let err = c
            .write_plan(b, &BundlePut::new("sea"), false, plan)
            .unwrap_err();
        assert!(matches!(err, Error::BundleChanged { bundle, .. } if bundle == b));
        assert!(
            err.to_string().contains("nothing was written: try again"),
            "{err}"
        );
        assert_eq!(open().tools().len(), 1);

        // A plan that only adds new names does not care about that.
        let fresh = c
            .plan(
                b,
                vec![ToolPut::spec_only(
                    ToolSpec::builder("currents", "Sea currents")
                        .build()
                        .unwrap(),
                )],
                OnExisting::Skip,
            )
            .unwrap();
        open().patch_tool(b, "tides", "1", true).unwrap();
        let added = c
            .write_plan(b, &BundlePut::new("sea"), false, fresh)
            .unwrap();
        assert_eq!(added.added.len(), 1);
    }

    #[test]
    fn the_next_version_follows_the_greatest_number_and_is_never_taken() {
        let v = |t: &[&str]| next_version(&t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(v(&["1"]), "2");
        assert_eq!(v(&["1", "7", "3"]), "8");
        assert_eq!(v(&["v1", "beta"]), "1");
        assert_eq!(v(&["v1", "2"]), "3");
        assert_eq!(v(&["v1", "v2"]), "1");
        assert_eq!(v(&[]), "1");
        assert_eq!(v(&["18446744073709551615", "1"]), "2");
    }
}
