//! `GET /api/v1/events` per view: a tenant's stream (and the public one) tells only what
//! moved in its view, counted in its view, numbered on its own; the operator's is as it
//! was.

use std::time::Duration;

use serde_json::json;
use toolscout_catalog::{TenantLimits, Viewer};
use toolscout_server::ServerOptions;

use super::OPERATOR;
use super::two::Two;
use crate::events::{Reader, Sse, names};
use crate::socket::spawn;

/// The epoch and sequence number of a view's event id, `<epoch>.<seq>`.
fn epoch_seq(e: &Sse) -> (String, u64) {
    let id = e.id.as_deref().unwrap();
    let (epoch, seq) = id.rsplit_once('.').unwrap();
    assert_eq!(epoch.len(), 16, "{id}");
    (epoch.to_owned(), seq.parse().unwrap())
}

/// No event but heartbeats for a while: `stream` has heard nothing of what happened.
async fn quiet(stream: &mut Reader) {
    match stream.next_within(Duration::from_millis(400)).await {
        Err(()) => {}
        Ok(got) => panic!("expected nothing, got {got:?}"),
    }
}

#[tokio::test]
async fn a_tenants_stream_tells_only_what_moved_in_its_view() {
    let w = Two::start(ServerOptions::default()).await;
    let catalog = w.catalog();
    let identity = |v: &Viewer| catalog.view(v).identity();
    let mut bravo_identities = vec![identity(&w.bravo.viewer())];
    let mut alpha = Reader::open_with(&w.url, None, Some(&w.alpha.token)).await;
    let mut operator = Reader::open_with(&w.url, None, Some(OPERATOR)).await;

    let ready = alpha.next().await.unwrap();
    assert_eq!(ready.event, "ready");
    let (epoch, seq) = epoch_seq(&ready);
    assert_eq!(seq, 0);
    assert_eq!(
        ready.data,
        json!({"seq": 0, "identity": identity(&w.alpha.viewer())})
    );
    assert_ne!(identity(&w.alpha.viewer()), identity(&w.bravo.viewer()));
    // The operator's stream is as it was: the catalog's generation and identity.
    let ready = operator.next().await.unwrap();
    assert_eq!(ready.id, Some(catalog.generation().to_string()));
    assert_eq!(
        ready.data,
        json!({"generation": catalog.generation(), "identity": catalog.identity()})
    );

    // Bravo adds a tool, then replaces its `crm_lookup_customer`, a name alpha holds too:
    // the operator hears of both, alpha of neither.
    w.put(
        &w.bravo,
        "invoice",
        "1",
        "bravo_invoice",
        "Bravo's invoices",
    );
    bravo_identities.push(identity(&w.bravo.viewer()));
    let e = operator.next().await.unwrap();
    assert_eq!(names(&e, "added"), ["bravo_invoice"]);
    w.put(
        &w.bravo,
        "lookup-customer",
        "2",
        "crm_lookup_customer",
        "Find a customer, faster (bravomark)",
    );
    bravo_identities.push(identity(&w.bravo.viewer()));
    let e = operator.next().await.unwrap();
    assert_eq!(names(&e, "changed"), ["crm_lookup_customer"]);
    // Bravo's whole bundle goes off: in alpha's view, nothing moved.
    catalog
        .view(&w.bravo.viewer())
        .patch_bundle(w.bravo.crm, false)
        .unwrap();
    let e = operator.next().await.unwrap();
    assert_eq!(names(&e, "disabled"), ["bravo_crm_lookup", "bravo_invoice"]);

    // Alpha's own write: its stream's next event, numbered 1 in its view.
    w.put(
        &w.alpha,
        "invoice",
        "1",
        "alpha_invoice",
        "Alpha's invoices",
    );
    let e = alpha.next().await.unwrap();
    assert_eq!(e.event, "change");
    assert_eq!(epoch_seq(&e), (epoch.clone(), 1));
    assert_eq!(
        e.data,
        json!({
            "seq": 1, "identity": identity(&w.alpha.viewer()),
            "added": ["alpha_invoice"], "removed": [], "enabled": [], "disabled": [], "changed": []
        })
    );
    // The operator shares its `weather` bundle: now in every view.
    catalog.set_bundle_shared(w.f.weather, true).unwrap();
    let e = alpha.next().await.unwrap();
    assert_eq!(epoch_seq(&e), (epoch.clone(), 2));
    assert_eq!(names(&e, "added"), ["get_forecast", "spawn_agent"]);
    // A tenant the operator adds moves nothing in alpha's view (the operator's stream
    // hears of it: its generation moved).
    catalog
        .add_tenant("charlie", TenantLimits::default())
        .unwrap();
    quiet(&mut alpha).await;

    for text in [&alpha.raw] {
        assert!(!text.contains("bravo"), "{text}");
        assert!(!text.contains(&w.bravo.crm.to_string()), "{text}");
        for id in &bravo_identities {
            assert!(!text.contains(&id.to_string()), "{text}");
        }
    }
    assert!(operator.raw.contains("bravo_invoice"));
}

