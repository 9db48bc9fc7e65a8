//! The flat-file store ([`FileStore`]): the layout, atomic writes and the cross-process
//! lock.
//!
//! ```text
//! <root>/
//!   catalog.lock                      lock file: shared to read, exclusive to write
//!   generation                        "<counter> <uuid>": changes before every write
//!   batch-journal.json                the renames of a batch being committed (see below)
//!   builtin-overlay.json              enabled flags of built-in bundles and tools
//!   tenants.json                      tenants, their limits and token digests (mode 0600)
//!   bundles/<bundle-id>/bundle.json   one bundle
//!   bundles/<bundle-id>/tools/<tool-id>.json   one tool version (the spec's tool.json)
//!   usage/<tool-id>.json              call count and latest call of one tool
//! ```
//!
//! Every file is written to a temporary file in the same directory, synced, renamed over
//! the target and the directory synced, so a reader sees the old file or the new one and a
//! crash never leaves half a file. Temporary files start with `.` and are ignored.
//!
//! A [`Batch`] of many files is all or nothing across crashes too: once its temporary
//! files are durable, it writes a redo journal (`batch-journal.json`, each temporary
//! file's rename, relative to the root) atomically, then renames, syncs the directories
//! and removes the journal. Whoever next takes the file lock, to read or to write, first
//! rolls a journal it finds forward ([`FileStore::lock_shared`], [`FileStore::lock_exclusive`]):
//! no load ever sees half a batch. A crash before the journal leaves only temporary files
//! (and maybe an empty new bundle directory), which loading ignores and the reaper
//! removes ([`FileStore::remove_temp_files`], [`FileStore::remove_unfinished_bundles`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use toolscout_spec::adapters::tool_file::ToolFile;
use uuid::Uuid;

use crate::tenant::{TENANTS_SCHEMA, TenantRecord, TenantsFile};

use super::{
    BundleFile, CatalogStore, FoundBundle, FoundTool, Known, Loaded, Marks, Overlay, StoreKey,
    StoreRead, StoreWrite,
};
use crate::events::CatalogEvent;
use crate::journal::{JOURNAL, Journal};
use crate::model::{LoadIssue, ToolHead, Usage};
use crate::{Error, Result};

/// What tells one version of a file from another without reading it. Files are
/// replaced by rename, so a changed file is a new inode with a new time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileKey {
    pub(crate) len: u64,
    pub(crate) modified: Option<std::time::SystemTime>,
    pub(crate) inode: u64,
}

impl FileKey {
    pub(crate) fn of(path: &Path) -> Option<FileKey> {
        let meta = fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some(FileKey {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode,
        })
    }
}

/// The catalog directory.
#[derive(Debug)]
pub(crate) struct FileStore {
    root: PathBuf,
}

/// A held file lock; dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct LockGuard {
    _file: File,
}

