//! The heads snapshot: every stored tool's [`ToolHead`] and file key, written beside the
//! catalog for the generation it was read at, so that opening a large catalog reads one
//! file instead of every tool's.
//!
//! It is a cache, never the source of truth: it is used only when its stamp is the
//! directory's current generation stamp (read under the same file lock), and a missing,
//! stale, foreign or damaged snapshot only means the tool files are looked at again
//! (those whose key did not change are still not read).
//!
//! **Format:** a magic line, a small JSON header (stamp, issues, directory times), then
//! every entry in a compact binary form (little-endian integers, length-prefixed UTF-8),
//! then a checksum of all that.
//! **Rationale:** on 92,589 tools the same heads as JSON were 61 MB and took about 0.4 s
//! to parse, most of the time of every command; binary, they are a third of the size and
//! decode several times faster. Any flaw in the file only means it is not used.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use toolscout_spec::adapters::tool_file::ToolType;
use uuid::Uuid;

use crate::model::{DisabledReason, LoadIssue, ToolHead};
use crate::state::{RawTool, State};
use crate::store::{CatalogStore, FileKey, Marks, StoreKey};

/// The snapshot's file name in the catalog directory.
pub(crate) const FILE: &str = "heads.bin";

/// The snapshot file of an earlier format, removed when a snapshot is written.
const OLD_FILE: &str = "heads.json";

/// The first bytes of the file; a snapshot that starts otherwise is ignored.
const MAGIC: &[u8] = b"toolscout.heads/2\n";

/// What the snapshot file holds.
#[derive(Debug)]
pub(crate) struct Snapshot {
    header: Header,
    /// By id, in the form the catalog keeps them, so that opening moves them no more.
    tools: Vec<(Uuid, Box<RawTool>)>,
    /// The checksum of the file it was read from; 0 for one not read.
    sum: u64,
}

/// The snapshot's JSON part.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    /// The generation stamp of the directory these heads were read at.
    stamp: String,
    /// What could not be used at that read.
    issues: Vec<LoadIssue>,
    /// What else tells whether the snapshot still describes the store ([`Marks`]): for
    /// the flat files, the modification times of the `bundles` directory and of each
    /// bundle's `tools` directory (relative paths): a file added, removed or replaced by
    /// hand changes one.
    dirs: Marks,
}

impl Snapshot {
    /// The snapshot in `root`, if there is a readable one of this format.
    pub(crate) fn read(root: &Path) -> Option<Snapshot> {
        let file = File::open(root.join(FILE)).ok()?;
        let len = file.metadata().ok()?.len();
        decode(file, len)
    }

    /// The checksum of the file it was read from (0 for one made in memory).
    pub(crate) fn checksum(&self) -> u64 {
        self.sum
    }

    /// What could not be used at that read.
    pub(crate) fn issues(&self) -> &[LoadIssue] {
        &self.header.issues
    }

    /// The stored tools of `state` (built-ins are compiled in), at its stamp, with the
    /// marks of `store` now.
    pub(crate) fn of(state: &State, store: &dyn CatalogStore) -> Option<Snapshot> {
        let dirs = store.marks(
            &mut state
                .bundles
                .values()
                .filter(|b| !b.is_built_in)
                .map(|b| b.id),
        );
        Some(Snapshot {
            header: Header {
                dirs,
                stamp: state.stamp.clone()?,
                issues: state.issues.clone(),
            },
            tools: state
                .tools
                .values()
                .filter(|raw| raw.builtin.is_none())
                .map(|raw| (raw.head.id, raw.clone()))
                .collect(),
            sum: 0,
        })
    }

