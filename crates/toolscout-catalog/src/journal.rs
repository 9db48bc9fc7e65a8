//! The redo journal of a [`crate::store::files::Batch`]: which temporary file becomes which file.
//!
//! ```text
//! <root>/batch-journal.json
//! {"format": "toolscout.batch-journal/1",
//!  "renames": {"bundles/<bundle-id>/tools": [[".<tool-id>.json.<uuid>.tmp", "<tool-id>.json"], …], …}}
//! ```
//!
//! Directories are relative to the catalog root, `/`-separated (`""` is the root itself);
//! a rename never leaves its directory. The journal is written only once every temporary
//! file it names is durable, and removed once every rename is; in between, whoever takes
//! the file lock completes it ([`crate::store::files::FileStore::roll_forward`]).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The journal's file name, in the catalog root.
pub(crate) const JOURNAL: &str = "batch-journal.json";

/// The `format` of a journal.
const FORMAT: &str = "toolscout.batch-journal/1";

/// One batch's renames.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Journal {
    format: String,
    /// Directory → (temporary name, final name) of each file in it.
    renames: BTreeMap<String, Vec<(String, String)>>,
}

impl Journal {
    /// The journal of `pending` (temporary file, final path) pairs under `root`.
    pub(crate) fn of(root: &Path, pending: &[(PathBuf, PathBuf)]) -> Result<Journal> {
        let mut renames: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for (tmp, path) in pending {
            // Never met: the store makes every path under its root. Said as what it is.
            let refuse = |reason: &str| {
                Error::io(
                    path,
                    std::io::Error::other(format!("cannot be journalled: {reason}")),
                )
            };
            let (Some(dir), Some(tmp_name), Some(name)) =
                (path.parent(), file_name(tmp), file_name(path))
            else {
                return Err(refuse("not a file in a directory"));
            };
            if tmp.parent() != Some(dir) {
                return Err(refuse("its temporary file is in another directory"));
            }
            let relative = dir
                .strip_prefix(root)
                .map_err(|_| refuse("outside the catalog root"))?;
            let mut parts = Vec::new();
            for c in relative.components() {
                match c {
                    Component::Normal(p) => parts.push(
                        p.to_str()
                            .ok_or_else(|| refuse("not a UTF-8 path"))?
                            .to_owned(),
                    ),
                    _ => return Err(refuse("not a plain path under the root")),
                }
            }
            renames
                .entry(parts.join("/"))
                .or_default()
                .push((tmp_name.to_owned(), name.to_owned()));
        }
        Ok(Journal {
            format: FORMAT.to_owned(),
            renames,
        })
    }

    /// The journal's bytes.
    pub(crate) fn to_bytes(&self, root: &Path) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| Error::Json {
            path: root.join(JOURNAL),
            source: e,
        })
    }

    /// The renames to do, as (directory, temporary name, final name), each directory
    /// checked to be inside `root` (symbolic links resolved). A directory that is gone
    /// holds nothing to rename and is left out.
    ///
    /// The journal comes from disk, so it is checked as hostile input: an error for the
    /// first entry that is not one this crate writes (another format, an absolute path,
    /// `..`, a name with a separator, a temporary name that is not one, a directory that
    /// leads out of the root).
    pub(crate) fn resolve(
        self,
        root: &Path,
    ) -> std::result::Result<Vec<(PathBuf, String, String)>, String> {
        if self.format != FORMAT {
            return Err(format!(
                "unknown format {:?}, expected {FORMAT:?}",
                self.format
            ));
        }
        let real_root = std::fs::canonicalize(root)
            .map_err(|e| format!("the catalog root cannot be resolved: {e}"))?;
        let mut out = Vec::new();
        for (dir, files) in self.renames {
            let mut path = root.to_owned();
            if !dir.is_empty() {
                for part in dir.split('/') {
                    if !is_plain_name(part) {
                        return Err(format!(
                            "directory {dir:?} is not a plain path under the root"
                        ));
                    }
                    path.push(part);
                }
            }
            let real = match std::fs::canonicalize(&path) {
                Ok(r) => r,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("directory {dir:?} cannot be resolved: {e}")),
            };
            if !real.starts_with(&real_root) {
                return Err(format!("directory {dir:?} leads out of the catalog root"));
            }
            for (tmp, name) in files {
                if !is_plain_name(&tmp) || !tmp.starts_with('.') || !tmp.ends_with(".tmp") {
                    return Err(format!("{dir:?}: {tmp:?} is not a temporary file's name"));
                }
                if !is_plain_name(&name) || name.starts_with('.') {
                    return Err(format!("{dir:?}: {name:?} is not a catalog file's name"));
                }
                out.push((path.clone(), tmp, name));
            }
        }
        Ok(out)
    }
}

