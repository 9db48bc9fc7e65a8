//! [`Catalog::add_tools`]: tools added to a bundle named by its slug, created when
//! missing, skipping the names the bundle already has. What an import does.

use std::collections::HashSet;

use toolscout_spec::name::slug_from_name;
use uuid::Uuid;

use crate::{BundlePut, BundleQuery, Catalog, Result, ToolHead, ToolPut};

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
    /// How many were left out because the bundle already has a tool of their name.
    pub skipped: usize,
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
        let (bundle_id, created) = match self.bundle_by_slug(&bundle.slug)? {
            Some(id) => (id, false),
            None => {
                let id = Uuid::now_v7();
                self.put_bundle(id, bundle)?;
                (id, true)
            }
        };
        let mut taken = HashSet::new();
        let mut slugs = HashSet::new();
        self.for_each_head(|head, _| {
            if head.bundle_id == bundle_id {
                taken.insert(head.name.clone());
                slugs.insert(head.slug.clone());
            }
        });
        let mut slugged = Vec::with_capacity(puts.len());
        let mut skipped = 0;
        for put in puts {
            if !taken.insert(put.spec.name.to_string()) {
                skipped += 1;
                continue;
            }
            let base = slug_from_name(&put.spec.name);
            let mut slug = base.clone();
            let mut n = 2;
            while !slugs.insert(slug.clone()) {
                slug = format!("{base}-{n}");
                n += 1;
            }
            slugged.push((slug, "1", put));
        }
        let added = if slugged.is_empty() {
            Vec::new()
        } else {
            // By value: each tool is dropped once its file is made.
            self.put_tools(bundle_id, slugged)?
        };
        Ok(Added {
            bundle: bundle_id,
            created,
            added,
            skipped,
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
