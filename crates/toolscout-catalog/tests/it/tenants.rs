//! Tenants, their tokens, and bundles' owners, on both stores.

use std::sync::{Arc, Mutex};

use toolscout_catalog::{BundlePut, CatalogEvent, Error, TenantLimits};

use crate::{files_only, id, open_bare};

#[test]
fn a_token_signs_in_until_it_is_revoked_here_and_in_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let a = open_bare(dir.path());
    let (acme, first) = a.add_tenant("acme", TenantLimits::default()).unwrap();
    assert!(first.reveal().starts_with("tsk_"));
    assert_eq!(first.reveal().len(), 4 + 64);
    assert!(first.reveal().starts_with(&first.info().prefix));
    let second = a.add_token(acme.id, "ci").unwrap();
    assert_ne!(first.reveal(), second.reveal());
    let who = a.authenticate(second.reveal()).unwrap();
    assert_eq!(
        (who.tenant, who.name.as_str(), who.token),
        (acme.id, "acme", second.info().id)
    );

    // Another process reads the tenant, and hears of the revocation.
    let b = open_bare(dir.path());
    assert_eq!(b.authenticate(first.reveal()).unwrap().tenant, acme.id);
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    b.subscribe(move |c| sink.lock().unwrap().extend(c.events.clone()));

    let revoked = a.revoke_token(first.info().id).unwrap();
    assert!(revoked.revoked_at.is_some());
    assert!(a.authenticate(first.reveal()).is_none());
    assert!(a.authenticate(second.reveal()).is_some());
    b.reload().unwrap();
    assert!(b.authenticate(first.reveal()).is_none());
    assert!(b.authenticate(second.reveal()).is_some());
    assert_eq!(
        *heard.lock().unwrap(),
        [CatalogEvent::TokenRevoked {
            tenant: acme.id,
            token: first.info().id
        }]
    );
    // Again: nothing changes, nothing is announced.
    let generation = a.generation();
    a.revoke_token(first.info().id).unwrap();
    assert_eq!(a.generation(), generation);
    assert!(matches!(
        a.revoke_token(id(99)),
        Err(Error::TokenNotFound { .. })
    ));
}

#[test]
fn what_is_not_a_live_token_is_refused_alike() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let (t, token) = c.add_tenant("acme", TenantLimits::default()).unwrap();
    let text = token.reveal().to_owned();
    let mut flipped = text.clone();
    flipped.pop();
    flipped.push(if text.ends_with('0') { '1' } else { '0' });
    for bad in [
        "",
        "tsk_",
        &flipped,
        &text[4..],
        &format!("{text} "),
        &text.to_uppercase(),
        &"tsk_0".repeat(100),
    ] {
        assert!(c.authenticate(bad).is_none(), "{bad:?}");
    }
    // A removed tenant's tokens are dead, and its name is free again, for a new id.
    let removed = c.remove_tenant(t.id).unwrap();
    assert!(removed.removed_at.is_some());
    assert!(removed.tokens.iter().all(|k| k.revoked_at.is_some()));
    assert!(c.authenticate(&text).is_none());
    assert!(!c.has_tenants());
    let (again, _) = c.add_tenant("acme", TenantLimits::default()).unwrap();
    assert_ne!(again.id, t.id);
    assert_eq!(c.tenant("acme").unwrap().id, again.id);
    assert_eq!(
        c.tenant(&t.id.to_string()).unwrap().removed_at,
        removed.removed_at
    );
    assert!(matches!(
        c.add_tenant("acme", TenantLimits::default()),
        Err(Error::TenantExists { .. })
    ));
    assert!(matches!(
        c.add_token(t.id, "x"),
        Err(Error::TenantNotFound { .. })
    ));
}

#[test]
fn bad_tenant_names_are_clear_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let generation = c.generation();
    for bad in [
        "",
        ".",
        "..",
        "../x",
        "a/b",
        "UPPER",
        "a b",
        "admin",
        &"x".repeat(64),
    ] {
        let err = c.add_tenant(bad, TenantLimits::default()).unwrap_err();
        assert!(matches!(err, Error::TenantName { .. }), "{bad:?}: {err}");
        assert!(err.to_string().contains("tenant name"), "{err}");
    }
    assert!(c.add_token(id(1), &"x".repeat(101)).is_err());
    assert_eq!(c.generation(), generation);
    assert!(c.tenants().is_empty());
    assert!(!dir.path().join("tenants.json").exists());
}

#[test]
fn limits_change_and_last_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let (t, token) = c.add_tenant("acme", TenantLimits::default()).unwrap();
    let limits = TenantLimits {
        max_tools: 5,
        max_bundles: 1,
        requests_per_second: 2,
        burst: 3,
    };
    c.set_tenant_limits(t.id, limits).unwrap();
    assert_eq!(c.authenticate(token.reveal()).unwrap().limits, limits);
    drop(c);
    let c = open_bare(dir.path());
    assert_eq!(c.tenant("acme").unwrap().limits, limits);
    assert_eq!(c.authenticate(token.reveal()).unwrap().limits, limits);
}