impl FileStore {
    /// Opens `root`, creating it and its subdirectories when missing.
    pub(crate) fn open(root: &Path) -> Result<FileStore> {
        let store = FileStore {
            root: root.to_owned(),
        };
        for dir in [root.to_owned(), store.bundles_dir(), store.usage_dir()] {
            fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        Ok(store)
    }

    fn bundles_dir(&self) -> PathBuf {
        self.root.join("bundles")
    }

    fn usage_dir(&self) -> PathBuf {
        self.root.join("usage")
    }

    pub(crate) fn bundle_dir(&self, bundle: Uuid) -> PathBuf {
        self.bundles_dir().join(bundle.to_string())
    }

    pub(crate) fn bundle_path(&self, bundle: Uuid) -> PathBuf {
        self.bundle_dir(bundle).join("bundle.json")
    }

    pub(crate) fn tool_path(&self, bundle: Uuid, tool: Uuid) -> PathBuf {
        tool_path(&self.root, bundle, tool)
    }

    pub(crate) fn usage_path(&self, tool: Uuid) -> PathBuf {
        self.usage_dir().join(format!("{tool}.json"))
    }

    fn overlay_path(&self) -> PathBuf {
        self.root.join("builtin-overlay.json")
    }

    fn tenants_path(&self) -> PathBuf {
        self.root.join("tenants.json")
    }

    fn generation_path(&self) -> PathBuf {
        self.root.join("generation")
    }

    fn journal_path(&self) -> PathBuf {
        self.root.join(JOURNAL)
    }

    fn lock(&self, exclusive: bool) -> Result<LockGuard> {
        let path = self.root.join("catalog.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let locked = if exclusive {
            file.lock()
        } else {
            file.lock_shared()
        };
        locked.map_err(|e| Error::io(&path, e))?;
        Ok(LockGuard { _file: file })
    }

    /// Blocks until no other process writes; other processes may read meanwhile. A
    /// batch that a killed writer left half done is completed first.
    pub(crate) fn lock_shared(&self) -> Result<LockGuard> {
        loop {
            let guard = self.lock(false)?;
            if !self.journal_path().exists() {
                return Ok(guard);
            }
            // The writer that left the journal is gone (it held the exclusive lock until
            // it died): roll its batch forward under the exclusive lock, then read.
            drop(guard);
            let exclusive = self.lock(true)?;
            self.roll_forward()?;
            drop(exclusive);
            // Look again under the shared lock: between the two locks another writer may
            // have come, and died too.
        }
    }

    /// Blocks until this process is the only one reading or writing. A batch that a
    /// killed writer left half done is completed first.
    pub(crate) fn lock_exclusive(&self) -> Result<LockGuard> {
        let guard = self.lock(true)?;
        self.roll_forward()?;
        Ok(guard)
    }

    /// Completes the batch whose journal is in the root, if there is one: each rename
    /// whose temporary file is still there is done, the directories are synced, the
    /// generation moves on (so that every process reads the directory again) and the
    /// journal goes. Returns whether there was one. Call with the exclusive lock held.
    ///
    /// The journal is read as hostile input: a journal with an entry that is absolute,
    /// climbs with `..`, or leads out of the root is refused whole ([`Error::Journal`]),
    /// and nothing of it is applied.
    pub(crate) fn roll_forward(&self) -> Result<bool> {
        let path = self.journal_path();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let journal: Journal = serde_json::from_slice(&bytes).map_err(|e| Error::Journal {
            path: path.clone(),
            reason: format!("not a batch journal: {e}"),
        })?;
        let renames = journal
            .resolve(&self.root)
            .map_err(|reason| Error::Journal {
                path: path.clone(),
                reason,
            })?;
        let mut dirs = BTreeSet::new();
        for (dir, tmp, name) in &renames {
            match fs::rename(dir.join(tmp), dir.join(name)) {
                Ok(()) => {}
                // Renamed before the crash.
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(dir.join(name), e)),
            }
            dirs.insert(dir.clone());
        }
        for dir in &dirs {
            sync_dir(dir)?;
        }
        self.bump_stamp(self.stamp()?.as_deref())?;
        fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        sync_dir(&self.root)?;
        Ok(true)
    }