#[tokio::test]
async fn a_view_resumes_after_its_own_ids_and_resets_on_any_other() {
    let w = Two::start(ServerOptions::default()).await;
    let mut alpha = Reader::open_with(&w.url, None, Some(&w.alpha.token)).await;
    let (epoch, _) = epoch_seq(&alpha.next().await.unwrap());
    w.put(&w.alpha, "one", "1", "alpha_one", "One");
    assert_eq!(epoch_seq(&alpha.next().await.unwrap()).1, 1);
    drop(alpha);
    // While away: a write of its own, and bravo's.
    w.put(&w.alpha, "two", "1", "alpha_two", "Two");
    w.put(&w.bravo, "two", "1", "bravo_two", "Two");
    let started = std::time::Instant::now();
    let mut resumed =
        Reader::open_with(&w.url, Some(&format!("{epoch}.1")), Some(&w.alpha.token)).await;
    let e = loop {
        // The feed thread may not have read the write yet.
        let e = resumed.next().await.unwrap();
        if e.event == "change" {
            break e;
        }
        assert!(started.elapsed() < Duration::from_secs(5));
    };
    assert_eq!(epoch_seq(&e), (epoch.clone(), 2));
    assert_eq!(names(&e, "added"), ["alpha_two"]);
    // An id of another epoch, of the operator's stream, or from the future: start again.
    for last in [
        "0123456789abcdef.1".to_owned(),
        "12".to_owned(),
        format!("{epoch}.99"),
        "garbage".to_owned(),
    ] {
        let mut stream = Reader::open_with(&w.url, Some(&last), Some(&w.alpha.token)).await;
        let reset = stream.next().await.unwrap();
        assert_eq!(reset.event, "reset", "{last}");
        assert_eq!(epoch_seq(&reset), (epoch.clone(), 2), "{last}");
        assert_eq!(
            reset.data,
            json!({"seq": 2, "identity": w.catalog().view(&w.alpha.viewer()).identity()})
        );
    }
    // Bravo's view is numbered on its own: another epoch, and its own count.
    let mut bravo = Reader::open_with(&w.url, None, Some(&w.bravo.token)).await;
    let (bravo_epoch, seq) = epoch_seq(&bravo.next().await.unwrap());
    assert_ne!(bravo_epoch, epoch);
    assert_eq!(seq, 0);
}

#[tokio::test]
async fn the_public_stream_tells_of_shared_and_built_in_tools_only() {
    let w = Two::start(ServerOptions::default()).await;
    // No token once tenants exist: the public view.
    let mut public = Reader::open_with(&w.url, None, None).await;
    let ready = public.next().await.unwrap();
    assert_eq!(epoch_seq(&ready).1, 0);
    assert_eq!(
        ready.data["identity"],
        json!(w.catalog().view(&Viewer::Public).identity())
    );
    w.put(&w.alpha, "one", "1", "alpha_one", "One");
    w.catalog()
        .put_tool(w.f.weather, "sea", "1", &crate::events::sea_put())
        .unwrap();
    quiet(&mut public).await;
    w.catalog().set_bundle_shared(w.alpha.crm, true).unwrap();
    let e = public.next().await.unwrap();
    assert_eq!(
        names(&e, "added"),
        ["alpha_crm_lookup", "alpha_one", "crm_lookup_customer"]
    );
    // Bravo's `crm_lookup_customer` was never in the public view: a name is counted
    // among the view's tools only, so alpha's unsharing takes it out.
    w.catalog().set_bundle_shared(w.alpha.crm, false).unwrap();
    let e = public.next().await.unwrap();
    assert_eq!(
        names(&e, "removed"),
        ["alpha_crm_lookup", "alpha_one", "crm_lookup_customer"]
    );
    assert!(!public.raw.contains("bravo"));
    assert!(!public.raw.contains("sea_temperature"));
}

#[tokio::test]
async fn an_anonymous_stream_of_the_operators_view_ends_with_the_first_tenant() {
    let f = super::world(ServerOptions::default());
    let url = spawn(f.state.clone()).await;
    let mut before = Reader::open_with(&url, None, None).await;
    let ready = before.next().await.unwrap();
    // Before any tenant: the operator's view and stream, as before tenants existed.
    assert_eq!(
        ready.id,
        Some(f.state.toolbox().catalog().generation().to_string())
    );
    let started = std::time::Instant::now();
    f.state
        .toolbox()
        .catalog()
        .add_tenant("acme", TenantLimits::default())
        .unwrap();
    assert_eq!(before.next_within(Duration::from_secs(1)).await, Ok(None));
    assert!(started.elapsed() < Duration::from_secs(1));
    // Opened again: the public view's.
    let mut after = Reader::open_with(&url, None, None).await;
    assert_eq!(epoch_seq(&after.next().await.unwrap()).1, 0);
}
