//! `toolscout tenant add|list|show|limits|token add|token revoke|remove`: the teams that
//! share one catalog, their limits and their bearer tokens.
//!
//! A token's text is printed once, by the command that makes it (`tenant add`, `tenant
//! token add`); the catalog keeps only its digest, so no later command can print it.

use anyhow::{Result, anyhow, bail};
use chrono::{DateTime, Utc};
use clap::Subcommand;
use serde_json::{Value, json};
use toolscout_catalog::{
    Bundle, Catalog, NewToken, TOKEN_PREFIX, Tenant, TenantLimits, TokenInfo, check_tenant_name,
};
use uuid::Uuid;

use super::context::{Context, Global};
use super::list::{all_bundles, display_name};

/// Arguments of `tenant`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Add a tenant and print its first token, once: the catalog keeps only the token's
    /// digest, so it cannot be shown again.
    Add {
        /// The tenant's name: 1–63 of a-z, 0-9 and '-', not starting or ending with '-'
        /// (`admin`, `operator`, `public` and `built-in` are reserved).
        name: String,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// List the tenants (removed ones too): name, id, state, live/total tokens, limits.
    List,
    /// Show a tenant (name or id): its limits, its bundles and its tokens (id, prefix,
    /// label, created, revoked); never a token's text.
    Show {
        /// Name or id.
        tenant: String,
    },
    /// Change a tenant's limits (the flags given; the others stay); without a flag,
    /// print them. They hold from the next request and write.
    Limits {
        /// Name or id.
        tenant: String,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Add or revoke a tenant's tokens.
    Token(TokenArgs),
    /// Remove a tenant: every token of it is revoked at once; its bundles stay, seen by
    /// the operator only (`bundle owner` gives them to someone else). Asks nothing.
    Remove {
        /// Name or id.
        tenant: String,
    },
}

/// Arguments of `tenant token`.
#[derive(Debug, clap::Args)]
struct TokenArgs {
    #[command(subcommand)]
    what: TokenWhat,
}

#[derive(Debug, Subcommand)]
enum TokenWhat {
    /// Make another token for a tenant and print it, once: it cannot be shown again.
    Add {
        /// Name or id.
        tenant: String,
        /// What the token is for, e.g. `ci` (up to 100 characters).
        #[arg(long, default_value = "")]
        label: String,
    },
    /// Revoke a token: servers refuse it from their next request.
    Revoke {
        /// The token's id (`tenant show` lists them), or its prefix (`tsk_` and 8 hex
        /// digits) when that names one live token.
        token: String,
    },
}

/// A tenant's limits on the command line: each flag given replaces that limit.
#[derive(Debug, Clone, Copy, clap::Args)]
struct LimitArgs {
    /// The most tool versions its bundles may hold (a new tenant: 10000).
    #[arg(long, value_name = "N")]
    max_tools: Option<u32>,
    /// The most bundles it may own (a new tenant: 100).
    #[arg(long, value_name = "N")]
    max_bundles: Option<u32>,
    /// Requests a second a server admits from it, all its tokens together, on average
    /// (a new tenant: 50).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    rate: Option<u32>,
    /// Requests it may send at once after a quiet spell (a new tenant: 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    burst: Option<u32>,
}

impl LimitArgs {
    fn is_empty(&self) -> bool {
        self.max_tools.is_none()
            && self.max_bundles.is_none()
            && self.rate.is_none()
            && self.burst.is_none()
    }

    /// `base` with the limits given here.
    fn apply(&self, base: TenantLimits) -> TenantLimits {
        TenantLimits {
            max_tools: self.max_tools.unwrap_or(base.max_tools),
            max_bundles: self.max_bundles.unwrap_or(base.max_bundles),
            requests_per_second: self.rate.unwrap_or(base.requests_per_second),
            burst: self.burst.unwrap_or(base.burst),
        }
    }
}

pub(crate) fn run(args: &Args, global: &Global, json_out: bool) -> Result<()> {
    // A bad name is refused before the catalog is opened: nothing is written, not even
    // a new catalog directory.
    if let What::Add { name, .. } = &args.what {
        check_tenant_name(name)?;
    }
    let ctx = Context::open(global)?;
    let catalog = &ctx.catalog;
    match &args.what {
        What::Add { name, limits } => {
            let (tenant, token) = catalog
                .operator()
                .add_tenant(name, limits.apply(TenantLimits::default()))?;
            if json_out {
                return super::print_json(&json!({
                    "tenant": tenant,
                    "token": token_json(&token),
                }));
            }
            super::emit(format!("added tenant '{}' ({})", tenant.name, tenant.id))?;
            super::emit(format!("limits: {}", limits_text(&tenant.limits)))?;
            print_token(&token)
        }
        What::List => list(catalog, json_out),
        What::Show { tenant } => show(catalog, &find_tenant(catalog, tenant)?, json_out),
        What::Limits { tenant, limits } => {
            let t = find_tenant(catalog, tenant)?;
            let (t, what) = if limits.is_empty() {
                (t, "")
            } else {
                let new = limits.apply(t.limits);
                let changed = new != t.limits;
                let t = catalog.operator().set_tenant_limits(t.id, new)?;
                (t, if changed { "changed " } else { "unchanged " })
            };
            if json_out {
                return super::print_json(&json!(t));
            }
            super::emit(format!(
                "{what}limits of tenant '{}': {}",
                t.name,
                limits_text(&t.limits)
            ))
        }
        What::Token(TokenArgs {
            what: TokenWhat::Add { tenant, label },
        }) => {
            let t = find_tenant(catalog, tenant)?;
            if !t.is_live() {
                bail!(
                    "tenant '{}' ({}) was removed: it takes no tokens",
                    t.name,
                    t.id
                );
            }
            let token = catalog.operator().add_token(t.id, label)?;
            if json_out {
                return super::print_json(&json!({
                    "tenant": {"tenantID": t.id, "name": t.name},
                    "token": token_json(&token),
                }));
            }
            super::emit(format!("added a token to tenant '{}'", t.name))?;
            print_token(&token)
        }
        What::Token(TokenArgs {
            what: TokenWhat::Revoke { token },
        }) => revoke(catalog, token, json_out),
        What::Remove { tenant } => remove(catalog, tenant, json_out),
    }
}

/// The live tenant of this name, or the tenant of this id; else an error that names the
/// tenants there are.
pub(crate) fn find_tenant(catalog: &Catalog, key: &str) -> Result<Tenant> {
    if let Ok(t) = catalog.tenant(key) {
        return Ok(t);
    }
    let names: Vec<String> = catalog
        .tenants()
        .into_iter()
        .filter(Tenant::is_live)
        .map(|t| t.name)
        .collect();
    let key: String = key.chars().take(80).collect();
    if names.is_empty() {
        bail!("no tenant '{key}': the catalog has none (add one with `toolscout tenant add NAME`)")
    }
    bail!(
        "no tenant '{key}'; the tenants are: {} (try `toolscout tenant list`)",
        names.join(", ")
    )
}

fn limits_text(l: &TenantLimits) -> String {
    format!(
        "{} tools, {} bundles, {} requests/s, burst {}",
        l.max_tools, l.max_bundles, l.requests_per_second, l.burst
    )
}

fn time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// A new token as JSON: what the catalog keeps of it, and its text (`text`).
fn token_json(token: &NewToken) -> Value {
    let mut v = json!(token.info());
    v["text"] = json!(token.reveal());
    v
}

/// The one time a token's text is printed.
fn print_token(token: &NewToken) -> Result<()> {
    let info = token.info();
    super::emit(format!("token: {}", token.reveal()))?;
    super::emit(format!(
        "token id {} (prefix {}{})",
        info.id,
        info.prefix,
        if info.label.is_empty() {
            String::new()
        } else {
            format!(", label {:?}", info.label)
        }
    ))?;
    super::emit(format!(
        "This token is shown once and cannot be shown again: give it to the tenant now. `toolscout tenant token revoke {}` revokes it.",
        info.prefix
    ))
}

/// Lines of a table, each column as wide as its widest cell (the last one unpadded).
fn table(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                if c + 1 == r.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:<width$}  ", width = widths[c]));
                }
            }
            line.trim_end().to_owned()
        })
        .collect()
}

