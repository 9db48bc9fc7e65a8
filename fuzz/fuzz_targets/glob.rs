//! `search_files`: its pattern check, globset's compile and a match, through the tool
//! itself over a small workspace (line 1 is the pattern); a pattern the tool accepts is
//! also matched against line 2 as a path, with the tool's glob options.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use toolscout_invoke::NativeTool;
use toolscout_invoke::builtin::{SearchFiles, SearchFilesArgs, Workspace};

struct Fixture {
    _root: tempfile::TempDir,
    tool: SearchFiles,
    runtime: tokio::runtime::Runtime,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let root = tempfile::tempdir().expect("a temporary directory");
    for file in [
        "a.rs",
        "src/main.rs",
        "src/lib/mod.rs",
        ".hidden/x.txt",
        "dir with space/{b}.md",
        "ü/ß.txt",
        "x[1]/y*.z",
        "deep/a/b/c/d/e/f/g.json",
    ] {
        let path = root.path().join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(&path, "x").expect("a file");
    }
    let workspace = Workspace::new(root.path()).expect("a workspace");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    Fixture {
        tool: SearchFiles::new(workspace),
        _root: root,
        runtime,
    }
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern, path) = text.split_once('\n').unwrap_or((text, "src/main.rs"));
    let fixture = &*FIXTURE;
    let args = SearchFilesArgs {
        pattern: pattern.to_owned(),
        path: ".".to_owned(),
        max_results: 100,
    };
    let found = fixture.runtime.block_on(fixture.tool.call(args));
    if found.is_ok()
        && let Ok(glob) = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
    {
        let _ = glob.compile_matcher().is_match(path);
    }
});
