//! `toolscout tenant …` and the tenant side of `toolscout bundle …`: tokens shown once
//! and never again, revocation by id and by prefix, removal, limits, sharing and owners,
//! ambiguous slugs, and bad names refused with nothing written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use insta::assert_snapshot;
use serde_json::Value;
use toolscout_catalog::{Catalog, Viewer};
use uuid::Uuid;

use crate::Env;

/// The catalog directory the CLI uses (`$TOOLSCOUT_HOME`), opened by the test itself.
fn catalog_dir(env: &Env) -> PathBuf {
    env.path().join("catalog")
}

fn open(env: &Env) -> Catalog {
    Catalog::open(catalog_dir(env), &[]).unwrap()
}

fn json(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = env.check(&all);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The token text of `tenant add` / `tenant token add`, checking it is printed once.
fn token_of(out: &str) -> String {
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("tsk_")).collect();
    let token = lines
        .iter()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap_or_else(|| panic!("no token line: {out}"))
        .to_owned();
    assert_eq!(token.len(), 4 + 64, "{token}");
    assert_eq!(out.matches(&token).count(), 1, "{out}");
    assert!(out.contains("cannot be shown again"), "{out}");
    token
}

/// Every file under `dir`, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// Asserts that no file under the catalog holds the token's text, nor its random part.
fn in_no_file(env: &Env, token: &str) {
    let secret = &token[12..];
    for (path, bytes) in files(&catalog_dir(env)) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(token) && !text.contains(secret),
            "{} holds the token",
            path.display()
        );
    }
}

