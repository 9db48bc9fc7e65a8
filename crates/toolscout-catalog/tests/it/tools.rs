use std::fs;

use serde_json::json;
use toolscout_catalog::{
    BundlePut, Catalog, DisabledReason, Error, OnExisting, ToolPut, ToolQuery, ToolType, builtin,
};

use toolscout_spec::adapters::jsonl;

use crate::{bundle, http_put, open, open_bare, spec};

#[test]
fn put_get_and_conflict_leaves_the_first_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "weather");
    let first = c
        .put_tool(b, "forecast", "v1", &http_put("forecast"))
        .unwrap();
    assert_eq!(first.id.get_version_num(), 7);
    assert_eq!(first.spec.version.as_deref(), Some("v1"));
    // The stored file, where the store has files.
    let bytes = first.path.as_ref().map(|p| fs::read(p).unwrap());

    let other = http_put("other_name").with_enabled(false);
    let err = c.put_tool(b, "forecast", "v1", &other).unwrap_err();
    assert!(matches!(err, Error::Conflict { existing, .. } if existing == first.id));
    assert_eq!(first.path.as_ref().map(|p| fs::read(p).unwrap()), bytes);
    assert_eq!(c.get_tool(b, "forecast", "v1").unwrap(), first);

    // A new version, a differently cased slug, and the same pair in another bundle are fine.
    c.put_tool(b, "forecast", "v2", &http_put("forecast"))
        .unwrap();
    c.put_tool(b, "Forecast", "v1", &http_put("forecast"))
        .unwrap();
    let b2 = bundle(&c, 2, "weather-eu");
    c.put_tool(b2, "forecast", "v1", &http_put("forecast"))
        .unwrap();
    assert_eq!(c.tools().len(), 4);

    // Everything reads back from disk the same.
    let again = open_bare(dir.path());
    assert_eq!(again.tools(), c.tools());
    assert!(again.issues().is_empty());
}

#[test]
fn unicode_slugs_and_dotted_versions() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "météo");
    let t = c
        .put_tool(b, "wetter-größe", "2024.05-rc1", &http_put("wetter"))
        .unwrap();
    assert_eq!(t.slug, "wetter-größe");
    assert_eq!(
        open_bare(dir.path())
            .get_tool(b, "wetter-größe", "2024.05-rc1")
            .unwrap()
            .id,
        t.id
    );
}

#[test]
fn patch_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    let t = c.put_tool(b, "t", "1", &http_put("t")).unwrap();
    let off = c.patch_tool(b, "t", "1", false).unwrap();
    assert_eq!(off.disabled_reason, Some(DisabledReason::Disabled));
    assert_eq!(
        off.modified_at, t.modified_at,
        "enabling is not a structural change"
    );
    assert!(
        !open_bare(dir.path())
            .get_tool(b, "t", "1")
            .unwrap()
            .is_enabled
    );
    c.delete_tool(b, "t", "1").unwrap();
    if let Some(path) = t.path {
        assert!(!path.exists());
    }
    assert!(matches!(
        c.get_tool(b, "t", "1"),
        Err(Error::ToolNotFound { .. })
    ));
    assert!(matches!(
        c.delete_tool(b, "t", "1"),
        Err(Error::ToolNotFound { .. })
    ));
}

#[test]
fn list_by_tags_bundles_disabled_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path());
    let b = bundle(&c, 1, "b");
    for n in 0..5 {
        c.put_tool(b, &format!("t{n}"), "1", &http_put(&format!("t{n}")))
            .unwrap();
    }
    c.patch_tool(b, "t1", "1", false).unwrap();
    let names = |q: &ToolQuery| -> Vec<String> {
        c.list_tools(q)
            .unwrap()
            .items
            .into_iter()
            .map(|t| t.spec.name.to_string())
            .collect()
    };
    assert_eq!(
        names(&ToolQuery::default().with_tags(&["files"])),
        ["read_file", "write_file", "search_files"]
    );
    assert_eq!(
        names(&ToolQuery::default().with_tags(&["files", "read"])),
        ["read_file"]
    );
    assert_eq!(
        names(&ToolQuery::default().with_bundle_ids(&[b])),
        ["t0", "t2", "t3", "t4"]
    );
    assert_eq!(
        names(
            &ToolQuery::default()
                .with_bundle_ids(&[b])
                .with_include_disabled(true)
        ),
        ["t0", "t1", "t2", "t3", "t4"]
    );
    // Pages of 4 over 6 built-ins and 4 callable tools.
    let mut all = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = c
            .list_tools(
                &ToolQuery::default()
                    .with_page_size(4)
                    .with_page_token(token.as_deref()),
            )
            .unwrap();
        pages += 1;
        all.extend(page.items.into_iter().map(|t| t.spec.name.to_string()));
        token = page.next_page_token;
        if token.is_none() {
            break;
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(all.len(), 10);
    assert_eq!(all[..6], builtin::NATIVE_FUNCTIONS);
}

