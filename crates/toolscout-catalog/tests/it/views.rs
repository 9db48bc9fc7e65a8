//! The catalog as each viewer sees it: what is outside a view answers as what does not
//! exist.

use toolscout_catalog::{
    BundlePut, BundleQuery, Catalog, Error, TenantId, TenantLimits, ToolQuery, Viewer, scope_of,
};
use uuid::Uuid;

use crate::{http_put, id, open};

/// Built-ins; the operator's `ops` (id 1) and `shared` (id 2, shared); tenant A's `crm`
/// (id 3, tool `alpha_lookup`), and, `with_b`, tenant B's `crm` (id 4, `bravo_lookup`).
fn world(dir: &std::path::Path, with_b: bool) -> (Catalog, TenantId, Option<TenantId>) {
    let c = open(dir);
    let (a, _) = c.add_tenant("a", TenantLimits::default()).unwrap();
    c.put_bundle(id(1), &BundlePut::new("ops")).unwrap();
    c.put_tool(id(1), "ops-tool", "1", &http_put("ops_tool"))
        .unwrap();
    c.put_bundle(id(2), &BundlePut::new("shared")).unwrap();
    c.put_tool(id(2), "ping", "1", &http_put("shared_ping"))
        .unwrap();
    c.set_bundle_shared(id(2), true).unwrap();
    c.put_bundle(id(3), &BundlePut::new("crm-a")).unwrap();
    c.put_tool(id(3), "lookup", "1", &http_put("alpha_lookup"))
        .unwrap();
    c.set_bundle_owner(id(3), Some(a.id)).unwrap();
    let b = with_b.then(|| {
        let (b, _) = c.add_tenant("b", TenantLimits::default()).unwrap();
        c.put_bundle(id(4), &BundlePut::new("crm-b")).unwrap();
        c.put_tool(id(4), "lookup", "1", &http_put("bravo_lookup"))
            .unwrap();
        c.set_bundle_owner(id(4), Some(b.id)).unwrap();
        b.id
    });
    (c, a.id, b)
}

fn names(c: &Catalog, viewer: &Viewer) -> Vec<String> {
    let page = c
        .view(viewer)
        .list_tools(&ToolQuery::default().with_include_disabled(true))
        .unwrap();
    page.items
        .into_iter()
        .map(|t| t.spec.name.to_string())
        .collect()
}

#[test]
fn each_viewer_sees_its_own_the_shared_and_the_built_in_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (c, a, b) = world(dir.path(), true);
    let b = b.unwrap();
    let all = names(&c, &Viewer::Operator);
    assert!(all.contains(&"bravo_lookup".to_owned()));
    assert!(all.contains(&"ops_tool".to_owned()));
    let of_a = names(&c, &Viewer::Tenant(a));
    assert!(of_a.contains(&"alpha_lookup".to_owned()));
    assert!(of_a.contains(&"shared_ping".to_owned()));
    assert!(of_a.contains(&"clock".to_owned()), "{of_a:?}");
    assert!(!of_a.contains(&"bravo_lookup".to_owned()));
    assert!(!of_a.contains(&"ops_tool".to_owned()));
    let public = names(&c, &Viewer::Public);
    assert!(public.contains(&"shared_ping".to_owned()));
    assert!(
        !public
            .iter()
            .any(|n| n.ends_with("_lookup") || n == "ops_tool")
    );
    let bundles: Vec<Uuid> = c
        .view(&Viewer::Tenant(b))
        .list_bundles(&BundleQuery::default())
        .unwrap()
        .items
        .iter()
        .filter(|x| !x.is_built_in)
        .map(|x| x.id)
        .collect();
    assert_eq!(bundles, [id(2), id(4)]);
    // The heads and name holders of a view are its tools only.
    let view = c.view(&Viewer::Tenant(a));
    assert!(view.heads().iter().all(|h| h.name != "bravo_lookup"));
    assert!(view.name_holder("bravo_lookup").is_none());
    assert!(view.name_holder("alpha_lookup").is_some());
    let held: Vec<Uuid> = view.name_holders().iter().map(|(i, _)| *i).collect();
    assert!(held.iter().all(|i| view.head(*i).is_ok()));
    // Scopes: what a search filter uses.
    assert_eq!(scope_of(&c.bundle(id(2)).unwrap()), "*");
    assert_eq!(scope_of(&c.bundle(id(1)).unwrap()), "-");
    assert_eq!(scope_of(&c.bundle(id(3)).unwrap()), a.simple().to_string());
    assert_eq!(
        Viewer::Tenant(a).scopes().unwrap(),
        ["*".to_owned(), a.simple().to_string()]
    );
}