/// A path's last component as a string.
fn file_name(path: &Path) -> Option<&str> {
    path.file_name().and_then(|n| n.to_str())
}

/// Whether `part` is one ordinary path component: not empty, not `.` or `..`, no
/// separator (of any platform), no drive or root.
fn is_plain_name(part: &str) -> bool {
    if part.contains(['/', '\\', '\0']) {
        return false;
    }
    let mut components = Path::new(part).components();
    matches!(
        (components.next(), components.next()),
        (Some(Component::Normal(p)), None) if p == part
    )
}

/// Where a test makes [`crate::store::files::Batch::commit`] stop as if its process were
/// killed: the files are left as they are at that point and the commit fails.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Crash {
    /// Every temporary file written and synced, no journal yet.
    BeforeJournal,
    /// The journal written and this many renames done.
    AfterRenames(usize),
}

#[cfg(test)]
thread_local! {
    /// The crash the next commit on this thread simulates.
    static CRASH: std::cell::Cell<Option<Crash>> = const { std::cell::Cell::new(None) };
}

/// Makes the next commit on this thread stop at `crash`.
#[cfg(test)]
pub(crate) fn crash_next_commit(crash: Crash) {
    CRASH.with(|c| c.set(Some(crash)));
}

/// Whether the commit in progress stops before its journal; the crash is then used up.
#[cfg(test)]
pub(crate) fn crashes_before_journal() -> bool {
    CRASH.with(|c| {
        let due = c.get() == Some(Crash::BeforeJournal);
        if due {
            c.set(None);
        }
        due
    })
}

