//! Snapshots of the validation errors a person or a model sees.

use std::fmt::Write as _;

use serde_json::json;
use toolscout_catalog::{BundlePut, Result, ToolPut, builtin};
use toolscout_spec::ToolSpec;
use uuid::Uuid;

use crate::{bundle, http_put, id, open, spec};

fn line<T>(out: &mut String, what: &str, r: Result<T>) {
    let msg = match r {
        Ok(_) => "ok".to_owned(),
        Err(e) => e.to_string(),
    };
    writeln!(out, "{what}\n  → {msg}").unwrap();
}

#[test]
fn validation_errors() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    let b = bundle(&c, 1, "weather");
    let mut out = String::new();
    let put = http_put("t");

    for slug in [
        "read_file",
        "two words",
        "a/b",
        "dot.slug",
        "",
        "emoji-😀",
        "tab\tslug",
        "plus+",
        &"x".repeat(65),
    ] {
        line(
            &mut out,
            &format!("tool slug {slug:?}"),
            c.put_tool(b, slug, "1", &put),
        );
    }
    for version in ["v1_2", "1.0 beta", "v/2", &"9".repeat(65)] {
        line(
            &mut out,
            &format!("version {version:?}"),
            c.put_tool(b, "t", version, &put),
        );
    }
    let first = c.put_tool(b, "größe-ü", "1.2.3", &put);
    let first_id = first.as_ref().map(|t| t.id.to_string()).unwrap_or_default();
    line(&mut out, "unicode slug and dotted version", first);
    line(
        &mut out,
        "same pair again",
        c.put_tool(b, "größe-ü", "1.2.3", &put),
    );
    out = out.replace(&first_id, "<first-id>");
    line(
        &mut out,
        "bundle slug",
        c.put_bundle(id(2), &BundlePut::new("my_bundle")),
    );
    line(
        &mut out,
        "bundle id that is not a UUIDv7",
        c.put_bundle(Uuid::from_u128(0x1234), &BundlePut::new("b")),
    );
    line(
        &mut out,
        "native tool without func",
        c.put_tool(
            b,
            "n",
            "1",
            &ToolPut {
                implementation: json!({"function": "x"}),
                ..ToolPut::native(spec("n"), "x")
            },
        ),
    );
    line(
        &mut out,
        "http tool with an ftp URL",
        c.put_tool(
            b,
            "h",
            "1",
            &ToolPut::http(spec("h"), json!({"urlTemplate": "ftp://example.com/x"})),
        ),
    );
    line(
        &mut out,
        "http tool with a bad method",
        c.put_tool(
            b,
            "h",
            "1",
            &ToolPut::http(
                spec("h"),
                json!({"method": "FETCH", "urlTemplate": "https://example.com/x"}),
            ),
        ),
    );
    let mut bad_schema = spec("s");
    bad_schema.parameters = json!({"type": "object", "properties": {}, "required": ["q"]});
    line(
        &mut out,
        "required names a missing property",
        c.put_tool(
            b,
            "s",
            "1",
            &ToolPut::http(bad_schema, put.implementation.clone()),
        ),
    );
    let mut two_lines: ToolSpec = spec("s");
    two_lines.summary = "line one\nline two".to_owned();
    line(
        &mut out,
        "multi-line summary",
        c.put_tool(
            b,
            "s",
            "1",
            &ToolPut::http(two_lines, put.implementation.clone()),
        ),
    );
    line(
        &mut out,
        "missing bundle",
        c.put_tool(id(99), "t", "1", &put),
    );
    line(&mut out, "missing tool", c.get_tool(b, "nope", "1"));
    let files = builtin::bundles()[0].id;
    line(
        &mut out,
        "replace a built-in bundle",
        c.put_bundle(files, &BundlePut::new("files")),
    );
    line(
        &mut out,
        "delete a built-in tool",
        c.delete_tool(files, "read-file", "1"),
    );
    c.patch_bundle(b, false).unwrap();
    line(
        &mut out,
        "put into a disabled bundle",
        c.put_tool(b, "t", "2", &put),
    );
    line(
        &mut out,
        "bad page token",
        c.list_tools(&toolscout_catalog::ToolQuery::default().with_page_token(Some("page-2"))),
    );
    line(
        &mut out,
        "import of a file that is no ZIP",
        c.import_bundle(std::io::Cursor::new(b"not a zip".to_vec())),
    );
    line(
        &mut out,
        "import of a ZIP without a manifest",
        c.import_bundle(zip_of(&[("tools/x@1.json", "{}")])),
    );
    line(
        &mut out,
        "import of a foreign manifest",
        c.import_bundle(zip_of(&[("manifest.json", r#"{"format": "other/1", "bundle": {"bundleID": "01910000-0000-7000-8000-000000000005", "slug": "x"}, "tools": []}"#)])),
    );
    line(
        &mut out,
        "import of a manifest naming a missing tool file",
        c.import_bundle(zip_of(&[("manifest.json", r#"{"format": "toolscout.bundle-archive/1", "bundle": {"bundleID": "01910000-0000-7000-8000-000000000005", "slug": "x"}, "tools": ["tools/x@1.json"]}"#)])),
    );
    insta::assert_snapshot!("validation_errors", out);
}

fn zip_of(entries: &[(&str, &str)]) -> std::io::Cursor<Vec<u8>> {
    use std::io::Write as _;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in entries {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    std::io::Cursor::new(zip.finish().unwrap().into_inner())
}