    /// The generation stamp, `None` before the first write.
    pub(crate) fn stamp(&self) -> Result<Option<String>> {
        let path = self.generation_path();
        match fs::read_to_string(&path) {
            Ok(s) => Ok(Some(s.trim().to_owned())),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&path, e)),
        }
    }

    /// Writes a new stamp after `previous` and returns it with its counter.
    pub(crate) fn bump_stamp(&self, previous: Option<&str>) -> Result<(String, u64)> {
        let counter = previous
            .and_then(|s| s.split_whitespace().next())
            .and_then(|c| c.parse::<u64>().ok())
            .unwrap_or(0)
            + 1;
        let stamp = format!("{counter} {}", Uuid::now_v7());
        write_atomic(&self.generation_path(), stamp.as_bytes())?;
        Ok((stamp, counter))
    }

    pub(crate) fn write_json<T: Serialize>(&self, path: &Path, value: &T) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| Error::Json {
            path: path.to_owned(),
            source: e,
        })?;
        bytes.push(b'\n');
        if let Some(dir) = path.parent()
            && !dir.exists()
        {
            fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            if let Some(parent) = dir.parent() {
                sync_dir(parent)?;
                if let Some(grand) = parent.parent() {
                    sync_dir(grand)?;
                }
            }
        }
        write_atomic(path, &bytes)
    }

    /// Starts a [`Batch`] of files written together.
    pub(crate) fn batch(&self) -> Batch<'_> {
        Batch {
            store: self,
            pending: Vec::new(),
            dirs: BTreeSet::new(),
        }
    }

    pub(crate) fn write_overlay(&self, overlay: &Overlay) -> Result<()> {
        self.write_json(&self.overlay_path(), overlay)
    }

    /// Removes a file and syncs its directory; a missing file is not an error.
    pub(crate) fn remove_file(&self, path: &Path) -> Result<()> {
        match fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(path, e)),
        }
        match path.parent() {
            Some(dir) => sync_dir(dir),
            None => Ok(()),
        }
    }

    /// Removes a bundle directory if it holds nothing but `bundle.json` and an empty
    /// `tools/`. Returns whether it did.
    pub(crate) fn remove_empty_bundle(&self, bundle: Uuid) -> Result<bool> {
        let dir = self.bundle_dir(bundle);
        let tools = dir.join("tools");
        for entry in read_dir_names(&dir)? {
            if entry != "bundle.json" && entry != "tools" {
                return Ok(false);
            }
        }
        if tools.exists() {
            if !read_dir_names(&tools)?.is_empty() {
                return Ok(false);
            }
            fs::remove_dir(&tools).map_err(|e| Error::io(&tools, e))?;
        }
        self.remove_file(&dir.join("bundle.json"))?;
        fs::remove_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        sync_dir(&self.bundles_dir())?;
        Ok(true)
    }

    /// Removes the temporary files that writers killed half-way left behind. Call with
    /// the exclusive lock held: then no write is in progress and every one is stale.
    pub(crate) fn remove_temp_files(&self) -> Result<usize> {
        let mut dirs = vec![self.root.clone(), self.usage_dir(), self.bundles_dir()];
        for name in read_dir_names(&self.bundles_dir())? {
            let dir = self.bundles_dir().join(name);
            if dir.is_dir() {
                dirs.push(dir.join("tools"));
                dirs.push(dir);
            }
        }
        let mut removed = 0;
        for dir in dirs {
            let entries = match fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&dir, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(&dir, e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && name.ends_with(".tmp") {
                    let path = entry.path();
                    fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// Removes the bundle directories that batches killed before their journal made and
    /// left without `bundle.json` or any tool file. Call with the exclusive lock held, after
    /// [`FileStore::remove_temp_files`]. Returns how many it removed.
    pub(crate) fn remove_unfinished_bundles(&self) -> Result<usize> {
        let mut removed = 0;
        for name in read_dir_names(&self.bundles_dir())? {
            let dir = self.bundles_dir().join(name);
            if !dir.is_dir() || dir.join("bundle.json").exists() || !unfinished_bundle(&dir)? {
                continue;
            }
            let tools = dir.join("tools");
            let mut gone = true;
            for empty in [&tools, &dir] {
                match fs::remove_dir(empty) {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    // A hidden file that is not ours: the directory is left as it is.
                    Err(e) if e.kind() == ErrorKind::DirectoryNotEmpty => gone = false,
                    Err(e) => return Err(Error::io(empty, e)),
                }
            }
            removed += usize::from(gone);
        }
        if removed > 0 {
            sync_dir(&self.bundles_dir())?;
        }
        Ok(removed)
    }

    /// Reads one usage file; a missing one is zero.
    pub(crate) fn read_usage(&self, tool: Uuid) -> Result<Usage> {
        let path = self.usage_path(tool);
        match fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|e| Error::Json { path, source: e })
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Usage::default()),
            Err(e) => Err(Error::io(&path, e)),
        }
    }

    /// Reads the whole catalog. Files that cannot be used become [`LoadIssue`]s; only a
    /// directory that cannot be listed is an error. Tool files whose key `known` holds
    /// are not read again. With `tools`, the tool directories are not listed: each
    /// bundle's tools are these (from a snapshot taken at the current generation).
    fn load_with(
        &self,
        known: &Known,
        mut tools: Option<BTreeMap<Uuid, Vec<FoundTool>>>,
    ) -> Result<Loaded> {
        let mut loaded = Loaded {
            stamp: self.stamp()?,
            ..Loaded::default()
        };
        let overlay_path = self.overlay_path();
        if overlay_path.exists() {
            match read_json::<Overlay>(&overlay_path) {
                Ok(o) => loaded.overlay = o,
                Err(reason) => loaded.issues.push(issue(&overlay_path, reason)),
            }
        }
        let tenants_path = self.tenants_path();
        if tenants_path.exists() {
            match read_json::<TenantsFile>(&tenants_path) {
                Ok(f) if f.schema_version == TENANTS_SCHEMA => loaded.tenants = f.tenants,
                Ok(f) => loaded.issues.push(issue(
                    &tenants_path,
                    format!(
                        "schema {:?}, not {TENANTS_SCHEMA:?}: no tenant can sign in",
                        f.schema_version
                    ),
                )),
                Err(reason) => loaded.issues.push(issue(
                    &tenants_path,
                    format!("{reason}: no tenant can sign in"),
                )),
            }
        }
        for name in read_dir_names(&self.bundles_dir())? {
            let path = self.bundles_dir().join(&name);
            let listed = tools.as_mut().map(|by_bundle| {
                name.parse::<Uuid>()
                    .ok()
                    .and_then(|id| by_bundle.remove(&id))
                    .unwrap_or_default()
            });
            if let Some(b) = self.load_bundle(&name, &path, known, listed, &mut loaded.issues)? {
                loaded.bundles.push(b);
            }
        }
        for name in read_dir_names(&self.usage_dir())? {
            let path = self.usage_dir().join(&name);
            let Some(id) = json_stem(&name) else {
                loaded
                    .issues
                    .push(issue(&path, "not a usage file (<tool-id>.json)"));
                continue;
            };
            match read_json::<Usage>(&path) {
                Ok(u) => {
                    loaded.usage.insert(id, u);
                }
                Err(reason) => loaded.issues.push(issue(&path, reason)),
            }
        }
        Ok(loaded)
    }

    fn load_bundle(
        &self,
        name: &str,
        path: &Path,
        known: &Known,
        listed: Option<Vec<FoundTool>>,
        issues: &mut Vec<LoadIssue>,
    ) -> Result<Option<FoundBundle>> {
        let Ok(id) = name.parse::<Uuid>() else {
            issues.push(issue(path, "not a bundle directory (<bundle-id>)"));
            return Ok(None);
        };
        if !path.is_dir() {
            issues.push(issue(path, "not a bundle directory (<bundle-id>)"));
            return Ok(None);
        }
        let file_path = path.join("bundle.json");
        if !file_path.exists() && unfinished_bundle(path)? {
            // A batch that made the directory and died before its journal: nothing of it
            // was committed, and the same write made again uses the directory as it is.
            return Ok(None);
        }
        let file = match read_json::<BundleFile>(&file_path) {
            Ok(f) if f.bundle_id == id => f,
            Ok(f) => {
                issues.push(issue(
                    &file_path,
                    format!("bundleID {} does not match its directory", f.bundle_id),
                ));
                return Ok(None);
            }
            Err(reason) => {
                issues.push(issue(&file_path, reason));
                return Ok(None);
            }
        };
        if let Some(tools) = listed {
            return Ok(Some(FoundBundle {
                path: Some(path.to_owned()),
                file,
                tools,
            }));
        }
        let mut tools = Vec::new();
        let tools_dir = path.join("tools");
        if tools_dir.is_dir() {
            for name in read_dir_names(&tools_dir)? {
                let tool_path = tools_dir.join(&name);
                let Some(tool_id) = json_stem(&name) else {
                    issues.push(issue(&tool_path, "not a tool file (<tool-id>.json)"));
                    continue;
                };
                let key = FileKey::of(&tool_path).map(StoreKey::File);
                if known.holds(tool_id, id, key.as_ref()) {
                    tools.push(FoundTool {
                        id: tool_id,
                        path: Some(tool_path),
                        key,
                        file: None,
                        head: None,
                    });
                    continue;
                }
                match read_json::<ToolFile>(&tool_path) {
                    Ok(f) if f.bundle_id != id => issues.push(issue(
                        &tool_path,
                        format!("bundleID {} does not match its bundle {id}", f.bundle_id),
                    )),
                    Ok(f) if f.tool_id.is_some_and(|t| t != tool_id) => issues.push(issue(
                        &tool_path,
                        "toolID does not match the file name".to_owned(),
                    )),
                    Ok(f) => tools.push(FoundTool {
                        id: tool_id,
                        path: Some(tool_path),
                        key,
                        file: Some(f),
                        head: None,
                    }),
                    Err(reason) => issues.push(issue(&tool_path, reason)),
                }
            }
        }
        Ok(Some(FoundBundle {
            path: Some(path.to_owned()),
            file,
            tools,
        }))
    }
}

