//! The built-in tools' names and bundles' slugs are reserved: every way into a catalog
//! that serves the built-ins refuses them, in any case, and writes nothing.

use std::fmt::Write as _;
use std::io::Cursor;

use toolscout_catalog::{BundlePut, Catalog, Error, Result, ToolPut};

use crate::{bundle, http_put, id, open, open_bare, spec};

/// One line per attempt: what was tried and the error (or "ok").
fn line<T>(out: &mut String, what: &str, r: Result<T>) {
    let msg = match r {
        Ok(_) => "ok".to_owned(),
        Err(e @ Error::ReservedName { .. }) => format!("reserved: {e}"),
        Err(e) => format!("other error: {e}"),
    };
    writeln!(out, "{what}\n  → {msg}").unwrap();
}

/// A ZIP of a bundle `slug` holding a tool named each of `names`, made in a catalog
/// without the built-ins (where nothing is reserved).
fn archive(n: u128, slug: &str, names: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, n, slug);
    for (i, name) in names.iter().enumerate() {
        c.put_tool(b, &format!("t{i}"), "1", &http_put(name))
            .unwrap();
    }
    let mut buf = Cursor::new(Vec::new());
    c.export_bundle(b, &mut buf).unwrap();
    buf.into_inner()
}

/// Every way in, with built-in names and slugs, into `c`.
fn every_way_in(c: &Catalog) -> String {
    let mut out = String::new();
    let b = id(1);
    c.put_bundle(b, &BundlePut::new("mine")).ok();
    for name in ["read_file", "READ_FILE", "Write_File"] {
        line(
            &mut out,
            &format!("put_tool {name:?}"),
            c.put_tool(b, "shadow", "1", &http_put(name)),
        );
    }
    line(
        &mut out,
        "put_tools with one built-in name among others",
        c.put_tools(
            b,
            [
                ("fine", "1", http_put("fine")),
                ("shadow", "1", http_put("Json_Query")),
            ],
        ),
    );
    line(
        &mut out,
        "add_tools (an import) with a spec-only \"http_get\"",
        c.add_tools(
            &BundlePut::new("imported"),
            vec![
                ToolPut::spec_only(spec("fetch_page")),
                ToolPut::spec_only(spec("http_get")),
            ],
        ),
    );
    for slug in ["files", "FILES", "Web"] {
        line(
            &mut out,
            &format!("put_bundle of a new bundle {slug:?}"),
            c.put_bundle(id(2), &BundlePut::new(slug)),
        );
        line(
            &mut out,
            &format!("add_tools into a bundle {slug:?}"),
            c.add_tools(
                &BundlePut::new(slug),
                vec![ToolPut::spec_only(spec("harmless"))],
            ),
        );
    }
    line(
        &mut out,
        "import of an archive holding \"search_files\"",
        c.import_bundle(Cursor::new(archive(
            3,
            "zipped",
            &["ok_tool", "search_files"],
        ))),
    );
    line(
        &mut out,
        "import of an archive whose bundle is \"FILES\"",
        c.import_bundle(Cursor::new(archive(4, "FILES", &["ok_tool"]))),
    );
    line(
        &mut out,
        "import of an archive whose bundle is \"data\"",
        c.import_bundle(Cursor::new(archive(5, "data", &["ok_tool"]))),
    );
    line(
        &mut out,
        "put_tool \"read_file_v2\" (another name)",
        c.put_tool(b, "own", "1", &http_put("read_file_v2")),
    );
    out
}

#[test]
fn built_in_names_and_slugs_are_refused_by_every_way_in() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    let out = every_way_in(&c);
    insta::assert_snapshot!("reserved_names", out);
    // Nothing of any refused write is stored: the bundle "mine" and the one tool with
    // a name of its own.
    let reopened = open(dir.path());
    let stored: Vec<String> = reopened
        .heads()
        .into_iter()
        .filter(|h| !h.is_built_in)
        .map(|h| h.name)
        .collect();
    assert_eq!(stored, ["read_file_v2"]);
    let slugs: Vec<String> = reopened
        .list_bundles(&toolscout_catalog::BundleQuery::default())
        .unwrap()
        .items
        .into_iter()
        .filter(|b| !b.is_built_in)
        .map(|b| b.slug)
        .collect();
    assert_eq!(slugs, ["mine"]);
}

#[test]
fn without_the_built_ins_no_name_is_reserved() {
    // A program that serves no built-in may define its own `read_file`.
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let out = every_way_in(&c);
    assert!(!out.contains("reserved"), "{out}");
    assert!(c.check_tool_name("read_file").is_ok());
    assert!(c.check_bundle_slug("files").is_ok());
}

#[test]
fn the_rule_is_one_function_for_names_and_slugs() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    for name in [
        "read_file",
        "WRITE_FILE",
        "Search_Files",
        "HTTP_GET",
        "json_query",
        "Clock",
    ] {
        assert!(
            matches!(c.check_tool_name(name), Err(Error::ReservedName { .. })),
            "{name}"
        );
    }
    for name in ["read-file", "readfile", "read_file2", "my_clock"] {
        assert!(c.check_tool_name(name).is_ok(), "{name}");
    }
    for slug in ["files", "WEB", "Data"] {
        assert!(
            matches!(c.check_bundle_slug(slug), Err(Error::ReservedName { .. })),
            "{slug}"
        );
    }
    assert!(c.check_bundle_slug("files-2").is_ok());
}