#[test]
fn what_another_tenant_holds_answers_as_what_nobody_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (c, a, _) = world(dir.path(), true);
    let view = c.view(&Viewer::Tenant(a));
    let fresh = Uuid::now_v7();
    let same = |theirs: String, none: String, their_id: Uuid, none_id: Uuid| {
        assert_eq!(
            theirs.replace(&their_id.to_string(), "<id>"),
            none.replace(&none_id.to_string(), "<id>")
        );
    };
    // A bundle.
    same(
        view.bundle(id(4)).unwrap_err().to_string(),
        view.bundle(fresh).unwrap_err().to_string(),
        id(4),
        fresh,
    );
    assert!(!view.sees(id(4)) && !view.sees(fresh) && view.sees(id(3)));
    // A tool by bundle, slug and version.
    same(
        view.get_tool(id(4), "lookup", "1").unwrap_err().to_string(),
        view.get_tool(fresh, "lookup", "1").unwrap_err().to_string(),
        id(4),
        fresh,
    );
    // A tool by id.
    let theirs = c
        .view(&Viewer::Operator)
        .get_tool(id(4), "lookup", "1")
        .unwrap()
        .id;
    same(
        view.tool(theirs).unwrap_err().to_string(),
        view.tool(fresh).unwrap_err().to_string(),
        theirs,
        fresh,
    );
    assert!(view.tools_of(&[theirs]).unwrap().is_empty());
    let own = view.get_tool(id(3), "lookup", "1").unwrap().id;
    assert_eq!(view.tools_of(&[theirs, own]).unwrap().len(), 1);
}

#[test]
fn a_view_s_identity_depends_on_its_tools_only() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (with_b, a1, b) = world(d1.path(), true);
    let (without_b, a2, _) = world(d2.path(), false);
    let b = b.unwrap();
    // Two catalogs in which A can call the same tools (ids differ, digests do not).
    let id_with = with_b.view(&Viewer::Tenant(a1)).identity();
    let id_without = without_b.view(&Viewer::Tenant(a2)).identity();
    assert_eq!(id_with, id_without);
    assert_ne!(with_b.identity(), without_b.identity());
    assert_ne!(id_with, with_b.view(&Viewer::Tenant(b)).identity());
    // A change B makes leaves A's identity; one in A's view moves it.
    with_b
        .put_tool(id(4), "more", "1", &http_put("bravo_more"))
        .unwrap();
    assert_eq!(with_b.view(&Viewer::Tenant(a1)).identity(), id_with);
    with_b.patch_tool(id(3), "lookup", "1", false).unwrap();
    assert_ne!(with_b.view(&Viewer::Tenant(a1)).identity(), id_with);
    // The operator's view is the catalog's.
    assert_eq!(with_b.view(&Viewer::Operator).identity(), with_b.identity());
}

#[test]
fn a_tenant_writes_its_own_bundles_only_and_nothing_is_written_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let (c, a, b) = world(dir.path(), true);
    let b = b.unwrap();
    let va = c.view(&Viewer::Tenant(a));
    // A new bundle is A's; B may have the same slug.
    let mine = Uuid::now_v7();
    let made = va.put_bundle(mine, &BundlePut::new("mail")).unwrap();
    assert_eq!(made.owner, Some(a));
    c.view(&Viewer::Tenant(b))
        .put_bundle(Uuid::now_v7(), &BundlePut::new("mail"))
        .unwrap();
    assert!(matches!(
        va.put_bundle(Uuid::now_v7(), &BundlePut::new("mail")),
        Err(Error::SlugTaken { .. })
    ));
    va.put_tool(mine, "send", "1", &http_put("alpha_send"))
        .unwrap();
    va.patch_tool(mine, "send", "1", false).unwrap();
    va.delete_tool(mine, "send", "1").unwrap();

    let generation = c.generation();
    let fresh = Uuid::now_v7();
    let not_found = |e: Error, id: Uuid| {
        assert!(
            matches!(e, Error::BundleNotFound { bundle } if bundle == id),
            "{e}"
        );
    };
    // B's bundle and the operator's are as missing ones: every write.
    for theirs in [id(4), id(1)] {
        not_found(
            va.put_bundle(theirs, &BundlePut::new("x")).unwrap_err(),
            theirs,
        );
        not_found(va.patch_bundle(theirs, false).unwrap_err(), theirs);
        not_found(va.delete_bundle(theirs).unwrap_err(), theirs);
        not_found(va.restore_bundle(theirs).unwrap_err(), theirs);
        not_found(
            va.put_tool(theirs, "t", "9", &http_put("alpha_t"))
                .unwrap_err(),
            theirs,
        );
        not_found(
            va.put_tools(theirs, [("t", "9", http_put("alpha_t"))])
                .unwrap_err(),
            theirs,
        );
        not_found(
            va.patch_tool(theirs, "lookup", "1", false).unwrap_err(),
            theirs,
        );
        not_found(va.delete_tool(theirs, "lookup", "1").unwrap_err(), theirs);
    }
    not_found(va.patch_bundle(fresh, false).unwrap_err(), fresh);
    // The shared bundle is read by A, written by its owner only.
    assert!(matches!(
        va.put_tool(id(2), "t", "9", &http_put("alpha_t")),
        Err(Error::NotOwner { .. })
    ));
    assert!(matches!(
        va.delete_bundle(id(2)),
        Err(Error::NotOwner { .. })
    ));
    // The public writes nothing.
    assert!(matches!(
        c.view(&Viewer::Public)
            .put_bundle(fresh, &BundlePut::new("p")),
        Err(Error::NotOwner { .. })
    ));
    assert_eq!(c.generation(), generation);
    assert_eq!(c.bundle(id(4)).unwrap().slug, "crm-b");
}

