use chrono::{TimeDelta, Utc};
use toolscout_catalog::{BundlePut, BundleQuery, DisabledReason, Error, ToolQuery, builtin};

use crate::{bundle, http_put, id, open, open_bare};

#[test]
fn put_replaces_and_keeps_created_at() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = id(1);
    let first = c
        .put_bundle(b, &BundlePut::new("maps").with_description("Maps"))
        .unwrap();
    assert_eq!(first.display_name, "maps");
    let second = c
        .put_bundle(b, &BundlePut::new("geo").with_display_name("Geo"))
        .unwrap();
    assert_eq!(second.slug, "geo");
    assert_eq!(second.created_at, first.created_at);
    // The file is there for another process.
    assert_eq!(open_bare(dir.path()).bundle(b).unwrap(), second);
}

#[test]
fn list_filters_disabled_and_deleted_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    for n in 1..=5 {
        bundle(&c, n, &format!("b{n}"));
    }
    c.patch_bundle(id(2), false).unwrap();
    c.delete_bundle(id(3)).unwrap();
    let slugs = |q: &BundleQuery| -> Vec<String> {
        c.list_bundles(q)
            .unwrap()
            .items
            .into_iter()
            .map(|b| b.slug)
            .collect()
    };
    assert_eq!(slugs(&BundleQuery::default()), ["b1", "b4", "b5"]);
    assert_eq!(
        slugs(&BundleQuery::default().with_include_disabled(true)),
        ["b1", "b2", "b4", "b5"]
    );
    assert_eq!(
        slugs(&BundleQuery::default().with_include_deleted(true)),
        ["b1", "b2", "b3", "b4", "b5"]
    );
    assert_eq!(
        slugs(&BundleQuery::default().with_bundle_ids(&[id(4), id(2)])),
        ["b4"]
    );
    let first = c
        .list_bundles(&BundleQuery::default().with_page_size(2))
        .unwrap();
    assert_eq!(first.items.len(), 2);
    let rest = c
        .list_bundles(
            &BundleQuery::default()
                .with_page_size(2)
                .with_page_token(first.next_page_token.as_deref()),
        )
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_eq!(rest.items[0].slug, "b5");
    assert_eq!(rest.next_page_token, None);
}

#[test]
fn writes_inside_disabled_or_deleted_bundles_are_refused_but_deletes_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    c.put_tool(b, "t", "1", &http_put("t")).unwrap();
    c.patch_bundle(b, false).unwrap();
    assert!(matches!(
        c.put_tool(b, "u", "1", &http_put("u")),
        Err(Error::BundleDisabled { .. })
    ));
    assert!(matches!(
        c.patch_tool(b, "t", "1", false),
        Err(Error::BundleDisabled { .. })
    ));
    let t = c.get_tool(b, "t", "1").unwrap();
    assert_eq!(t.disabled_reason, Some(DisabledReason::BundleDisabled));
    c.patch_bundle(b, true).unwrap();
    c.delete_bundle(b).unwrap();
    assert!(matches!(
        c.put_tool(b, "u", "1", &http_put("u")),
        Err(Error::BundleDeleted { .. })
    ));
    assert!(matches!(
        c.patch_bundle(b, false),
        Err(Error::BundleDeleted { .. })
    ));
    assert_eq!(
        c.get_tool(b, "t", "1").unwrap().disabled_reason,
        Some(DisabledReason::BundleDeleted)
    );
    // Deleting tools empties the bundle for the reaper.
    c.delete_tool(b, "t", "1").unwrap();
}

#[test]
fn reaper_removes_only_old_empty_soft_deleted_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let empty = bundle(&c, 1, "empty");
    let full = bundle(&c, 2, "full");
    let live = bundle(&c, 3, "live");
    c.put_tool(full, "t", "1", &http_put("t")).unwrap();
    c.delete_bundle(empty).unwrap();
    c.delete_bundle(full).unwrap();
    assert!(c.reap(Utc::now()).unwrap().is_empty());
    let later = Utc::now() + TimeDelta::days(2) + TimeDelta::seconds(1);
    assert_eq!(c.reap(later).unwrap(), [empty]);
    assert!(!dir.path().join("bundles").join(empty.to_string()).exists());
    assert!(c.bundle(full).is_ok());
    assert!(c.bundle(live).is_ok());
    c.delete_tool(full, "t", "1").unwrap();
    assert_eq!(c.reap(later).unwrap(), [full]);
    assert!(open_bare(dir.path()).bundle(full).is_err());
}

#[test]
fn builtin_bundles_change_only_their_enabled_flag() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    let files = builtin::bundles()[0].id;
    assert!(matches!(
        c.put_bundle(files, &BundlePut::new("mine")),
        Err(Error::BuiltIn { .. })
    ));
    assert!(matches!(c.delete_bundle(files), Err(Error::BuiltIn { .. })));
    assert!(matches!(
        c.put_tool(files, "x", "1", &http_put("x")),
        Err(Error::BuiltIn { .. })
    ));
    assert!(matches!(
        c.delete_tool(files, "read-file", "1"),
        Err(Error::BuiltIn { .. })
    ));
    c.patch_bundle(files, false).unwrap();
    c.patch_tool(builtin::bundles()[2].id, "clock", "1", false)
        .unwrap();
    // The flags are an overlay file; they survive a reopen.
    let again = open(dir.path());
    assert!(!again.bundle(files).unwrap().is_enabled);
    let callable: Vec<String> = again
        .list_tools(&ToolQuery::default())
        .unwrap()
        .items
        .into_iter()
        .map(|t| t.spec.name.to_string())
        .collect();
    assert_eq!(callable, ["http_get", "json_query"]);
}

#[test]
fn regression_page_size_usize_max_lists_everything_without_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    bundle(&c, 1, "one");
    let bundles = c
        .list_bundles(&BundleQuery::default().with_page_size(usize::MAX))
        .unwrap();
    assert_eq!(
        bundles.items.len(),
        4,
        "three built-in bundles and one stored"
    );
    assert_eq!(bundles.next_page_token, None);
    let tools = c
        .list_tools(&ToolQuery::default().with_page_size(usize::MAX))
        .unwrap();
    assert_eq!(tools.items.len(), builtin::NATIVE_FUNCTIONS.len());
}