#[test]
fn native_tools_without_a_registered_function_are_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let c = crate::open_with(
        dir.path(),
        toolscout_catalog::CatalogOptions::default().with_natives(&["read_file", "mine"]),
    )
    .unwrap();
    let b = bundle(&c, 1, "b");
    c.put_tool(b, "mine", "1", &ToolPut::native(spec("mine"), "mine"))
        .unwrap();
    let t = c
        .put_tool(b, "gone", "1", &ToolPut::native(spec("gone"), "gone"))
        .unwrap();
    assert_eq!(
        t.disabled_reason,
        Some(DisabledReason::NativeNotRegistered {
            func: "gone".to_owned()
        })
    );
    assert_eq!(
        t.disabled_reason.unwrap().to_string(),
        "native function 'gone' is not registered in this binary"
    );
    let callable: Vec<String> = c
        .list_tools(&ToolQuery::default())
        .unwrap()
        .items
        .into_iter()
        .map(|t| t.slug)
        .collect();
    assert_eq!(callable, ["read-file", "mine"]);
    let all = c
        .list_tools(&ToolQuery::default().with_include_disabled(true))
        .unwrap();
    assert_eq!(all.items.len(), 8);
    let http_get = all.items.iter().find(|t| t.slug == "http-get").unwrap();
    assert_eq!(http_get.native_func(), Some("http_get"));
    assert!(!http_get.is_callable());
}

#[test]
fn malformed_and_foreign_files_are_reported_and_skipped() {
    crate::files_only!();
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    let good = c.put_tool(b, "good", "1", &http_put("good")).unwrap();
    let broken = c.put_tool(b, "broken", "1", &http_put("broken")).unwrap();
    let invalid = c.put_tool(b, "invalid", "1", &http_put("invalid")).unwrap();
    drop(c);

    // Half a file, a stray file, a directory that is no bundle, a temporary file.
    let tools_dir = good.path.clone().unwrap().parent().unwrap().to_owned();
    fs::write(
        broken.path.clone().unwrap(),
        b"{\"schemaVersion\": \"toolscout.tool/1\", \"slu",
    )
    .unwrap();
    fs::write(tools_dir.join("notes.txt"), b"hello").unwrap();
    fs::create_dir(dir.path().join("bundles").join("not-a-bundle")).unwrap();
    fs::write(tools_dir.join(".x.json.123.tmp"), b"partial").unwrap();
    // A definition that parses but does not check out: an HTTP tool with an FTP URL.
    let invalid_path = invalid.path.clone().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&fs::read(&invalid_path).unwrap()).unwrap();
    v["impl"] = json!({"urlTemplate": "ftp://example.com"});
    let invalid_bytes = serde_json::to_vec_pretty(&v).unwrap();
    fs::write(&invalid_path, &invalid_bytes).unwrap();

    let c = open_bare(dir.path());
    let root = dir.path().display().to_string();
    let issues: Vec<String> = c
        .issues()
        .iter()
        .map(|i| i.to_string().replace(&root, "<root>"))
        .map(|s| s.replace(&broken.id.to_string(), "<broken-id>"))
        .map(|s| s.replace(&b.to_string(), "<bundle>"))
        .collect();
    insta::assert_snapshot!("load_issues", issues.join("\n"));

    assert_eq!(c.get_tool(b, "good", "1").unwrap().id, good.id);
    assert!(c.get_tool(b, "broken", "1").is_err());
    let shown = c.get_tool(b, "invalid", "1").unwrap();
    assert_eq!(
        shown
            .disabled_reason
            .as_ref()
            .map(ToString::to_string)
            .unwrap(),
        "its definition cannot be loaded: tool invalid@1: invalid impl block: \
         \"urlTemplate\" must start with http:// or https://, found \"ftp://example.com\""
    );
    // Its pair stays taken, and its file is never rewritten.
    assert!(matches!(
        c.put_tool(b, "invalid", "1", &http_put("invalid")),
        Err(Error::Conflict { .. })
    ));
    c.put_tool(b, "more", "1", &http_put("more")).unwrap();
    assert_eq!(fs::read(&invalid_path).unwrap(), invalid_bytes);
}