#[test]
fn a_tenant_s_limits_hold_for_bundles_tools_and_batches() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    let limits = TenantLimits {
        max_tools: 3,
        max_bundles: 1,
        ..TenantLimits::default()
    };
    let (t, _) = c.add_tenant("small", limits).unwrap();
    let v = c.view(&Viewer::Tenant(t.id));
    let one = Uuid::now_v7();
    v.put_bundle(one, &BundlePut::new("one")).unwrap();
    let err = v
        .put_bundle(Uuid::now_v7(), &BundlePut::new("two"))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::TenantLimit {
                what: "bundles",
                limit: 1,
                held: 1,
                adding: 1
            }
        ),
        "{err}"
    );
    v.put_tool(one, "a", "1", &http_put("small_a")).unwrap();
    let generation = c.generation();
    // A batch past the limit by one writes none of it.
    let err = v
        .put_tools(
            one,
            [
                ("b", "1", http_put("small_b")),
                ("c", "1", http_put("small_c")),
                ("d", "1", http_put("small_d")),
            ],
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::TenantLimit {
                what: "tools",
                limit: 3,
                held: 1,
                adding: 3
            }
        ),
        "{err}"
    );
    assert_eq!(c.generation(), generation);
    v.put_tools(
        one,
        [
            ("b", "1", http_put("small_b")),
            ("c", "1", http_put("small_c")),
        ],
    )
    .unwrap();
    assert!(matches!(
        v.put_tool(one, "d", "1", &http_put("small_d")),
        Err(Error::TenantLimit { .. })
    ));
    // A deleted bundle frees its place; restoring it counts it again.
    v.delete_bundle(one).unwrap();
    let other = Uuid::now_v7();
    v.put_bundle(other, &BundlePut::new("two")).unwrap();
    assert!(matches!(
        v.restore_bundle(one),
        Err(Error::TenantLimit { .. })
    ));
    // The operator is not limited, and can raise the limits.
    c.put_tool(other, "x", "1", &http_put("op_x")).unwrap();
    c.set_tenant_limits(
        t.id,
        TenantLimits {
            max_bundles: 2,
            max_tools: 10,
            ..limits
        },
    )
    .unwrap();
    v.restore_bundle(one).unwrap();
}