    /// Replaces the snapshot in `root` (a temporary file renamed over it) and returns the
    /// checksum of what it wrote. Not synced: a snapshot lost in a crash is only a slower
    /// next open.
    pub(crate) fn write(&self, root: &Path) -> std::io::Result<u64> {
        let tmp = root.join(format!(".{FILE}.{}.tmp", Uuid::now_v7().simple()));
        let result = (|| {
            let (bytes, sum) = encode(self)?;
            let mut out = File::create_new(&tmp)?;
            out.write_all(&bytes)?;
            drop(out);
            fs::rename(&tmp, root.join(FILE))?;
            Ok(sum)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        } else {
            let _ = fs::remove_file(root.join(OLD_FILE));
        }
        result
    }

    /// Whether this snapshot still describes `store` at generation `stamp`: the stamp is
    /// the store's, and its marks still hold (for the flat files: no directory it read was
    /// changed since by hand; every write of a catalog moves the stamp on).
    ///
    /// A tool file edited in place by hand (not replaced) changes no directory: it is
    /// seen at the next [`crate::Catalog::rescan`].
    pub(crate) fn is_current(&self, store: &dyn CatalogStore, stamp: Option<&String>) -> bool {
        stamp == Some(&self.header.stamp) && store.marks_hold(&self.header.dirs)
    }

    /// The tools, in the order they were written (by id).
    pub(crate) fn into_raws(self) -> Vec<(Uuid, Box<RawTool>)> {
        self.tools
    }
}

/// The snapshot's bytes: [`MAGIC`], the header's length and JSON, the entries' count and
/// each entry (see [`put_entry`]); with their checksum, which ends them.
fn encode(snap: &Snapshot) -> std::io::Result<(Vec<u8>, u64)> {
    let header = serde_json::to_vec(&snap.header)?;
    let mut out = Out(Vec::with_capacity(
        snap.tools.len() * 256 + header.len() + 64,
    ));
    out.0.extend_from_slice(MAGIC);
    out.bytes(&header);
    out.u64(snap.tools.len() as u64);
    for (_, raw) in &snap.tools {
        put_entry(&mut out, raw);
    }
    let sum = checksum(&out.0);
    out.u64(sum);
    Ok((out.0, sum))
}

/// A checksum of the snapshot's bytes (CRC-32), so that a damaged file (a flipped bit
/// that still decodes) is not taken for the catalog.
///
/// **Rationale:** CRC-32 catches every burst of up to 32 bits, runs at memory speed, and
/// gives the same value with every Rust release (the standard hasher need not).
fn checksum(bytes: &[u8]) -> u64 {
    u64::from(crc32fast::hash(bytes))
}

/// How much of the file is read at a time.
///
/// **Rationale:** the whole file (33 MB for 92k tools) held at once only to be decoded
/// costs its pages again on every open; a chunk at a time the decoded heads are all that
/// grows.
const CHUNK: usize = 1 << 20;

/// The snapshot in `file` (`len` bytes), or `None` when it is not a whole snapshot of this
/// format. Read a [`CHUNK`] at a time; what was decoded is dropped if the checksum at the
/// end does not match.
fn decode(file: impl Read, len: u64) -> Option<Snapshot> {
    let mut r = Chunks {
        file: file.take(len.checked_sub(8)?),
        buf: Vec::new(),
        start: 0,
        sum: crc32fast::Hasher::new(),
        done: false,
    };
    let (header, count) = r.next(|i| {
        let magic = i.take(MAGIC.len())?;
        let header: Header = serde_json::from_slice(i.bytes()?).ok()?;
        (magic == MAGIC).then_some(())?;
        Some((header, usize::try_from(i.u64()?).ok()?))
    })?;
    // An entry takes at least 64 bytes: a count the file cannot hold is no snapshot.
    if count > usize::try_from(len / 64).ok()? {
        return None;
    }
    let mut tools = Vec::with_capacity(count);
    for _ in 0..count {
        tools.push(r.next(get_entry)?);
    }
    if !r.at_end()? {
        return None;
    }
    let sum = u64::from(r.sum.finalize());
    let mut rest = r.file.into_inner();
    let mut stored = [0u8; 8];
    rest.read_exact(&mut stored).ok()?;
    (stored == sum.to_le_bytes()).then_some(Snapshot { header, tools, sum })
}

/// A file read a chunk at a time, its checksum taken as it goes.
struct Chunks<R> {
    file: std::io::Take<R>,
    /// Read, and from `start` on not yet decoded.
    buf: Vec<u8>,
    start: usize,
    sum: crc32fast::Hasher,
    /// The file has nothing more.
    done: bool,
}

impl<R: Read> Chunks<R> {
    /// What `decode` makes of the bytes not yet decoded; more are read while it fails for
    /// want of them (a value larger than a chunk included). `None` once it fails on all
    /// the rest of the file.
    fn next<T>(&mut self, decode: impl Fn(&mut In<'_>) -> Option<T>) -> Option<T> {
        loop {
            let mut input = In(&self.buf[self.start..]);
            if let Some(value) = decode(&mut input) {
                self.start = self.buf.len() - input.0.len();
                return Some(value);
            }
            if self.done {
                return None;
            }
            self.fill()?;
        }
    }

    /// Drops what was decoded and reads at least another chunk (at least as much again as
    /// is held, so that a large value takes few reads).
    fn fill(&mut self) -> Option<()> {
        self.buf.drain(..self.start);
        self.start = 0;
        let have = self.buf.len();
        let want = CHUNK.max(have);
        self.buf.resize(have + want, 0);
        let mut filled = have;
        while filled < self.buf.len() {
            match self.file.read(&mut self.buf[filled..]) {
                Ok(0) => {
                    self.done = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        self.sum.update(&self.buf[have..filled]);
        self.buf.truncate(filled);
        Some(())
    }

    /// Whether every byte was decoded: nothing is left held, or in the file.
    fn at_end(&mut self) -> Option<bool> {
        if self.start < self.buf.len() {
            return Some(false);
        }
        if !self.done {
            self.fill()?;
        }
        Some(self.buf.len() == self.start)
    }
}

fn put_entry(out: &mut Out, e: &RawTool) {
    let h = &e.head;
    out.uuid(h.id);
    out.uuid(h.bundle_id);
    out.uuid(h.digest);
    out.str(&h.slug);
    out.str(&h.version);
    out.str(&h.name);
    out.str(&h.summary);
    out.opt_str(h.category.as_deref());
    out.u64(h.tags.len() as u64);
    for t in &h.tags {
        out.str(t);
    }
    out.u8(match h.tool_type {
        ToolType::Native => 0,
        ToolType::Http => 1,
        ToolType::Recipe => 2,
    });
    out.opt_str(h.func.as_deref());
    out.u8(u8::from(h.is_enabled) | (u8::from(h.is_built_in) << 1));
    out.time(h.created_at);
    out.time(h.modified_at);
    match &h.disabled_reason {
        None => out.u8(0),
        Some(DisabledReason::Disabled) => out.u8(1),
        Some(DisabledReason::BundleDisabled) => out.u8(2),
        Some(DisabledReason::BundleDeleted) => out.u8(3),
        Some(DisabledReason::NativeNotRegistered { func }) => {
            out.u8(4);
            out.str(func);
        }
        Some(DisabledReason::InvalidDefinition { reason }) => {
            out.u8(5);
            out.str(reason);
        }
    }
    match &e.key {
        None => out.u8(0),
        Some(StoreKey::File(k)) => {
            out.u8(1);
            out.u64(k.len);
            out.u64(k.inode);
            out.system_time(k.modified);
        }
        Some(StoreKey::Row { generation }) => {
            out.u8(2);
            out.u64(*generation);
        }
    }
}

fn get_entry(r: &mut In<'_>) -> Option<(Uuid, Box<RawTool>)> {
    let (id, bundle_id, digest) = (r.uuid()?, r.uuid()?, r.uuid()?);
    let (slug, version, name, summary) = (r.string()?, r.string()?, r.string()?, r.string()?);
    let category = r.opt_string()?;
    let n = usize::try_from(r.u64()?).ok()?;
    if n > r.0.len() / 8 {
        return None;
    }
    let tags = (0..n).map(|_| r.string()).collect::<Option<Vec<_>>>()?;
    let tool_type = match r.u8()? {
        0 => ToolType::Native,
        1 => ToolType::Http,
        2 => ToolType::Recipe,
        _ => return None,
    };
    let func = r.opt_string()?;
    let flags = r.u8()?;
    let (created_at, modified_at) = (r.time()?, r.time()?);
    let disabled_reason = match r.u8()? {
        0 => None,
        1 => Some(DisabledReason::Disabled),
        2 => Some(DisabledReason::BundleDisabled),
        3 => Some(DisabledReason::BundleDeleted),
        4 => Some(DisabledReason::NativeNotRegistered { func: r.string()? }),
        5 => Some(DisabledReason::InvalidDefinition {
            reason: r.string()?,
        }),
        _ => return None,
    };
    let key = match r.u8()? {
        0 => None,
        1 => Some(StoreKey::File(FileKey {
            len: r.u64()?,
            inode: r.u64()?,
            modified: r.system_time()?,
        })),
        2 => Some(StoreKey::Row {
            generation: r.u64()?,
        }),
        _ => return None,
    };
    let head = ToolHead {
        id,
        bundle_id,
        slug,
        version,
        name,
        summary,
        category,
        tags,
        tool_type,
        func,
        is_enabled: flags & 1 != 0,
        is_built_in: flags & 2 != 0,
        created_at,
        modified_at,
        disabled_reason,
        digest,
    };
    Some((
        id,
        Box::new(RawTool {
            head,
            builtin: None,
            key,
        }),
    ))
}

/// The writing side of the binary form.
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }
    fn uuid(&mut self, id: Uuid) {
        self.0.extend_from_slice(id.as_bytes());
    }
    fn time(&mut self, t: DateTime<Utc>) {
        self.0.extend_from_slice(&t.timestamp().to_le_bytes());
        self.0
            .extend_from_slice(&t.timestamp_subsec_nanos().to_le_bytes());
    }
    /// `None`, and a time before 1970, are written as absent.
    fn system_time(&mut self, t: Option<SystemTime>) {
        match t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()) {
            None => self.u8(0),
            Some(d) => {
                self.u8(1);
                self.u64(d.as_secs());
                self.0.extend_from_slice(&d.subsec_nanos().to_le_bytes());
            }
        }
    }
}

/// The reading side: each read is `None` past the end or on a malformed value.
struct In<'a>(&'a [u8]);

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }
    fn string(&mut self) -> Option<String> {
        std::str::from_utf8(self.bytes()?).ok().map(str::to_owned)
    }
    fn opt_string(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.string()?)),
            _ => None,
        }
    }
    fn uuid(&mut self) -> Option<Uuid> {
        Some(Uuid::from_bytes(self.array()?))
    }
    fn time(&mut self) -> Option<DateTime<Utc>> {
        let secs = i64::from_le_bytes(self.array()?);
        DateTime::from_timestamp(secs, self.u32()?)
    }
    fn system_time(&mut self) -> Option<Option<SystemTime>> {
        match self.u8()? {
            0 => Some(None),
            1 => {
                let (secs, nanos) = (self.u64()?, self.u32()?);
                // `Duration::new` carries nanoseconds into seconds, and panics when that
                // overflows: a damaged file must only be ignored.
                if nanos >= 1_000_000_000 {
                    return None;
                }
                let d = Duration::new(secs, nanos);
                Some(Some(SystemTime::UNIX_EPOCH.checked_add(d)?))
            }
            _ => None,
        }
    }
}