/// The directory under the file lock: shared for a read, exclusive for a write. Every
/// step of a write is durable when it returns (a file renamed into place, a batch under
/// its journal), so committing only releases the lock.
#[derive(Debug)]
struct Locked<'a> {
    store: &'a FileStore,
    _lock: LockGuard,
}

impl CatalogStore for FileStore {
    fn local_dir(&self) -> &Path {
        &self.root
    }

    fn read(&self) -> Result<Box<dyn StoreRead + '_>> {
        Ok(Box::new(Locked {
            store: self,
            _lock: self.lock_shared()?,
        }))
    }

    fn write(&self) -> Result<Box<dyn StoreWrite + '_>> {
        Ok(Box::new(Locked {
            store: self,
            _lock: self.lock_exclusive()?,
        }))
    }

    fn read_tool(&self, bundle: Uuid, tool: Uuid) -> Result<ToolFile> {
        let path = self.tool_path(bundle, tool);
        let bytes = fs::read(&path).map_err(|e| Error::io(&path, e))?;
        serde_json::from_slice(&bytes).map_err(|source| Error::Json { path, source })
    }

    fn tool_path(&self, bundle: Uuid, tool: Uuid) -> Option<PathBuf> {
        Some(FileStore::tool_path(self, bundle, tool))
    }

    fn add_usage(&self, deltas: &BTreeMap<Uuid, Usage>) -> Result<BTreeMap<Uuid, Usage>> {
        let _lock = self.lock_exclusive()?;
        let mut totals = BTreeMap::new();
        for (id, delta) in deltas {
            // A usage file that cannot be read starts again from zero.
            let mut u = self.read_usage(*id).unwrap_or_default();
            u.call_count += delta.call_count;
            u.last_called_at = u.last_called_at.max(delta.last_called_at);
            self.write_json(&self.usage_path(*id), &u)?;
            totals.insert(*id, u);
        }
        Ok(totals)
    }

    fn marks(&self, bundles: &mut dyn Iterator<Item = Uuid>) -> Marks {
        let mut dirs = vec!["bundles".to_owned()];
        dirs.extend(bundles.map(|b| format!("bundles/{b}/tools")));
        dirs.into_iter()
            .map(|d| {
                let t = modified(&self.root.join(&d));
                (d, t)
            })
            .collect()
    }

    fn wait_for_change(&self, stamp: Option<&str>, _generation: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            // Without the lock: a stamp read half-written only means a look too many.
            if self.stamp().ok().flatten().as_deref() != stamp {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(200)));
        }
    }

    fn marks_hold(&self, marks: &Marks) -> bool {
        marks
            .iter()
            .all(|(dir, t)| modified(&self.root.join(dir)) == *t)
    }
}