#[test]
fn the_token_text_is_kept_nowhere_and_the_file_is_private() {
    files_only!();
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let (_, token) = c.add_tenant("acme", TenantLimits::default()).unwrap();
    let secret = &token.reveal()[4..];
    for entry in walk(dir.path()) {
        let bytes = std::fs::read(&entry).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(secret),
            "{} holds the token",
            entry.display()
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("tenants.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(!format!("{token:?}").contains(secret));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn slugs_are_unique_per_owner_among_live_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let (a, _) = c.add_tenant("a", TenantLimits::default()).unwrap();
    let (b, _) = c.add_tenant("b", TenantLimits::default()).unwrap();
    c.put_bundle(id(1), &BundlePut::new("crm")).unwrap();
    // The operator cannot have two live `crm`s…
    let err = c.put_bundle(id(2), &BundlePut::new("crm")).unwrap_err();
    assert!(
        matches!(&err, Error::SlugTaken { slug, bundle } if slug == "crm" && *bundle == id(1)),
        "{err}"
    );
    // …but each tenant may have one.
    c.put_bundle(id(2), &BundlePut::new("crm-a")).unwrap();
    c.put_bundle(id(3), &BundlePut::new("crm-b")).unwrap();
    c.set_bundle_owner(id(2), Some(a.id)).unwrap();
    c.set_bundle_owner(id(3), Some(b.id)).unwrap();
    c.put_bundle(id(2), &BundlePut::new("crm")).unwrap();
    c.put_bundle(id(3), &BundlePut::new("crm")).unwrap();
    // A re-PUT keeps the owner.
    assert_eq!(c.bundle(id(2)).unwrap().owner, Some(a.id));
    // Giving `a`'s crm to `b`, which has one, is refused.
    let generation = c.generation();
    assert!(matches!(
        c.set_bundle_owner(id(2), Some(b.id)),
        Err(Error::SlugTaken { .. })
    ));
    assert_eq!(c.generation(), generation);
    // A deleted bundle frees its slug; restoring it while the slug is taken is refused.
    c.delete_bundle(id(1)).unwrap();
    c.put_bundle(id(4), &BundlePut::new("crm")).unwrap();
    assert!(matches!(
        c.restore_bundle(id(1)),
        Err(Error::SlugTaken { .. })
    ));
    // Built-ins have no owner to change; a missing tenant is refused.
    assert!(matches!(
        c.set_bundle_owner(id(4), Some(id(77))),
        Err(Error::TenantNotFound { .. })
    ));
}

#[test]
fn owners_and_sharing_last_and_are_announced_to_other_processes() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let (a, _) = c.add_tenant("a", TenantLimits::default()).unwrap();
    c.put_bundle(id(1), &BundlePut::new("crm")).unwrap();
    let other = open_bare(dir.path());
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    other.subscribe(move |ch| sink.lock().unwrap().extend(ch.events.clone()));
    c.set_bundle_owner(id(1), Some(a.id)).unwrap();
    c.set_bundle_shared(id(1), true).unwrap();
    other.reload().unwrap();
    let b = other.bundle(id(1)).unwrap();
    assert_eq!((b.owner, b.shared), (Some(a.id), true));
    assert!(
        heard
            .lock()
            .unwrap()
            .contains(&CatalogEvent::BundlePut { bundle: id(1) })
    );
    drop((c, other));
    let c = open_bare(dir.path());
    let b = c.bundle(id(1)).unwrap();
    assert_eq!((b.owner, b.shared), (Some(a.id), true));
    c.set_bundle_owner(id(1), None).unwrap();
    c.set_bundle_shared(id(1), false).unwrap();
    let b = open_bare(dir.path()).bundle(id(1)).unwrap();
    assert_eq!((b.owner, b.shared), (None, false));
}

#[test]
fn limits_that_refuse_everything_and_bad_labels_are_refused_before_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let zero_rate = TenantLimits {
        requests_per_second: 0,
        ..TenantLimits::default()
    };
    let err = c.add_tenant("acme", zero_rate).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid tenant limits: requestsPerSecond must be at least 1"
    );
    assert!(c.tenants().is_empty());
    let (t, _) = c.add_tenant("acme", TenantLimits::default()).unwrap();
    let generation = c.generation();
    let zero_burst = TenantLimits {
        burst: 0,
        ..TenantLimits::default()
    };
    assert!(matches!(
        c.set_tenant_limits(t.id, zero_burst),
        Err(Error::Invalid { .. })
    ));
    let err = c.add_token(t.id, "a\nb").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid token label: 3 characters, with a control character; a label has at most 100 and no control characters"
    );
    assert!(c.add_token(t.id, &"x".repeat(101)).is_err());
    assert_eq!(c.generation(), generation);
}