#[test]
fn racing_writers_of_one_tenant_never_pass_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    let limits = TenantLimits {
        max_tools: 10,
        ..TenantLimits::default()
    };
    let (t, _) = c.add_tenant("racer", limits).unwrap();
    let bundle = Uuid::now_v7();
    c.view(&Viewer::Tenant(t.id))
        .put_bundle(bundle, &BundlePut::new("race"))
        .unwrap();
    // Eight catalogs on one store (as eight processes), each putting four tools.
    let catalogs: Vec<Catalog> = (0..8).map(|_| open(dir.path())).collect();
    let written: usize = std::thread::scope(|s| {
        let handles: Vec<_> = catalogs
            .iter()
            .enumerate()
            .map(|(w, cat)| {
                s.spawn(move || {
                    let v = cat.view(&Viewer::Tenant(t.id));
                    (0..4)
                        .filter(|i| {
                            let name = format!("racer_{w}_{i}");
                            v.put_tool(bundle, &format!("t-{w}-{i}"), "1", &http_put(&name))
                                .is_ok()
                        })
                        .count()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(written, 10);
    let fresh = open(dir.path());
    let held = fresh
        .heads()
        .iter()
        .filter(|h| h.bundle_id == bundle)
        .count();
    assert_eq!(held, 10);
}

#[test]
fn a_tenant_sees_the_call_counts_of_its_own_tools_only() {
    let dir = tempfile::tempdir().unwrap();
    let (c, a, b) = world(dir.path(), true);
    let b = b.unwrap();
    let op = c.view(&Viewer::Operator);
    let shared = op.get_tool(id(2), "ping", "1").unwrap().id;
    let own = op.get_tool(id(3), "lookup", "1").unwrap().id;
    let now = chrono::Utc::now();
    for _ in 0..11 {
        c.record_call(shared, now).unwrap();
    }
    c.record_call(own, now).unwrap();
    assert_eq!(c.tool(shared).unwrap().usage.call_count, 11);
    let va = c.view(&Viewer::Tenant(a));
    assert_eq!(va.tool(own).unwrap().usage.call_count, 1);
    assert_eq!(va.tool(shared).unwrap().usage.call_count, 0);
    let vb = c.view(&Viewer::Tenant(b));
    assert_eq!(vb.tool(shared).unwrap().usage.call_count, 0);
    let listed = vb.list_tools(&ToolQuery::default()).unwrap();
    assert!(listed.items.iter().all(|t| t.usage.call_count == 0));
    assert!(
        va.tools_of(&[shared]).unwrap()[0]
            .usage
            .last_called_at
            .is_none()
    );
}

#[test]
fn a_tenant_s_import_keeps_only_its_own_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (c, a, b) = world(dir.path(), true);
    let b = b.unwrap();
    let va = c.view(&Viewer::Tenant(a));
    // B's bundle, exported by the operator, imported by A: a new bundle of A's, with
    // fresh ids; B's is untouched.
    let mut theirs = std::io::Cursor::new(Vec::new());
    c.export_bundle(id(4), &mut theirs).unwrap();
    let b_tool = c.get_tool(id(4), "lookup", "1").unwrap().id;
    let imported = va
        .import_bundle(std::io::Cursor::new(theirs.into_inner()))
        .unwrap();
    assert!(imported.created);
    assert_ne!(imported.bundle.id, id(4));
    assert_eq!(imported.bundle.owner, Some(a));
    assert!(imported.tools.iter().all(|t| t.id != b_tool));
    assert_eq!(c.bundle(id(4)).unwrap().owner, Some(b));
    assert_eq!(c.get_tool(id(4), "lookup", "1").unwrap().id, b_tool);
    // Its own bundle, exported and imported again: nothing new, the same bundle.
    let mut own = std::io::Cursor::new(Vec::new());
    c.export_bundle(id(3), &mut own).unwrap();
    let again = va
        .import_bundle(std::io::Cursor::new(own.into_inner()))
        .unwrap();
    assert!(!again.created);
    assert_eq!(again.bundle.id, id(3));
    assert_eq!((again.tools.len(), again.unchanged), (0, 1));
    // The public imports nothing.
    let mut any = std::io::Cursor::new(Vec::new());
    c.export_bundle(id(3), &mut any).unwrap();
    assert!(matches!(
        c.view(&Viewer::Public)
            .import_bundle(std::io::Cursor::new(any.into_inner())),
        Err(Error::NotOwner { .. })
    ));
}

#[test]
fn a_tenant_s_import_counts_against_its_limits() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _, b) = world(dir.path(), true);
    let b = b.unwrap();
    let (small, _) = c
        .add_tenant(
            "small",
            TenantLimits {
                max_bundles: 5,
                max_tools: 0,
                ..TenantLimits::default()
            },
        )
        .unwrap();
    let mut theirs = std::io::Cursor::new(Vec::new());
    c.export_bundle(id(4), &mut theirs).unwrap();
    let generation = c.generation();
    let err = c
        .view(&Viewer::Tenant(small.id))
        .import_bundle(std::io::Cursor::new(theirs.into_inner()))
        .unwrap_err();
    assert!(
        matches!(err, Error::TenantLimit { what: "tools", .. }),
        "{err}"
    );
    assert_eq!(c.generation(), generation);
    let _ = b;
}