fn list(catalog: &Catalog, json_out: bool) -> Result<()> {
    let tenants = catalog.tenants();
    if json_out {
        return super::print_json(&json!({ "tenants": tenants }));
    }
    if tenants.is_empty() {
        return super::emit("no tenants (add one with `toolscout tenant add NAME`)");
    }
    let mut rows = vec![
        [
            "NAME",
            "ID",
            "STATE",
            "TOKENS",
            "MAX TOOLS",
            "MAX BUNDLES",
            "RATE/S",
            "BURST",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for t in &tenants {
        let live = t.tokens.iter().filter(|k| k.is_live()).count();
        rows.push(vec![
            t.name.clone(),
            t.id.to_string(),
            if t.is_live() { "live" } else { "removed" }.to_owned(),
            format!("{live}/{}", t.tokens.len()),
            t.limits.max_tools.to_string(),
            t.limits.max_bundles.to_string(),
            t.limits.requests_per_second.to_string(),
            t.limits.burst.to_string(),
        ]);
    }
    for line in table(&rows) {
        super::emit(line)?;
    }
    Ok(())
}

/// The bundles `tenant` owns, deleted ones too.
fn owned_bundles(catalog: &Catalog, tenant: &Tenant) -> Result<Vec<Bundle>> {
    Ok(all_bundles(catalog)?
        .into_iter()
        .filter(|b| b.owner == Some(tenant.id))
        .collect())
}

fn show(catalog: &Catalog, t: &Tenant, json_out: bool) -> Result<()> {
    let bundles = owned_bundles(catalog, t)?;
    if json_out {
        let mut v = json!(t);
        v["bundles"] = bundles
            .iter()
            .map(|b| json!({"id": b.id, "slug": b.slug, "shared": b.shared, "deleted": b.soft_deleted_at.is_some()}))
            .collect();
        return super::print_json(&v);
    }
    let state = match t.removed_at {
        Some(at) => format!("removed {}", time(at)),
        None => "live".to_owned(),
    };
    super::emit(format!(
        "tenant '{}' ({}), {state}, created {}",
        t.name,
        t.id,
        time(t.created_at)
    ))?;
    super::emit(format!("limits: {}", limits_text(&t.limits)))?;
    let live_bundles = bundles
        .iter()
        .filter(|b| b.soft_deleted_at.is_none())
        .count();
    if bundles.is_empty() {
        super::emit("bundles: none")?;
    } else {
        let listed: Vec<String> = bundles
            .iter()
            .map(|b| {
                let mut marks = Vec::new();
                if b.shared {
                    marks.push("shared");
                }
                if b.soft_deleted_at.is_some() {
                    marks.push("deleted");
                }
                let marks = if marks.is_empty() {
                    String::new()
                } else {
                    format!(", {}", marks.join(", "))
                };
                format!("{} ({}{marks})", b.slug, b.id)
            })
            .collect();
        super::emit(format!(
            "bundles ({live_bundles} of at most {}): {}",
            t.limits.max_bundles,
            listed.join(", ")
        ))?;
    }
    let live = t.tokens.iter().filter(|k| k.is_live()).count();
    super::emit(format!("tokens ({live} live of {}):", t.tokens.len()))?;
    let mut rows = vec![
        ["ID", "PREFIX", "LABEL", "CREATED", "REVOKED"]
            .map(str::to_owned)
            .to_vec(),
    ];
    for k in &t.tokens {
        rows.push(vec![
            k.id.to_string(),
            k.prefix.clone(),
            if k.label.is_empty() {
                "-".to_owned()
            } else {
                k.label.clone()
            },
            time(k.created_at),
            k.revoked_at.map_or_else(|| "-".to_owned(), time),
        ]);
    }
    for line in table(&rows) {
        super::emit(format!("  {line}"))?;
    }
    Ok(())
}

/// Every token of every tenant, with its tenant.
fn all_tokens(catalog: &Catalog) -> Vec<(Tenant, TokenInfo)> {
    catalog
        .tenants()
        .into_iter()
        .flat_map(|t| {
            let tokens = t.tokens.clone();
            tokens.into_iter().map(move |k| (t.clone(), k))
        })
        .collect()
}

/// The token `key` names: an id, or a prefix (`tsk_…`) of one live token (of one token,
/// when none that matches is live).
fn find_token(catalog: &Catalog, key: &str) -> Result<(Tenant, TokenInfo)> {
    let tokens = all_tokens(catalog);
    // A whole token's text names its token exactly (it is never printed back).
    if let Some(who) = catalog.authenticate(key)
        && let Some(found) = tokens.iter().find(|(_, k)| k.id == who.token)
    {
        return Ok(found.clone());
    }
    if let Ok(id) = key.parse::<Uuid>() {
        return tokens
            .into_iter()
            .find(|(_, k)| k.id == id)
            .ok_or_else(|| {
                anyhow!("no token {id}: no tenant has a token of this id (`toolscout tenant show NAME` lists a tenant's tokens)")
            });
    }
    let shown: String = key.chars().take(80).collect();
    let Some(hex) = key.strip_prefix(TOKEN_PREFIX) else {
        bail!(
            "'{shown}' is neither a token id nor a token prefix ({TOKEN_PREFIX} and hex digits, as `toolscout tenant show NAME` lists them)"
        );
    };
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!(
            "'{shown}' is not a token prefix: {TOKEN_PREFIX} and hex digits, as `toolscout tenant show NAME` lists them"
        );
    }
    // A whole token's text (a revoked one's) is not printed back: its prefix is.
    let shown = if key.len() > TOKEN_PREFIX.len() + 8 {
        format!("{}…", &key[..TOKEN_PREFIX.len() + 8])
    } else {
        key.to_owned()
    };
    let matching: Vec<(Tenant, TokenInfo)> = tokens
        .into_iter()
        .filter(|(_, k)| k.prefix.starts_with(key) || key.starts_with(&k.prefix))
        .collect();
    let live: Vec<&(Tenant, TokenInfo)> = matching.iter().filter(|(_, k)| k.is_live()).collect();
    let candidates: Vec<&(Tenant, TokenInfo)> = if live.is_empty() {
        matching.iter().collect()
    } else {
        live
    };
    match candidates.as_slice() {
        [] => bail!(
            "no token has the prefix '{shown}' (`toolscout tenant show NAME` lists a tenant's tokens)"
        ),
        [one] => Ok((*one).clone()),
        many => {
            let lines: Vec<String> = many
                .iter()
                .map(|(t, k)| {
                    format!(
                        "  {}  {}  tenant '{}'{}{}",
                        k.id,
                        k.prefix,
                        t.name,
                        if k.label.is_empty() {
                            String::new()
                        } else {
                            format!(", label {:?}", k.label)
                        },
                        if k.is_live() { "" } else { ", revoked" }
                    )
                })
                .collect();
            bail!(
                "the prefix '{shown}' names {} tokens; revoke the one you mean by its id:\n{}",
                many.len(),
                lines.join("\n")
            )
        }
    }
}

fn revoke(catalog: &Catalog, key: &str, json_out: bool) -> Result<()> {
    let (tenant, token) = find_token(catalog, key)?;
    let was_live = token.is_live();
    let info = catalog.operator().revoke_token(token.id)?;
    if json_out {
        return super::print_json(&json!({
            "tenant": {"tenantID": tenant.id, "name": tenant.name},
            "token": info,
            "alreadyRevoked": !was_live,
        }));
    }
    let what = format!(
        "token {} ({}) of tenant '{}'",
        info.id,
        info.prefix,
        display_name(&tenant)
    );
    match (was_live, info.revoked_at) {
        (false, Some(at)) => super::emit(format!("{what} was already revoked, {}", time(at))),
        _ => super::emit(format!("revoked {what}")),
    }
}

fn remove(catalog: &Catalog, key: &str, json_out: bool) -> Result<()> {
    let t = find_tenant(catalog, key)?;
    if !t.is_live() {
        bail!("tenant '{}' ({}) is already removed", t.name, t.id);
    }
    let removed = catalog.operator().remove_tenant(t.id)?;
    // The tokens this removal revoked: live before, revoked now.
    let revoked: Vec<&TokenInfo> = removed
        .tokens
        .iter()
        .filter(|k| {
            t.tokens
                .iter()
                .any(|before| before.id == k.id && before.is_live())
        })
        .collect();
    let bundles: Vec<Bundle> = owned_bundles(catalog, &removed)?
        .into_iter()
        .filter(|b| b.soft_deleted_at.is_none())
        .collect();
    if json_out {
        return super::print_json(&json!({
            "tenant": removed,
            "revoked": revoked,
            "bundles": bundles.iter().map(|b| json!({"id": b.id, "slug": b.slug})).collect::<Vec<_>>(),
        }));
    }
    super::emit(format!(
        "removed tenant '{}' ({})",
        removed.name, removed.id
    ))?;
    if revoked.is_empty() {
        super::emit("it had no live token")?;
    } else {
        super::emit(format!("revoked {} token(s):", revoked.len()))?;
        for k in &revoked {
            super::emit(format!(
                "  {}  {}{}",
                k.id,
                k.prefix,
                if k.label.is_empty() {
                    String::new()
                } else {
                    format!("  {}", k.label)
                }
            ))?;
        }
    }
    if !bundles.is_empty() {
        let listed: Vec<String> = bundles
            .iter()
            .map(|b| format!("{} ({})", b.slug, b.id))
            .collect();
        super::emit(format!(
            "its {} bundle(s) stay, seen by the operator only: {} (`toolscout bundle owner BUNDLE TENANT|--operator` gives one away, `bundle delete` deletes it)",
            bundles.len(),
            listed.join(", ")
        ))?;
    }
    Ok(())
}