/// Whether the commit in progress stops before its next rename; the crash is then used
/// up.
#[cfg(test)]
pub(crate) fn crashes_before_rename() -> bool {
    CRASH.with(|c| match c.get() {
        Some(Crash::AfterRenames(0)) => {
            c.set(None);
            true
        }
        Some(Crash::AfterRenames(k)) => {
            c.set(Some(Crash::AfterRenames(k - 1)));
            false
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::{BundlePut, Catalog, CatalogOptions, ToolPut};

    fn bare(dir: &Path) -> Catalog {
        Catalog::open_with(dir, CatalogOptions::default().with_builtins(false)).unwrap()
    }

    fn put(name: &str) -> ToolPut {
        let spec = toolscout_spec::ToolSpec::builder(name, format!("Does {name}"))
            .build()
            .unwrap();
        ToolPut::http(
            spec,
            serde_json::json!({"urlTemplate": "https://api.example.com/x"}),
        )
    }

    /// A ZIP of a bundle of `n` tools.
    fn archive(n: usize) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let c = bare(dir.path());
        let b = uuid::Uuid::now_v7();
        c.put_bundle(b, &BundlePut::new("many")).unwrap();
        let puts: Vec<_> = (0..n)
            .map(|i| (format!("t{i}"), "1", put(&format!("t_{i}"))))
            .collect();
        c.put_tools(b, puts).unwrap();
        let mut buf = Cursor::new(Vec::new());
        c.export_bundle(b, &mut buf).unwrap();
        buf.into_inner()
    }

    /// The visible files under `dir`, recursively, and the temporary ones.
    fn files(dir: &Path) -> (usize, usize) {
        let mut n = (0, 0);
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                let (v, t) = files(&entry.path());
                n = (n.0 + v, n.1 + t);
            } else if name.ends_with(".tmp") {
                n.1 += 1;
            } else if name.ends_with(".json") {
                n.0 += 1;
            }
        }
        n
    }

    #[test]
    fn an_import_stopped_mid_rename_is_completed_by_the_next_reader() {
        let zip = archive(50);
        let dir = tempfile::tempdir().unwrap();
        let c = bare(dir.path());
        crash_next_commit(Crash::AfterRenames(20));
        assert!(c.import_bundle(Cursor::new(&zip)).is_err());
        let bundles = dir.path().join("bundles");
        // The bundle file and 19 tools in place, 31 temporary files, and the journal.
        assert_eq!(files(&bundles), (20, 31));
        assert!(dir.path().join(JOURNAL).exists());

        // Another process opens the catalog (a shared lock): it completes the import
        // before it reads.
        let other = bare(dir.path());
        assert!(other.issues().is_empty(), "{:?}", other.issues());
        assert_eq!(other.len(), 50);
        assert!(!dir.path().join(JOURNAL).exists());
        assert_eq!(files(&bundles), (51, 0));
        // The process whose commit failed reads it all again too.
        c.reload().unwrap();
        assert_eq!(c.len(), 50);
        // And the same import, run again, finds it done.
        let again = other.import_bundle(Cursor::new(&zip)).unwrap();
        assert_eq!((again.tools.len(), again.unchanged), (0, 50));
    }

    #[test]
    fn a_writer_completes_a_journal_before_its_own_write() {
        let zip = archive(5);
        let dir = tempfile::tempdir().unwrap();
        let c = bare(dir.path());
        crash_next_commit(Crash::AfterRenames(0));
        assert!(c.import_bundle(Cursor::new(&zip)).is_err());
        assert_eq!(files(&dir.path().join("bundles")), (0, 6));
        // A write (the exclusive lock) rolls the batch forward, then does its own.
        let other = bare(dir.path());
        let added = other
            .add_tools(&BundlePut::new("more"), vec![put("other")])
            .unwrap();
        assert_eq!(added.added.len(), 1);
        assert_eq!(bare(dir.path()).len(), 6);
    }

    #[test]
    fn an_import_stopped_before_its_journal_leaves_nothing_and_runs_again() {
        let zip = archive(30);
        let dir = tempfile::tempdir().unwrap();
        let c = bare(dir.path());
        crash_next_commit(Crash::BeforeJournal);
        assert!(c.import_bundle(Cursor::new(&zip)).is_err());
        let bundles = dir.path().join("bundles");
        assert_eq!(files(&bundles), (0, 31));
        // The new bundle's directory is there, empty but for temporary files: it is
        // neither a bundle nor a load issue.
        let opened = bare(dir.path());
        assert!(opened.issues().is_empty(), "{:?}", opened.issues());
        assert!(opened.is_empty());
        assert!(
            opened
                .list_bundles(&crate::BundleQuery::default())
                .unwrap()
                .items
                .is_empty()
        );
        // The same import again uses the directory as it is.
        let again = opened.import_bundle(Cursor::new(&zip)).unwrap();
        assert_eq!((again.created, again.tools.len()), (true, 30));
        // The reaper removes the dead batch's temporary files.
        opened.reap(chrono::Utc::now()).unwrap();
        assert_eq!(files(&bundles), (31, 0));
        assert!(bare(dir.path()).issues().is_empty());
    }

    #[test]
    fn add_tools_stopped_before_its_journal_leaves_no_bundle() {
        let dir = tempfile::tempdir().unwrap();
        let c = bare(dir.path());
        let puts = || vec![put("tide_times"), put("currents")];
        crash_next_commit(Crash::BeforeJournal);
        assert!(c.add_tools(&BundlePut::new("sea"), puts()).is_err());
        let opened = bare(dir.path());
        assert!(opened.issues().is_empty(), "{:?}", opened.issues());
        assert!(
            opened
                .list_bundles(&crate::BundleQuery::default())
                .unwrap()
                .items
                .is_empty()
        );
        // Run again: the bundle and its tools, once.
        let again = opened.add_tools(&BundlePut::new("sea"), puts()).unwrap();
        assert!(again.created);
        assert_eq!(again.added.len(), 2);
        // The first run's empty directory goes with the reaper.
        assert_eq!(
            std::fs::read_dir(dir.path().join("bundles"))
                .unwrap()
                .count(),
            2
        );
        opened.reap(chrono::Utc::now()).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join("bundles"))
                .unwrap()
                .count(),
            1
        );
        assert_eq!(bare(dir.path()).len(), 2);
    }

    #[test]
    fn add_tools_stopped_mid_rename_has_its_bundle_and_every_tool() {
        let dir = tempfile::tempdir().unwrap();
        let c = bare(dir.path());
        let puts = || vec![put("tide_times"), put("currents"), put("waves")];
        crash_next_commit(Crash::AfterRenames(2));
        assert!(c.add_tools(&BundlePut::new("sea"), puts()).is_err());
        let opened = bare(dir.path());
        assert_eq!(opened.len(), 3);
        let again = opened.add_tools(&BundlePut::new("sea"), puts()).unwrap();
        assert_eq!(
            (again.created, again.added.len(), again.skipped),
            (false, 0, 3)
        );
    }

    fn journal(renames: &[(&str, &str, &str)]) -> Journal {
        let mut map: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for (dir, tmp, name) in renames {
            map.entry((*dir).to_owned())
                .or_default()
                .push(((*tmp).to_owned(), (*name).to_owned()));
        }
        Journal {
            format: FORMAT.to_owned(),
            renames: map,
        }
    }

    #[test]
    fn a_journal_round_trips_relative_to_the_root() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("bundles").join("b").join("tools");
        std::fs::create_dir_all(&dir).unwrap();
        let pending = vec![(dir.join(".t.json.1.tmp"), dir.join("t.json"))];
        let j = Journal::of(root.path(), &pending).unwrap();
        let text = String::from_utf8(j.to_bytes(root.path()).unwrap()).unwrap();
        assert_eq!(
            text,
            r#"{"format":"toolscout.batch-journal/1","renames":{"bundles/b/tools":[[".t.json.1.tmp","t.json"]]}}"#
        );
        let back: Journal = serde_json::from_str(&text).unwrap();
        assert_eq!(
            back.resolve(root.path()).unwrap(),
            [(dir, ".t.json.1.tmp".to_owned(), "t.json".to_owned())]
        );
    }

    #[test]
    fn hostile_journal_entries_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("bundles")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), root.path().join("bundles").join("away"))
            .unwrap();
        let abs = outside.path().display().to_string();
        let mut cases = vec![
            ("/etc", ".x.tmp", "passwd"),
            ("..", ".x.tmp", "x.json"),
            ("bundles/../..", ".x.tmp", "x.json"),
            ("bundles//b", ".x.tmp", "x.json"),
            ("./bundles", ".x.tmp", "x.json"),
            ("bundles\\..", ".x.tmp", "x.json"),
            ("bundles", "../.x.tmp", "x.json"),
            ("bundles", ".x.tmp", "../x.json"),
            ("bundles", ".x.tmp", "/etc/passwd"),
            ("bundles", ".x.tmp", ".."),
            ("bundles", "x.json", "y.json"),
            ("bundles", ".x.tmp", ".hidden"),
            ("bundles", ".x.tmp", ""),
        ];
        cases.push((abs.as_str(), ".x.tmp", "x.json"));
        #[cfg(unix)]
        cases.push(("bundles/away", ".x.tmp", "x.json"));
        for case in cases {
            let refused = journal(&[case]).resolve(root.path());
            assert!(refused.is_err(), "{case:?} was accepted: {refused:?}");
        }
        let mut other = journal(&[("bundles", ".x.tmp", "x.json")]);
        other.format = "other/1".to_owned();
        assert!(other.resolve(root.path()).is_err());
        // A directory that is gone is nothing to do.
        assert_eq!(
            journal(&[("bundles/gone", ".x.tmp", "x.json")])
                .resolve(root.path())
                .unwrap(),
            []
        );
    }
}
