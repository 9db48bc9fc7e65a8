use std::io::{Cursor, Write};

use toolscout_catalog::{BundlePut, Error, ToolPut, builtin};
use zip::write::SimpleFileOptions;

use crate::{bundle, http_put, id, open, open_bare, spec};

fn export(c: &toolscout_catalog::Catalog, b: uuid::Uuid) -> Vec<u8> {
    let mut buf = Cursor::new(Vec::new());
    c.export_bundle(b, &mut buf).unwrap();
    buf.into_inner()
}

#[test]
fn export_then_import_into_another_catalog() {
    let src_dir = tempfile::tempdir().unwrap();
    let src = open_bare(src_dir.path());
    let b = id(1);
    src.put_bundle(b, &BundlePut::new("weather").with_description("Forecasts"))
        .unwrap();
    let t1 = src
        .put_tool(b, "forecast", "v1", &http_put("forecast"))
        .unwrap();
    let t2 = src
        .put_tool(b, "local", "1.0", &ToolPut::native(spec("local"), "local"))
        .unwrap();
    let zip = export(&src, b);

    let dst_dir = tempfile::tempdir().unwrap();
    let dst = open_bare(dst_dir.path());
    let imported = dst.import_bundle(Cursor::new(&zip)).unwrap();
    assert!(imported.created);
    assert_eq!(imported.bundle.slug, "weather");
    assert_eq!(imported.bundle.description, "Forecasts");
    assert_eq!(imported.tools.len(), 2);
    let got = dst.get_tool(b, "forecast", "v1").unwrap();
    assert_eq!(got.id, t1.id);
    assert_eq!(got.spec, t1.spec);
    assert_eq!(dst.get_tool(b, "local", "1.0").unwrap().spec, t2.spec);

    // The same archive again (a rerun of an import that may not have got in) finds
    // every tool there as it has it: nothing is written.
    let before = dst.generation();
    let again = dst.import_bundle(Cursor::new(&zip)).unwrap();
    assert_eq!(
        (again.created, again.tools.len(), again.unchanged),
        (false, 0, 2)
    );
    assert_eq!(dst.generation(), before);

    // Another tool under a pair the bundle holds conflicts, and nothing is written.
    src.delete_tool(b, "forecast", "v1").unwrap();
    let mut changed = http_put("forecast");
    changed.spec.description = "Another forecast".to_owned();
    src.put_tool(b, "forecast", "v1", &changed).unwrap();
    src.put_tool(b, "extra", "1", &http_put("extra")).unwrap();
    let other = export(&src, b);
    assert!(matches!(
        dst.import_bundle(Cursor::new(&other)),
        Err(Error::Conflict { .. })
    ));
    assert_eq!(dst.generation(), before);
    assert_eq!(open_bare(dst_dir.path()).tools().len(), 2);
}

#[test]
fn builtin_bundles_export_and_import_is_refused_into_the_same_id() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    let files = builtin::bundles()[0].id;
    let zip = export(&c, files);
    assert!(matches!(
        c.import_bundle(Cursor::new(&zip)),
        Err(Error::BuiltIn { .. })
    ));
    // Into a catalog without the built-ins it is an ordinary bundle.
    let other_dir = tempfile::tempdir().unwrap();
    let other = open_bare(other_dir.path());
    let imported = other.import_bundle(Cursor::new(&zip)).unwrap();
    assert_eq!(imported.tools.len(), 3);
    assert!(imported.tools.iter().all(|t| !t.is_built_in));
}

#[test]
fn import_validates_every_tool_before_writing_any() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    c.put_tool(b, "good", "1", &http_put("good")).unwrap();
    c.put_tool(b, "bad", "1", &http_put("bad")).unwrap();
    let zip = export(&c, b);

    // Rewrite the archive with the "bad" tool's slug broken.
    let mut src = zip::ZipArchive::new(Cursor::new(&zip)).unwrap();
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..src.len() {
        let mut entry = src.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
        if name.contains("bad@") {
            text = text.replace("\"slug\": \"bad\"", "\"slug\": \"bad_slug\"");
        }
        out.start_file(name, SimpleFileOptions::default()).unwrap();
        out.write_all(text.as_bytes()).unwrap();
    }
    let broken = out.finish().unwrap().into_inner();

    let dst_dir = tempfile::tempdir().unwrap();
    let dst = open_bare(dst_dir.path());
    let err = dst.import_bundle(Cursor::new(&broken)).unwrap_err();
    assert!(matches!(err, Error::Label { .. }), "{err}");
    assert!(dst.bundle(b).is_err());
    assert!(dst.tools().is_empty());
}

#[test]
fn import_stops_at_the_archive_size_limit() {
    // Regression: 300 entries of 4 MiB (a 1.3 MB file) took 3.7 GB to import.
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    c.put_tool(b, "one", "1", &http_put("one")).unwrap();
    let zip = export(&c, b);
    let mut src = zip::ZipArchive::new(Cursor::new(&zip)).unwrap();
    let mut manifest = String::new();
    std::io::Read::read_to_string(&mut src.by_name("manifest.json").unwrap(), &mut manifest)
        .unwrap();
    let mut tool = String::new();
    let listed: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let tool_name = listed["tools"][0].as_str().unwrap().to_owned();
    std::io::Read::read_to_string(&mut src.by_name(&tool_name).unwrap(), &mut tool).unwrap();
    // Each tool file padded with JSON whitespace to just under the entry limit.
    let pad =
        " ".repeat(usize::try_from(toolscout_catalog::MAX_ENTRY_BYTES).unwrap() - tool.len() - 1);
    let n =
        usize::try_from(toolscout_catalog::MAX_ARCHIVE_BYTES / toolscout_catalog::MAX_ENTRY_BYTES)
            .unwrap()
            + 2;
    let names: Vec<String> = (0..n).map(|i| format!("tools/t{i}.json")).collect();
    let mut manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    manifest["tools"] = serde_json::json!(names);
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    // Stored, not deflated: what is measured is what the import reads, and compressing
    // 70 MB in a debug build would make the test slow.
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    out.start_file("manifest.json", stored).unwrap();
    out.write_all(manifest.to_string().as_bytes()).unwrap();
    for (i, name) in names.iter().enumerate() {
        out.start_file(name.as_str(), stored).unwrap();
        let text = tool.replace("\"slug\": \"one\"", &format!("\"slug\": \"t{i}\""));
        out.write_all(text.as_bytes()).unwrap();
        out.write_all(pad.as_bytes()).unwrap();
    }
    let bomb = out.finish().unwrap().into_inner();

    let dst_dir = tempfile::tempdir().unwrap();
    let dst = open_bare(dst_dir.path());
    let err = dst.import_bundle(Cursor::new(&bomb)).unwrap_err();
    assert!(err.to_string().contains("add up to more than"), "{err}");
    assert!(dst.tools().is_empty());
}