/// `text` with each `(value, label)`'s value replaced by its label, and times
/// (`2025-01-02 03:04:05 UTC`) by `[time]`.
fn redact(text: &str, values: &[(String, &str)]) -> String {
    let mut out = text.to_owned();
    for (value, label) in values {
        out = out.replace(value.as_str(), label);
    }
    let shape = "dddd-dd-dd dd:dd:dd UTC";
    let mut result = String::new();
    let mut rest = out.as_str();
    while !rest.is_empty() {
        let is_time = rest.len() >= shape.len()
            && rest.is_char_boundary(shape.len())
            && rest[..shape.len()]
                .chars()
                .zip(shape.chars())
                .all(|(c, s)| if s == 'd' { c.is_ascii_digit() } else { c == s });
        if is_time {
            result.push_str("[time]");
            rest = &rest[shape.len()..];
        } else {
            let c = rest.chars().next().unwrap();
            result.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    result
}

#[test]
fn a_tenant_is_added_with_a_token_shown_once_that_authenticates() {
    let env = Env::new();
    let out = env.check(&["tenant", "add", "acme", "--max-tools", "20", "--rate", "5"]);
    let token = token_of(&out);
    let tenant = open(&env).tenant("acme").unwrap();
    let token_id = tenant.tokens[0].id;
    let prefix = tenant.tokens[0].prefix.clone();
    assert_eq!(token[..12], prefix);
    let ids = [
        (tenant.id.to_string(), "[acme]"),
        (token_id.to_string(), "[token]"),
        (token.clone(), "[TOKEN TEXT]"),
        (prefix.clone(), "tsk_[prefix]"),
    ];
    assert_snapshot!(redact(&out, &ids), @r"
    added tenant 'acme' ([acme])
    limits: 20 tools, 100 bundles, 5 requests/s, burst 100
    token: [TOKEN TEXT]
    token id [token] (prefix tsk_[prefix])
    This token is shown once and cannot be shown again: give it to the tenant now. `toolscout tenant token revoke tsk_[prefix]` revokes it.
    ");

    // The token is the tenant's.
    let who = open(&env)
        .authenticate(&token)
        .expect("the new token authenticates");
    assert_eq!(
        (who.tenant, who.name.as_str(), who.token),
        (tenant.id, "acme", token_id)
    );
    assert_eq!(who.limits.max_tools, 20);

    // `--json` gives the tenant and its token, once, and that token works too.
    let added = json(&env, &["tenant", "add", "beta"]);
    assert_eq!(added["tenant"]["name"], "beta");
    let beta_token = added["token"]["text"].as_str().unwrap().to_owned();
    assert_eq!(
        added["token"]["tokenID"],
        added["tenant"]["tokens"][0]["tokenID"]
    );
    assert!(open(&env).authenticate(&beta_token).is_some());
    let beta = open(&env).tenant("beta").unwrap();

    // No later output and no file under the catalog holds either token's text.
    env.check(&["bundle", "put", "crm"]);
    env.check(&["bundle", "owner", "crm", "acme"]);
    let later: Vec<String> = [
        &["tenant", "list"][..],
        &["tenant", "list", "--json"],
        &["tenant", "show", "acme"],
        &["tenant", "show", "acme", "--json"],
        &["tenant", "show", "beta"],
        &["tenant", "limits", "acme"],
        &["bundle", "list"],
        &["bundle", "list", "--json"],
    ]
    .iter()
    .map(|args| env.all(args))
    .collect();
    for out in &later {
        for t in [&token, &beta_token] {
            assert!(
                !out.contains(t.as_str()) && !out.contains(&t[12..]),
                "{out}"
            );
        }
    }
    in_no_file(&env, &token);
    in_no_file(&env, &beta_token);

    let ids = [
        (tenant.id.to_string(), "[acme]"),
        (beta.id.to_string(), "[beta]"),
        (token_id.to_string(), "[acme-token]"),
        (prefix, "tsk_[acme]"),
    ];
    assert_snapshot!(redact(&env.check(&["tenant", "list"]), &ids), @r"
    NAME  ID                                    STATE  TOKENS  MAX TOOLS  MAX BUNDLES  RATE/S  BURST
    acme  [acme]  live   1/1     20         100          5       100
    beta  [beta]  live   1/1     10000      100          50      100
    ");
    let show = redact(&env.check(&["tenant", "show", "acme"]), &ids);
    let show = show
        .lines()
        .map(|l| {
            // The bundle's id is minted by the run.
            match l.split_once("crm (") {
                Some((head, _)) => format!("{head}crm ([crm])"),
                None => l.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_snapshot!(show, @r"
    tenant 'acme' ([acme]), live, created [time]
    limits: 20 tools, 100 bundles, 5 requests/s, burst 100
    bundles (1 of at most 100): crm ([crm])
    tokens (1 live of 1):
      ID                                    PREFIX        LABEL  CREATED                  REVOKED
      [acme-token]  tsk_[acme]  -      [time]  -
    ");
}

#[test]
fn tokens_are_added_and_revoked_by_id_and_by_prefix() {
    let env = Env::new();
    let first = token_of(&env.check(&["tenant", "add", "acme"]));
    let out = env.check(&["tenant", "token", "add", "acme", "--label", "ci"]);
    assert!(out.starts_with("added a token to tenant 'acme'\n"), "{out}");
    assert!(out.contains(", label \"ci\")"), "{out}");
    let second = token_of(&out);
    let catalog = open(&env);
    assert!(catalog.authenticate(&first).is_some());
    assert!(catalog.authenticate(&second).is_some());
    let tenant = catalog.tenant("acme").unwrap();
    let (id1, id2) = (tenant.tokens[0].id, tenant.tokens[1].id);
    assert_eq!(tenant.tokens[1].label, "ci");
    drop(catalog);

    // By id: only that token stops working.
    let out = env.check(&["tenant", "token", "revoke", &id1.to_string()]);
    assert_eq!(
        out,
        format!("revoked token {id1} ({}) of tenant 'acme'\n", &first[..12])
    );
    let catalog = open(&env);
    assert!(catalog.authenticate(&first).is_none());
    assert!(catalog.authenticate(&second).is_some());
    drop(catalog);

    // By prefix, as `tenant show` lists it.
    let out = env.check(&["tenant", "token", "revoke", &second[..12]]);
    assert_eq!(
        out,
        format!("revoked token {id2} ({}) of tenant 'acme'\n", &second[..12])
    );
    assert!(open(&env).authenticate(&second).is_none());
    let out = env.check(&["tenant", "token", "revoke", &second[..12]]);
    assert!(out.contains("was already revoked"), "{out}");
    let shown = json(&env, &["tenant", "show", "acme"]);
    assert!(
        shown["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k["revokedAt"].is_string()),
        "{shown}"
    );
    assert!(
        env.check(&["tenant", "list"]).contains("  0/2  "),
        "both revoked"
    );

    // A prefix that names two live tokens is refused, listing them; the id then works.
    // Among 17 tokens two share their first hex digit.
    let catalog = open(&env);
    let mut by_digit: BTreeMap<char, Vec<(Uuid, String)>> = BTreeMap::new();
    let pair = loop {
        let t = catalog.add_token(tenant.id, "").unwrap();
        let digit = t.reveal().chars().nth(4).unwrap();
        let slot = by_digit.entry(digit).or_default();
        slot.push((t.info().id, t.reveal().to_owned()));
        if slot.len() == 2 {
            break (digit, slot.clone());
        }
    };
    drop(catalog);
    let prefix = format!("tsk_{}", pair.0);
    let out = env.check(&["tenant", "token", "revoke", &prefix]);
    assert!(
        out.starts_with(&format!(
            "exit 1\nerror: the prefix '{prefix}' names 2 tokens; revoke the one you mean by its id:\n"
        )),
        "{out}"
    );
    for (id, text) in &pair.1 {
        assert!(
            out.contains(&format!("  {id}  {}  tenant 'acme'", &text[..12])),
            "{out}"
        );
    }
    let catalog = open(&env);
    assert!(
        pair.1
            .iter()
            .all(|(_, t)| catalog.authenticate(t).is_some())
    );
    drop(catalog);
    env.check(&["tenant", "token", "revoke", &pair.1[0].0.to_string()]);
    // The whole text names its token too, and is not printed back.
    let out = env.check(&["tenant", "token", "revoke", &pair.1[1].1]);
    assert!(
        out.starts_with(&format!("revoked token {}", pair.1[1].0)),
        "{out}"
    );
    assert!(!out.contains(&pair.1[1].1), "{out}");
    let catalog = open(&env);
    assert!(
        pair.1
            .iter()
            .all(|(_, t)| catalog.authenticate(t).is_none())
    );

    // Unknown ids and prefixes, and what is neither.
    let unknown = "01900000-0000-7000-8000-0000000000ff";
    assert_snapshot!(env.check(&["tenant", "token", "revoke", unknown]), @r"
    exit 1
    error: no token 01900000-0000-7000-8000-0000000000ff: no tenant has a token of this id (`toolscout tenant show NAME` lists a tenant's tokens)
    ");
    assert_snapshot!(env.check(&["tenant", "token", "revoke", "tsk_zz"]), @r"
    exit 1
    error: 'tsk_zz' is not a token prefix: tsk_ and hex digits, as `toolscout tenant show NAME` lists them
    ");
    assert_snapshot!(env.check(&["tenant", "token", "revoke", "acme"]), @r"
    exit 1
    error: 'acme' is neither a token id nor a token prefix (tsk_ and hex digits, as `toolscout tenant show NAME` lists them)
    ");
    assert_snapshot!(env.check(&["tenant", "token", "add", "nobody"]), @r"
    exit 1
    error: no tenant 'nobody'; the tenants are: acme (try `toolscout tenant list`)
    ");
}

#[test]
fn removing_a_tenant_revokes_its_tokens_and_keeps_its_bundles() {
    let env = Env::new();
    let first = token_of(&env.check(&["tenant", "add", "acme"]));
    let second = token_of(&env.check(&["tenant", "token", "add", "acme", "--label", "ci"]));
    env.check(&["bundle", "put", "crm"]);
    env.check(&["bundle", "owner", "crm", "acme"]);
    let tenant = open(&env).tenant("acme").unwrap();
    let crm = json(&env, &["bundle", "list"])["bundles"][3]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ids = [
        (tenant.id.to_string(), "[acme]"),
        (tenant.tokens[0].id.to_string(), "[token-1]"),
        (tenant.tokens[1].id.to_string(), "[token-2]"),
        (first[..12].to_owned(), "tsk_[1]"),
        (second[..12].to_owned(), "tsk_[2]"),
        (crm.clone(), "[crm]"),
    ];
    assert_snapshot!(redact(&env.check(&["tenant", "remove", "acme"]), &ids), @r"
    removed tenant 'acme' ([acme])
    revoked 2 token(s):
      [token-1]  tsk_[1]
      [token-2]  tsk_[2]  ci
    its 1 bundle(s) stay, seen by the operator only: crm ([crm]) (`toolscout bundle owner BUNDLE TENANT|--operator` gives one away, `bundle delete` deletes it)
    ");
    let catalog = open(&env);
    assert!(catalog.authenticate(&first).is_none());
    assert!(catalog.authenticate(&second).is_none());
    assert!(!catalog.has_tenants());
    drop(catalog);
    assert_snapshot!(redact(&env.check(&["tenant", "list"]), &ids), @r"
    NAME  ID                                    STATE    TOKENS  MAX TOOLS  MAX BUNDLES  RATE/S  BURST
    acme  [acme]  removed  0/2     10000      100          50      100
    ");
    let listed = env.check(&["bundle", "list"]);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("crm ") && l.contains("acme (removed)")),
        "{listed}"
    );

    // Its name is free, its id is not: a new `acme` is another tenant.
    assert_snapshot!(env.check(&["tenant", "remove", "acme"]), @r"
    exit 1
    error: no tenant 'acme': the catalog has none (add one with `toolscout tenant add NAME`)
    ");
    assert_snapshot!(redact(&env.check(&["tenant", "remove", &tenant.id.to_string()]), &ids), @r"
    exit 1
    error: tenant 'acme' ([acme]) is already removed
    ");
    token_of(&env.check(&["tenant", "add", "acme"]));
    let again = open(&env).tenant("acme").unwrap();
    assert_ne!(again.id, tenant.id);
    assert!(
        !open(&env)
            .view(&Viewer::Tenant(again.id))
            .sees(crm.parse().unwrap())
    );
    assert_snapshot!(env.check(&["tenant", "remove", "nobody"]), @r"
    exit 1
    error: no tenant 'nobody'; the tenants are: acme (try `toolscout tenant list`)
    ");
}

#[test]
fn limits_are_printed_and_changed() {
    let env = Env::new();
    env.check(&[
        "tenant",
        "add",
        "acme",
        "--max-tools",
        "20",
        "--max-bundles",
        "2",
        "--rate",
        "5",
        "--burst",
        "10",
    ]);
    assert_snapshot!(env.check(&["tenant", "limits", "acme"]), @"limits of tenant 'acme': 20 tools, 2 bundles, 5 requests/s, burst 10");
    assert_snapshot!(env.check(&["tenant", "limits", "acme", "--max-tools", "30", "--rate", "7"]), @"changed limits of tenant 'acme': 30 tools, 2 bundles, 7 requests/s, burst 10");
    assert_snapshot!(env.check(&["tenant", "limits", "acme", "--burst", "10"]), @"unchanged limits of tenant 'acme': 30 tools, 2 bundles, 7 requests/s, burst 10");
    let limits = open(&env).tenant("acme").unwrap().limits;
    assert_eq!(
        (
            limits.max_tools,
            limits.max_bundles,
            limits.requests_per_second,
            limits.burst
        ),
        (30, 2, 7, 10)
    );
    let shown = json(&env, &["tenant", "limits", "acme", "--max-bundles", "3"]);
    assert_eq!(shown["limits"]["maxBundles"], 3, "{shown}");
    let out = env.check(&["tenant", "limits", "acme", "--rate", "0"]);
    assert!(out.starts_with("exit 2\n"), "{out}");
    assert!(out.contains("0 is not in 1.."), "{out}");
    assert_snapshot!(env.check(&["tenant", "limits", "nobody", "--rate", "3"]), @r"
    exit 1
    error: no tenant 'nobody'; the tenants are: acme (try `toolscout tenant list`)
    ");
    assert_eq!(open(&env).tenant("acme").unwrap().limits.max_bundles, 3);
}

#[test]
fn bundles_are_shared_unshared_and_given_away() {
    let env = Env::new();
    env.check(&["tenant", "add", "acme"]);
    env.check(&["tenant", "add", "beta"]);
    let (acme, beta) = {
        let c = open(&env);
        (c.tenant("acme").unwrap().id, c.tenant("beta").unwrap().id)
    };
    assert!(
        env.check(&["bundle", "put", "crm", "--description", "Customers."])
            .starts_with("created bundle 'crm'")
    );
    let crm: Uuid = json(&env, &["bundle", "list"])["bundles"][3]["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let ids = [
        (crm.to_string(), "[crm]"),
        (acme.to_string(), "[acme]"),
        (beta.to_string(), "[beta]"),
    ];
    let sees = |viewer: Viewer| open(&env).view(&viewer).sees(crm);
    assert!(!sees(Viewer::Tenant(acme)));

    let out = env.check(&["bundle", "owner", "crm", "acme"]);
    assert_snapshot!(redact(&out, &ids), @"bundle 'crm' ([crm]) is owned by tenant 'acme'");
    assert!(sees(Viewer::Tenant(acme)) && !sees(Viewer::Tenant(beta)));
    let out = env.check(&["bundle", "share", "crm"]);
    assert_snapshot!(redact(&out, &ids), @"shared bundle 'crm' ([crm]), owned by tenant 'acme': every tenant finds, reads and calls its tools");
    assert!(sees(Viewer::Tenant(beta)) && sees(Viewer::Public));
    assert_snapshot!(env.check(&["bundle", "list"]), @r"
    files            enabled      3 tools  built-in          Read, write and find files inside the workspace root set by the user. Paths are relative to that root and never leave it.
    web              enabled      1 tool   built-in          Fetch pages and APIs over HTTP from the hosts the user allows.
    data             enabled      2 tools  built-in          Work with structured data and time: query JSON values, read the clock and convert between time zones.
    crm              enabled      0 tools  acme      shared  Customers.
    ");
    let listed = json(&env, &["bundle", "list"]);
    let b = &listed["bundles"][3];
    assert_eq!(
        (&b["ownerName"], &b["owner"], &b["shared"]),
        (
            &Value::from("acme"),
            &Value::from(acme.to_string()),
            &Value::from(true)
        ),
        "{b}"
    );
    assert!(listed["bundles"][0].get("ownerName").is_none(), "{listed}");

    let out = env.check(&["bundle", "unshare", &crm.to_string()]);
    assert_snapshot!(redact(&out, &ids), @"unshared bundle 'crm' ([crm]), owned by tenant 'acme': no other tenant sees its tools");
    assert!(!sees(Viewer::Tenant(beta)));
    let out = env.check(&["--json", "bundle", "owner", "crm", "beta"]);
    let b: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (&b["ownerName"], &b["shared"]),
        (&Value::from("beta"), &Value::from(false))
    );
    assert!(sees(Viewer::Tenant(beta)) && !sees(Viewer::Tenant(acme)));
    let out = env.check(&["bundle", "owner", "crm", "--operator"]);
    assert_snapshot!(redact(&out, &ids), @"bundle 'crm' ([crm]) is owned by the operator");
    assert!(!sees(Viewer::Tenant(beta)));

    // Who may not own it, and how not to ask.
    assert_snapshot!(env.check(&["bundle", "owner", "crm", "nobody"]), @r"
    exit 1
    error: no tenant 'nobody'; the tenants are: acme, beta (try `toolscout tenant list`)
    ");
    let out = env.check(&["bundle", "owner", "crm"]);
    assert!(
        out.starts_with("exit 2\n") && out.contains("--operator"),
        "{out}"
    );
    let out = env.check(&["bundle", "owner", "crm", "acme", "--operator"]);
    assert!(
        out.starts_with("exit 2\n") && out.contains("cannot be used with"),
        "{out}"
    );
    assert_snapshot!(env.check(&["bundle", "share", "files"]), @r"
    exit 1
    error: bundle 'files' is built in: only its enabled flag can change
    ");
}

#[test]
fn a_slug_two_owners_hold_is_ambiguous_and_names_its_bundles() {
    let env = Env::new();
    env.check(&["tenant", "add", "acme"]);
    env.check(&["bundle", "put", "crm"]);
    env.check(&["bundle", "owner", "crm", "acme"]);
    // `bundle put` makes and changes the operator's own bundles: a second `crm`.
    assert!(
        env.check(&["bundle", "put", "crm", "--description", "Ours."])
            .starts_with("created bundle 'crm'")
    );
    let listed = json(&env, &["bundle", "list"]);
    let id_of = |owned: bool| {
        listed["bundles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["slug"] == "crm" && b.get("owner").is_some() == owned)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (theirs, ours) = (id_of(true), id_of(false));
    let ids = [
        (theirs.clone(), "[acme's crm]"),
        (ours.clone(), "[operator's crm]"),
    ];
    // The candidates come in id order, which two processes in one millisecond may mint
    // either way: sorted, the message reads the same every run.
    let check = |args: &[&str]| {
        let text = redact(&env.check(args), &ids);
        let (mut head, mut candidates): (Vec<&str>, Vec<&str>) =
            text.lines().partition(|l| !l.starts_with("  ["));
        candidates.sort_unstable();
        head.extend(candidates);
        head.join("\n")
    };
    let err = check(&["bundle", "share", "crm"]);
    assert_snapshot!(err, @r"
    exit 1
    error: the slug 'crm' names 2 bundles of different owners; give the id of the one you mean:
      [acme's crm]  owned by tenant 'acme'
      [operator's crm]  owned by the operator
    ");
    // Every command that takes a bundle refuses the same way.
    for args in [
        &["bundle", "owner", "crm", "--operator"][..],
        &["bundle", "disable", "crm"],
        &["list", "--bundle", "crm"],
    ] {
        assert_eq!(check(args), err, "{args:?}");
    }
    // By id it is clear.
    let out = env.check(&["bundle", "share", &theirs]);
    assert!(
        out.starts_with(&format!(
            "shared bundle 'crm' ({theirs}), owned by tenant 'acme'"
        )),
        "{out}"
    );
    let listed = env.check(&["bundle", "list"]);
    assert!(listed.contains("0 tools  acme      shared\n"), "{listed}");
    assert!(
        listed.contains("0 tools  operator          Ours."),
        "{listed}"
    );
}

#[test]
fn bad_tenant_names_are_refused_and_nothing_is_written() {
    // On a fresh catalog not even the directory is made.
    let fresh = Env::new();
    let out = fresh.check(&["tenant", "add", "../x"]);
    assert!(out.starts_with("exit 1\n"), "{out}");
    assert!(!catalog_dir(&fresh).exists());

    let env = Env::new();
    env.check(&["tenant", "add", "acme"]);
    let generation = open(&env).generation();
    let before = files(&catalog_dir(&env));
    let long = "x".repeat(64);
    let mut report = String::new();
    for name in [
        "",
        "../x",
        "a/b",
        ".",
        "UPPER",
        long.as_str(),
        "admin",
        "acme",
    ] {
        report.push_str(&format!(
            "{name:?}\n{}\n",
            env.check(&["tenant", "add", name])
        ));
    }
    assert_snapshot!(report, @r#"
    ""
    exit 1
    error: invalid tenant name "": a tenant name cannot be empty

    "../x"
    exit 1
    error: invalid tenant name "../x": a tenant name holds only a-z, 0-9 and '-'

    "a/b"
    exit 1
    error: invalid tenant name "a/b": a tenant name holds only a-z, 0-9 and '-'

    "."
    exit 1
    error: invalid tenant name ".": a tenant name holds only a-z, 0-9 and '-'

    "UPPER"
    exit 1
    error: invalid tenant name "UPPER": a tenant name holds only a-z, 0-9 and '-'

    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    exit 1
    error: invalid tenant name "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": a tenant name has at most 63 characters

    "admin"
    exit 1
    error: invalid tenant name "admin": the name is reserved

    "acme"
    exit 1
    error: a tenant named 'acme' exists: choose another name, or remove it first

    "#);
    // Other refusals write nothing either.
    for args in [
        &[
            "tenant",
            "token",
            "revoke",
            "01900000-0000-7000-8000-0000000000ff",
        ][..],
        &["tenant", "token", "revoke", "tsk_0123abcd"],
        &["tenant", "remove", "nobody"],
        &["tenant", "token", "add", "nobody"],
        &["tenant", "limits", "nobody", "--rate", "3"],
    ] {
        let out = env.check(args);
        assert!(out.starts_with("exit 1\n"), "{args:?}: {out}");
    }
    assert_eq!(files(&catalog_dir(&env)), before, "a refused command wrote");
    assert_eq!(open(&env).generation(), generation);
    assert_eq!(open(&env).tenants().len(), 1);
}

/// The same commands on the PostgreSQL store: one process adds, another revokes.
#[cfg(feature = "postgres")]
#[test]
fn tenants_live_in_the_database_store() {
    let Some(db) = toolscout_pgtest::database("tenants_live_in_the_database_store") else {
        return;
    };
    let (a, b) = (Env::new(), Env::new());
    let token = token_of(&a.check(&["--store", db.url(), "tenant", "add", "acme"]));
    let listed = b.check(&["--store", db.url(), "tenant", "list"]);
    assert!(
        listed.contains("acme") && listed.contains("live   1/1"),
        "{listed}"
    );
    b.check(&["--store", db.url(), "bundle", "put", "crm"]);
    let out = a.check(&["--store", db.url(), "bundle", "owner", "crm", "acme"]);
    assert!(out.contains("is owned by tenant 'acme'"), "{out}");
    let out = b.check(&["--store", db.url(), "bundle", "share", "crm"]);
    assert!(out.starts_with("shared bundle 'crm'"), "{out}");
    let open_db = || {
        Catalog::open_with(
            a.path().join("probe"),
            toolscout_catalog::CatalogOptions::default().with_postgres(db.url()),
        )
        .unwrap()
    };
    assert!(open_db().authenticate(&token).is_some());
    let out = b.check(&[
        "--store",
        db.url(),
        "tenant",
        "token",
        "revoke",
        &token[..12],
    ]);
    assert!(out.starts_with("revoked token"), "{out}");
    assert!(open_db().authenticate(&token).is_none());
    let out = a.check(&["--store", db.url(), "tenant", "add", "a/b"]);
    assert!(out.contains("invalid tenant name"), "{out}");
    assert_eq!(open_db().tenants().len(), 1);
    for env in [&a, &b] {
        in_no_file(env, &token);
    }
}
