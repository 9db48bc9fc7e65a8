//! [`Catalog::add_tools`]: tools added to a bundle named by its slug, created when
//! missing; a name the bundle already has is skipped, or with
//! [`OnExisting::NewVersion`] stored as a new version of that tool when it changed.
//! What an import does.

use std::collections::{HashMap, HashSet};

use toolscout_spec::name::slug_from_name;
use uuid::Uuid;

use crate::{BundlePut, BundleQuery, Catalog, NameClaim, Result, ToolHead, ToolPut};

/// What [`Catalog::add_tools_with`] does with a tool whose name the bundle already has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnExisting {
    /// Leave the stored tool as it is and skip the new one (what [`Catalog::add_tools`]
    /// does).
    #[default]
    Skip,
    /// Store the new one as the next version of the stored tool (same slug; version
    /// one more than its greatest numeric version), when it differs from it; an
    /// unchanged tool is left alone. The new version keeps the stored tool's enabled
    /// flag, and a spec-only put (a spec and no way to run it, e.g. a JSONL line) keeps
    /// how the stored tool runs: only its description changes. Earlier versions stay
    /// stored; the name stands for the newest ([`NameClaim`]).
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
    /// How many were left out: under [`OnExisting::Skip`] because the bundle already
    /// has a tool of their name, under either because an earlier put of the same call
    /// has that name.
    pub skipped: usize,
    /// How many were left out under [`OnExisting::NewVersion`] because the stored tool
    /// is the same.
    pub unchanged: usize,
}

impl Catalog {
    /// Adds `puts` to the bundle whose slug is `bundle.slug` (not deleted), made from
    /// `bundle` when there is none, in one write ([`Catalog::put_tools`]). A tool whose
    /// name the bundle already has is skipped (what is stored is never replaced), and
    /// each new tool gets version `1` and a slug from its name, unique in the bundle.
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
    /// name the bundle already has; everything is written in one write, all or nothing.
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
        let (bundle_id, created) = match self.bundle_by_slug(&bundle.slug)? {
            Some(id) => (id, false),
            None => {
                let id = Uuid::now_v7();
                self.put_bundle(id, bundle)?;
                (id, true)
            }
        };
        // The bundle's tools: the one each name stands for, and each slug's versions.
        let mut holders: HashMap<String, (NameClaim, Uuid, String)> = HashMap::new();
        let mut versions: HashMap<String, Vec<String>> = HashMap::new();
        self.for_each_head(|head, reason| {
            if head.bundle_id != bundle_id {
                return;
            }
            let claim = NameClaim::new(reason.is_none(), head.is_built_in, head.modified_at);
            let holder = (claim, head.id, head.slug.clone());
            holders
                .entry(head.name.clone())
                .and_modify(|h| {
                    if holder.0 > h.0 {
                        *h = holder.clone();
                    }
                })
                .or_insert(holder);
            versions
                .entry(head.slug.clone())
                .or_default()
                .push(head.version.clone());
        });
        let mut seen = HashSet::new();
        let mut slugged = Vec::with_capacity(puts.len());
        let mut new_versions = HashSet::new();
        let (mut skipped, mut unchanged) = (0, 0);
        for mut put in puts {
            if !seen.insert(put.spec.name.to_string()) {
                skipped += 1;
                continue;
            }
            if let Some((_, id, slug)) = holders.get(put.spec.name.as_str()) {
                if existing == OnExisting::Skip {
                    skipped += 1;
                    continue;
                }
                let stored = self.tool(*id)?;
                if put.is_spec_only() && !stored.is_spec_only() {
                    put.tool_type = stored.tool_type;
                    put.implementation = stored.implementation.clone();
                }
                put.is_enabled = stored.is_enabled;
                if same_tool(&stored, &put)? {
                    unchanged += 1;
                    continue;
                }
                let taken = versions.entry(slug.clone()).or_default();
                let version = next_version(taken);
                taken.push(version.clone());
                new_versions.insert(put.spec.name.to_string());
                slugged.push((slug.clone(), version, put));
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
            slugged.push((slug, "1".to_owned(), put));
        }
        let written = if slugged.is_empty() {
            Vec::new()
        } else {
            // By value: each tool is dropped once its file is made.
            self.put_tools(bundle_id, slugged)?
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

/// Whether `put` would store what `stored` holds: the same spec once stored (the
/// catalog sets the version label and fills in what a tool file adds), the same way of
/// running and the same enabled flag.
fn same_tool(stored: &crate::Tool, put: &ToolPut) -> Result<bool> {
    let (_, spec) = crate::ops::new_tool_file(
        stored.bundle_id,
        stored.id,
        &stored.slug,
        &stored.version,
        put,
        stored.modified_at,
    )?;
    Ok(spec == stored.spec
        && stored.tool_type == put.tool_type
        && stored.implementation == put.implementation
        && stored.is_enabled == put.is_enabled)
}

/// The version label after `taken`: one more than the greatest numeric label, and not
/// one of `taken` (labels are opaque: a bundle's may be `v2`, `2024-01` or `1`).
fn next_version(taken: &[String]) -> String {
    let mut n = taken
        .iter()
        .filter_map(|v| v.parse::<u64>().ok())
        .max()
        .map_or(taken.len() as u64 + 1, |m| m.saturating_add(1));
    while taken.iter().any(|v| *v == n.to_string()) {
        n = n.saturating_add(1);
    }
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::next_version;

    #[test]
    fn the_next_version_follows_the_greatest_number_and_is_never_taken() {
        let v = |t: &[&str]| next_version(&t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(v(&["1"]), "2");
        assert_eq!(v(&["1", "7", "3"]), "8");
        assert_eq!(v(&["v1", "beta"]), "3");
        assert_eq!(v(&["v1", "2"]), "3");
        assert_eq!(v(&["v1", "v2"]), "3");
        assert_eq!(v(&[]), "1");
    }
}
