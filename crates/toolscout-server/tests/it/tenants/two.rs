//! Two tenants on one server over a real socket: `alpha` and `bravo`, each with a
//! bundle slugged `crm`. Their tools' names are told apart by their first word, and both
//! hold a `crm_lookup_customer`, with a marker word in its description (`alphamark`,
//! `bravomark`).

use serde_json::json;
use toolscout_catalog::{BundlePut, Catalog, TenantLimits, ToolPut, Viewer};
use toolscout_server::ServerOptions;
use toolscout_spec::ToolSpec;
use uuid::Uuid;

use super::world;
use crate::Fixture;
use crate::socket::spawn;

/// One tenant of a [`Two`].
pub(super) struct Party {
    pub(super) id: Uuid,
    pub(super) token: String,
    /// Its bundle `crm`.
    pub(super) crm: Uuid,
}

impl Party {
    pub(super) fn viewer(&self) -> Viewer {
        Viewer::Tenant(self.id)
    }
}

/// A server with `OPERATOR` as its token, the fixture's catalog (the built-ins, the
/// operator's unshared `weather`), and two tenants.
pub(super) struct Two {
    pub(super) f: Fixture,
    pub(super) url: String,
    pub(super) alpha: Party,
    pub(super) bravo: Party,
}

impl Two {
    pub(super) async fn start(options: ServerOptions) -> Two {
        let f = world(options);
        let catalog = f.state.toolbox().catalog();
        let alpha = party(catalog, "alpha");
        let bravo = party(catalog, "bravo");
        let url = spawn(f.state.clone()).await;
        Two {
            f,
            url,
            alpha,
            bravo,
        }
    }

    pub(super) fn catalog(&self) -> &Catalog {
        self.f.state.toolbox().catalog()
    }

    /// `party` puts a callable tool `name` in its `crm` bundle.
    pub(super) fn put(&self, party: &Party, slug: &str, version: &str, name: &str, about: &str) {
        self.catalog()
            .view(&party.viewer())
            .put_tool(party.crm, slug, version, &http(name, about))
            .unwrap();
    }
}

/// A tenant `name` with a bundle `crm` of two tools: `<name>_crm_lookup` and
/// `crm_lookup_customer` (`<name>mark` in its description).
fn party(catalog: &Catalog, name: &str) -> Party {
    let (tenant, token) = catalog.add_tenant(name, TenantLimits::default()).unwrap();
    let view = catalog.view(&Viewer::Tenant(tenant.id));
    let crm = Uuid::now_v7();
    view.put_bundle(crm, &BundlePut::new("crm")).unwrap();
    let tools = [
        (
            "lookup",
            format!("{name}_crm_lookup"),
            format!("Look a record up in the {name} CRM"),
        ),
        (
            "lookup-customer",
            "crm_lookup_customer".to_owned(),
            format!("Find a customer by name ({name}mark)"),
        ),
    ];
    for (slug, tool, about) in tools {
        view.put_tool(crm, slug, "1", &http(&tool, &about)).unwrap();
    }
    Party {
        id: tenant.id,
        token: token.reveal().to_owned(),
        crm,
    }
}

/// A callable HTTP tool.
pub(super) fn http(name: &str, about: &str) -> ToolPut {
    let spec = ToolSpec::builder(name, about)
        .description(format!("{about}."))
        .parameters(json!({"type": "object", "properties": {"q": {"type": "string"}}}))
        .build()
        .unwrap();
    ToolPut::http(
        spec,
        json!({"method": "GET", "urlTemplate": "https://api.example.com/crm"}),
    )
}