#[test]
fn put_tools_is_one_change_and_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    c.put_tool(b, "taken", "1", &http_put("taken")).unwrap();
    let puts: Vec<ToolPut> = (0..3).map(|n| http_put(&format!("t{n}"))).collect();
    let before = c.generation();

    // A conflict with the bundle, or within the batch, writes nothing.
    let clash = [("a", "1", &puts[0]), ("taken", "1", &puts[1])];
    assert!(matches!(c.put_tools(b, clash), Err(Error::Conflict { .. })));
    let twice = [("a", "1", &puts[0]), ("a", "1", &puts[1])];
    assert!(matches!(c.put_tools(b, twice), Err(Error::Conflict { .. })));
    let bad = [("a", "1", &puts[0]), ("b_c", "1", &puts[1])];
    assert!(matches!(c.put_tools(b, bad), Err(Error::Label { .. })));
    assert_eq!(c.generation(), before);
    assert_eq!(c.tools().len(), 1);

    let changes = std::sync::Arc::new(std::sync::Mutex::new(0));
    let counter = std::sync::Arc::clone(&changes);
    c.subscribe(move |_| *counter.lock().unwrap() += 1);
    let batch = [
        ("a", "1", &puts[0]),
        ("a", "2", &puts[1]),
        ("b", "1", &puts[2]),
    ];
    let added = c.put_tools(b, batch).unwrap();
    assert_eq!(added.len(), 3);
    assert_eq!(c.generation(), before + 1);
    assert_eq!(*changes.lock().unwrap(), 1);
    assert_eq!(open_bare(dir.path()).tools(), c.tools());
}

#[test]
fn put_tools_by_value_writes_every_file_and_leaves_no_temporary_one() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    let puts = (0..50).map(|n| (format!("t{n}"), "1", http_put(&format!("t{n}"))));
    let added = c.put_tools(b, puts).unwrap();
    assert_eq!(added.len(), 50);
    drop(c);

    // What the files are.
    crate::files_only!();
    let tools_dir = dir.path().join("bundles").join(b.to_string()).join("tools");
    let names: Vec<String> = fs::read_dir(&tools_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 50, "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
    // Read from the files themselves, not the snapshot.
    fs::remove_file(dir.path().join("heads.bin")).unwrap();
    let c = open_bare(dir.path());
    assert_eq!(c.len(), 50);
    let t7 = added.iter().find(|h| h.slug == "t7").unwrap();
    assert_eq!(c.tool(t7.id).unwrap().spec.summary, "Does t7");
}

#[test]
fn add_tools_with_new_version_stores_what_changed_and_keeps_how_tools_run() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let weather = BundlePut::new("weather");
    // An HTTP tool whose spec says more than a JSONL line can: a summary of its own,
    // tags, an approval rule.
    let mut rich = spec("forecast");
    rich.summary = "Tomorrow's weather".into();
    rich.metadata.requires_approval = true;
    let first = c
        .add_tools(
            &weather,
            vec![
                ToolPut::http(rich, http_put("forecast").implementation),
                ToolPut::spec_only(spec("tides")),
            ],
        )
        .unwrap();
    let b = first.bundle;
    c.patch_tool(b, "tides", "1", false).unwrap();

    // The bundle exported as JSONL and given sample requests (what `enrich` writes),
    // tides with one more parameter; a new tool; a name given twice.
    let line = |name: &str, f: &dyn Fn(&mut serde_json::Value)| {
        let stored = c.tools().into_iter().find(|t| t.spec.name.as_str() == name);
        let mut v = match stored {
            Some(t) => jsonl::to_value(&t.spec),
            None => jsonl::to_value(&spec(name)),
        };
        f(&mut v);
        ToolPut::spec_only(jsonl::from_value(&v).unwrap())
    };
    let asked = |v: &mut serde_json::Value| {
        let name = v["name"].as_str().unwrap().to_owned();
        v["utterances"] = json!([format!("please {name} for me")]);
    };
    let puts = vec![
        line("forecast", &asked),
        line("tides", &|v| {
            asked(v);
            v["parameters"]["properties"]["harbour"] = json!({"type": "string"});
        }),
        line("currents", &|_| {}),
        line("forecast", &|_| {}),
    ];
    let skip = c.add_tools(&weather, puts.clone()).unwrap();
    assert_eq!(
        (skip.added.len(), skip.updated.len()),
        (1, 0),
        "only currents is new"
    );
    assert_eq!((skip.skipped, skip.duplicates, skip.unchanged), (2, 1, 0));

    let again = replace(&c, puts.clone());
    let mut updated: Vec<_> = again
        .updated
        .iter()
        .map(|h| (h.name.as_str(), h.slug.as_str(), h.version.as_str()))
        .collect();
    updated.sort_unstable();
    assert_eq!(
        updated,
        [("forecast", "forecast", "2"), ("tides", "tides", "2")]
    );
    assert_eq!(
        (
            again.added.len(),
            again.skipped,
            again.duplicates,
            again.unchanged
        ),
        (0, 0, 1, 1),
        "currents is unchanged, the second forecast line a duplicate"
    );

    // The HTTP tool runs as it did and keeps what the line could not say; only its
    // sample requests are new.
    let old = c.get_tool(b, "forecast", "1").unwrap();
    let forecast = c.get_tool(b, "forecast", "2").unwrap();
    assert_eq!(forecast.tool_type, ToolType::Http);
    assert_eq!(forecast.implementation, old.implementation);
    assert_eq!(forecast.spec.utterances, ["please forecast for me"]);
    let mut expected = old.spec.clone();
    expected.utterances.clone_from(&forecast.spec.utterances);
    expected.version = Some("2".into());
    assert_eq!(forecast.spec, expected);
    assert!(forecast.spec.metadata.requires_approval && forecast.is_callable());
    // The spec-only tool takes the line's parameters, and stays disabled.
    let tides = c.get_tool(b, "tides", "2").unwrap();
    assert!(tides.is_spec_only() && !tides.is_enabled);
    assert!(tides.spec.parameters["properties"]["harbour"].is_object());
    // The earlier versions are kept; each name stands for the newest.
    assert!(old.spec.utterances.is_empty());
    assert_eq!(c.name_holder("forecast"), Some((forecast.id, true)));
    assert_eq!(c.name_holder("tides").map(|h| h.0), Some(tides.id));

    // Nothing changed since: nothing is written.
    let generation = c.generation();
    let same = replace(&c, puts);
    assert_eq!(
        (
            same.added.len(),
            same.updated.len(),
            same.duplicates,
            same.unchanged
        ),
        (0, 0, 1, 3)
    );
    assert_eq!(c.generation(), generation);

    // A put that runs (an OpenAPI operation) brings its own way of running.
    let moved = ToolPut::http(
        spec("forecast"),
        json!({"method": "GET", "urlTemplate": "https://api.example.org/v2/${q}"}),
    );
    let v3 = replace(&c, vec![moved.clone()]);
    assert_eq!(v3.updated[0].version, "3");
    let forecast = c.get_tool(b, "forecast", "3").unwrap();
    assert_eq!(forecast.implementation, moved.implementation);
    assert_eq!(forecast.spec.summary, "Does forecast");
    // An operation never carries sample requests: the tool keeps those it was given.
    assert_eq!(forecast.spec.utterances, ["please forecast for me"]);

    // A line with nothing but a name and new requests changes only those.
    let bare = jsonl::from_value(&json!({"name": "forecast", "utterances": ["rain?"]})).unwrap();
    let v4 = replace(&c, vec![ToolPut::spec_only(bare)]);
    assert_eq!(v4.updated[0].version, "4");
    let mut expected = forecast.spec.clone();
    expected.utterances = vec!["rain?".into()];
    expected.version = Some("4".into());
    assert_eq!(c.get_tool(b, "forecast", "4").unwrap().spec, expected);
    assert_eq!(open_bare(dir.path()).tools(), c.tools());
}