/// A directory's modification time, `None` when it is missing.
fn modified(dir: &Path) -> Option<std::time::SystemTime> {
    fs::metadata(dir).and_then(|m| m.modified()).ok()
}

impl StoreRead for Locked<'_> {
    fn stamp(&mut self) -> Result<Option<String>> {
        self.store.stamp()
    }

    fn load(
        &mut self,
        known: &Known,
        listed: Option<BTreeMap<Uuid, Vec<FoundTool>>>,
    ) -> Result<Loaded> {
        self.store.load_with(known, listed)
    }
}

impl StoreWrite for Locked<'_> {
    fn bump(&mut self, previous: Option<&str>) -> Result<(String, u64)> {
        self.store.bump_stamp(previous)
    }

    fn put_bundle(&mut self, bundle: &BundleFile) -> Result<()> {
        self.store
            .write_json(&self.store.bundle_path(bundle.bundle_id), bundle)
    }

    fn put_tool(&mut self, head: &ToolHead, file: &ToolFile) -> Result<Option<StoreKey>> {
        let path = FileStore::tool_path(self.store, file.bundle_id, head.id);
        self.store.write_json(&path, file)?;
        Ok(FileKey::of(&path).map(StoreKey::File))
    }

    fn put_tools(
        &mut self,
        bundle: Option<&BundleFile>,
        bundle_id: Uuid,
        tools: Vec<(&ToolHead, ToolFile)>,
    ) -> Result<Vec<Option<StoreKey>>> {
        let mut batch = self.store.batch();
        if let Some(b) = bundle {
            batch.write_json(&self.store.bundle_path(b.bundle_id), b)?;
        }
        let mut ids = Vec::with_capacity(tools.len());
        for (head, file) in tools {
            batch.write_json(&FileStore::tool_path(self.store, bundle_id, head.id), &file)?;
            ids.push(head.id);
        }
        batch.commit()?;
        Ok(ids
            .into_iter()
            .map(|id| FileKey::of(&FileStore::tool_path(self.store, bundle_id, id)))
            .map(|key| key.map(StoreKey::File))
            .collect())
    }

    fn put_overlay(&mut self, overlay: &Overlay) -> Result<()> {
        self.store.write_overlay(overlay)
    }

    fn put_tenant(&mut self, _tenant: &TenantRecord, all: &[&TenantRecord]) -> Result<()> {
        let file = TenantsFile {
            schema_version: TENANTS_SCHEMA.to_owned(),
            tenants: all.iter().map(|t| (*t).clone()).collect(),
        };
        let path = self.store.tenants_path();
        let mut bytes = serde_json::to_vec_pretty(&file).map_err(|e| Error::Json {
            path: path.clone(),
            source: e,
        })?;
        bytes.push(b'\n');
        // Only the owner reads the token digests.
        write_atomic_with(&path, &bytes, true)
    }

    fn remove_tool(&mut self, bundle: Uuid, tool: Uuid) -> Result<()> {
        self.store
            .remove_file(&FileStore::tool_path(self.store, bundle, tool))?;
        self.store.remove_file(&self.store.usage_path(tool))
    }

    fn remove_empty_bundle(&mut self, bundle: Uuid) -> Result<bool> {
        self.store.remove_empty_bundle(bundle)
    }

    fn clean_up(&mut self) -> Result<()> {
        self.store.remove_temp_files()?;
        self.store.remove_unfinished_bundles()?;
        Ok(())
    }

    fn commit(self: Box<Self>, _generation: Option<u64>, _events: &[CatalogEvent]) -> Result<()> {
        Ok(())
    }
}

