//! The heads snapshot: every stored tool's [`ToolHead`] and file key, written beside the
//! catalog for the generation it was read at, so that opening a large catalog reads one
//! file instead of every tool's.
//!
//! It is a cache, never the source of truth: it is used only when its stamp is the
//! directory's current generation stamp (read under the same file lock), and a missing,
//! stale, foreign or damaged snapshot only means the tool files are looked at again
//! (those whose key did not change are still not read).

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::model::{LoadIssue, ToolHead};
use crate::state::{RawTool, State};
use crate::store::FileKey;

/// The snapshot's file name in the catalog directory.
pub(crate) const FILE: &str = "heads.json";

/// The format tag; a snapshot with another is ignored.
const FORMAT: &str = "toolscout.heads/1";

/// What the snapshot file holds.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Snapshot {
    format: String,
    /// The generation stamp of the directory these heads were read at.
    pub(crate) stamp: String,
    tools: Vec<Entry>,
    /// What could not be used at that read.
    pub(crate) issues: Vec<LoadIssue>,
    /// The modification times of the `bundles` directory and of each bundle's `tools`
    /// directory (relative paths): a file added, removed or replaced by hand changes one.
    dirs: BTreeMap<String, Option<SystemTime>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    head: ToolHead,
    key: Option<FileKey>,
}

impl Snapshot {
    /// The snapshot in `root`, if there is a readable one of this format.
    pub(crate) fn read(root: &Path) -> Option<Snapshot> {
        // Read whole, then parsed: several times faster than parsing from a reader.
        let bytes = fs::read(root.join(FILE)).ok()?;
        let snap: Snapshot = serde_json::from_slice(&bytes).ok()?;
        (snap.format == FORMAT).then_some(snap)
    }

    /// The stored tools of `state` (built-ins are compiled in), at its stamp.
    pub(crate) fn of(state: &State) -> Option<Snapshot> {
        let mut dirs = vec!["bundles".to_owned()];
        dirs.extend(
            state
                .bundles
                .values()
                .filter(|b| !b.is_built_in)
                .map(|b| format!("bundles/{}/tools", b.id)),
        );
        let dirs = dirs
            .into_iter()
            .map(|d| {
                let t = modified(&state.root.join(&d));
                (d, t)
            })
            .collect();
        Some(Snapshot {
            dirs,
            format: FORMAT.to_owned(),
            stamp: state.stamp.clone()?,
            tools: state
                .tools
                .values()
                .filter(|raw| raw.builtin.is_none())
                .map(|raw| Entry {
                    head: raw.head.clone(),
                    key: raw.key.clone(),
                })
                .collect(),
            issues: state.issues.clone(),
        })
    }

    /// Replaces the snapshot in `root` (a temporary file renamed over it). Not synced:
    /// a snapshot lost in a crash is only a slower next open.
    pub(crate) fn write(&self, root: &Path) -> std::io::Result<()> {
        let tmp = root.join(format!(".{FILE}.{}.tmp", Uuid::now_v7().simple()));
        let result = (|| {
            let mut out = BufWriter::new(File::create_new(&tmp)?);
            serde_json::to_writer(&mut out, self)?;
            out.flush()?;
            drop(out);
            fs::rename(&tmp, root.join(FILE))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// Whether this snapshot still describes `root` at generation `stamp`: the stamp is
    /// the directory's, and no directory it read was changed since (by hand: every
    /// write of a catalog moves the stamp on).
    ///
    /// A tool file edited in place by hand (not replaced) changes no directory: it is
    /// seen at the next [`crate::Catalog::rescan`].
    pub(crate) fn is_current(&self, root: &Path, stamp: Option<&String>) -> bool {
        stamp == Some(&self.stamp)
            && self
                .dirs
                .iter()
                .all(|(dir, t)| modified(&root.join(dir)) == *t)
    }

    /// The tools, moved out, in the order they were written (by id).
    pub(crate) fn into_raws(self) -> impl Iterator<Item = RawTool> {
        self.tools.into_iter().map(|e| RawTool {
            head: e.head,
            builtin: None,
            key: e.key,
        })
    }
}

/// A directory's modification time, `None` when it is missing.
fn modified(dir: &Path) -> Option<SystemTime> {
    fs::metadata(dir).and_then(|m| m.modified()).ok()
}