#[test]
fn add_tools_with_plans_from_what_other_processes_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let weather = BundlePut::new("weather");
    let b = c
        .add_tools(&weather, vec![ToolPut::spec_only(spec("tides"))])
        .unwrap()
        .bundle;
    // Another process disables the tool; this catalog has not read that yet.
    let other = open_bare(dir.path());
    other.patch_tool(b, "tides", "1", false).unwrap();
    let mut changed = spec("tides");
    changed.utterances = vec!["when is high water?".into()];
    let again = replace(&c, vec![ToolPut::spec_only(changed)]);
    assert_eq!(again.updated.len(), 1);
    assert!(!c.get_tool(b, "tides", "2").unwrap().is_enabled);
}

/// `puts` added to the bundle `weather` of `c`, a changed tool as its next version.
fn replace(c: &Catalog, puts: Vec<ToolPut>) -> toolscout_catalog::Added {
    c.add_tools_with(&BundlePut::new("weather"), puts, OnExisting::NewVersion)
        .unwrap()
}

/// Every time a write records is a whole microsecond, what every store keeps: a tool read
/// back (here by another process's catalog, from the files) is the one written, head and
/// all.
#[test]
fn recorded_times_are_whole_microseconds_and_read_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "weather");
    let put = c
        .put_tool(b, "forecast", "v1", &http_put("forecast"))
        .unwrap();
    let many = c
        .put_tools(b, [("radar", "v1", http_put("radar"))])
        .unwrap();
    let patched = c.patch_tool(b, "radar", "v1", false).unwrap();
    let bundle = c.bundle(b).unwrap();
    for t in [
        put.created_at,
        put.modified_at,
        many[0].created_at,
        patched.modified_at,
    ]
    .into_iter()
    .chain([bundle.created_at, bundle.modified_at])
    {
        assert_eq!(t.timestamp_subsec_nanos() % 1_000, 0, "{t:?}");
    }
    let again = open_bare(dir.path());
    assert_eq!(again.tool(put.id).unwrap(), put);
    assert_eq!(again.head(patched.id).unwrap(), c.head(patched.id).unwrap());
}