/// Whether the bundle directory `dir` holds nothing but hidden (temporary) entries and a
/// `tools/` directory holding nothing but those: what a batch that created it leaves when
/// it dies before its journal.
fn unfinished_bundle(dir: &Path) -> Result<bool> {
    match read_dir_names(dir)?.as_slice() {
        [] => Ok(true),
        [only] if only == "tools" => {
            let tools = dir.join("tools");
            Ok(tools.is_dir() && read_dir_names(&tools)?.is_empty())
        }
        _ => Ok(false),
    }
}

/// Where the tool `tool` of `bundle` is stored in the catalog directory `root`.
fn tool_path(root: &Path, bundle: Uuid, tool: Uuid) -> PathBuf {
    root.join("bundles")
        .join(bundle.to_string())
        .join("tools")
        .join(format!("{tool}.json"))
}

fn issue(path: &Path, reason: impl Into<String>) -> LoadIssue {
    LoadIssue {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// `<uuid>.json` → the uuid.
fn json_stem(name: &str) -> Option<Uuid> {
    name.strip_suffix(".json")?.parse().ok()
}

fn read_json<T: DeserializeOwned>(path: &Path) -> std::result::Result<T, String> {
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| format!("malformed or foreign file: {e}"))
}

/// The names in `dir`, sorted, without hidden (temporary) entries. A missing directory
/// is empty.
fn read_dir_names(dir: &Path) -> Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Many files written as one: each to a temporary file, then one sync of the file system
/// (of each file where that is not available), then the journal of the renames, every
/// rename, one sync of each directory, and the journal's removal. All or nothing, even
/// across a crash (the next lock completes a journalled batch), without a sync per file:
/// a bulk import of 92k tools pays one.
///
/// Dropped without [`Batch::commit`], it removes its temporary files.
pub(crate) struct Batch<'a> {
    store: &'a FileStore,
    /// (temporary file, final path)
    pending: Vec<(PathBuf, PathBuf)>,
    dirs: BTreeSet<PathBuf>,
}

