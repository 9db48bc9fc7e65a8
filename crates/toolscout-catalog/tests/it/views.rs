//! The catalog as each viewer sees it: what is outside a view answers as what does not
//! exist.

use toolscout_catalog::{
    BundlePut, BundleQuery, Catalog, TenantId, TenantLimits, ToolQuery, Viewer, scope_of,
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