impl Batch<'_> {
    /// Writes `value` as JSON to a temporary file beside `path`; it replaces `path` at
    /// [`Batch::commit`].
    pub(crate) fn write_json<T: Serialize>(&mut self, path: &Path, value: &T) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| Error::Json {
            path: path.to_owned(),
            source: e,
        })?;
        bytes.push(b'\n');
        let dir = path.parent().unwrap_or(Path::new("."));
        if !self.dirs.contains(dir) {
            if !dir.exists() {
                fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
                // The new directories' entries in their parents.
                let mut up = dir.parent();
                while let Some(parent) = up {
                    self.dirs.insert(parent.to_owned());
                    if parent == self.store.root {
                        break;
                    }
                    up = parent.parent();
                }
            }
            self.dirs.insert(dir.to_owned());
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}.tmp", Uuid::now_v7().simple()));
        self.pending.push((tmp.clone(), path.to_owned()));
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io(&tmp, e))?;
        f.write_all(&bytes).map_err(|e| Error::io(&tmp, e))
    }

    /// Makes every file durable and puts it in place, all or nothing even if the process
    /// dies: the temporary files are synced, the journal of their renames written, the
    /// renames done, the directories synced, and the journal removed (see the module's
    /// documentation). An error once the journal is written leaves it, and the temporary
    /// files, for the next lock to complete.
    pub(crate) fn commit(mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let root = &self.store.root;
        sync_files(root, self.pending.iter().map(|(tmp, _)| tmp.as_path()))?;
        // The temporary files' names, and the new directories holding them, are durable
        // before the journal names them (`syncfs` covers this on Linux; elsewhere it is
        // what makes a new directory's entry stay).
        for dir in self.dirs.iter().rev() {
            sync_dir(dir)?;
        }
        let journal = Journal::of(root, &self.pending)?.to_bytes(root)?;
        #[cfg(test)]
        if crate::journal::crashes_before_journal() {
            // Killed here: the temporary files stay, as a dead process leaves them.
            self.pending.clear();
            return Err(simulated_crash(root));
        }
        write_atomic(&self.store.journal_path(), &journal)?;
        // Committed: the temporary files now belong to the journal, not to `Drop`.
        let pending = std::mem::take(&mut self.pending);
        for (tmp, path) in &pending {
            #[cfg(test)]
            if crate::journal::crashes_before_rename() {
                return Err(simulated_crash(root));
            }
            fs::rename(tmp, path).map_err(|e| Error::io(path, e))?;
        }
        for dir in std::mem::take(&mut self.dirs).iter().rev() {
            sync_dir(dir)?;
        }
        let journal_path = self.store.journal_path();
        fs::remove_file(&journal_path).map_err(|e| Error::io(&journal_path, e))?;
        sync_dir(root)
    }
}

/// The error of a commit that a test stopped as if its process were killed.
#[cfg(test)]
fn simulated_crash(root: &Path) -> Error {
    Error::io(root, std::io::Error::other("simulated crash"))
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        for (tmp, _) in &self.pending {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// Makes the data of `files` durable: one `syncfs` of the file system holding `root` on
/// Linux, an fsync of each file elsewhere.
fn sync_files<'a>(root: &Path, files: impl Iterator<Item = &'a Path>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        let _ = files;
        let dir = File::open(root).map_err(|e| Error::io(root, e))?;
        rustix::fs::syncfs(&dir).map_err(|e| Error::io(root, e.into()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = root;
        for f in files {
            File::open(f)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(f, e))?;
        }
        Ok(())
    }
}

/// Temporary file, write, fsync, rename, directory fsync.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, bytes, false)
}

/// [`write_atomic`]; with `private`, the file is readable by its owner only (mode 0600
/// on Unix) from the moment it is made.
fn write_atomic_with(path: &Path, bytes: &[u8], private: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", Uuid::now_v7().simple()));
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if private {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        #[cfg(not(unix))]
        let _ = private;
        let mut f = options.open(&tmp).map_err(|e| Error::io(&tmp, e))?;
        f.write_all(bytes).map_err(|e| Error::io(&tmp, e))?;
        f.sync_all().map_err(|e| Error::io(&tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(dir)
}

/// Makes a directory's entries durable (a rename or a new file in it).
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
