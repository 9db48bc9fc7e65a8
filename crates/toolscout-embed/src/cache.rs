//! An append-only file of vectors keyed by a 128-bit hash of model, token limit and
//! text, so that a catalog's texts are encoded once, not at every start.
//!
//! Layout, all integers little-endian:
//!
//! - header: `TSVCACHE`, version `u32` (1), dim `u32`, max_tokens `u32`, model name
//!   length `u32`, model name (UTF-8);
//! - then records: `TSVR`, key (16 bytes), `dim` × `f32`, checksum `u64` of key and
//!   vector.
//!
//! A batch of records is appended with one `write` on a file opened in append mode, so
//! several processes can share the file. A record cut short by a crash, or any other
//! damaged bytes, fail their checksum and are skipped when the file is read; the reader
//! then looks for the next `TSVR` whose checksum holds, so records appended after the
//! damage are still found. A file whose header names another model, token limit or
//! dimension is an error ([`Error::CacheMismatch`]), never silently overwritten.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::Hasher as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError, RwLock};

use crate::encoder::cache_root;
use crate::{Encoder, Error, Result};

const MAGIC: &[u8; 8] = b"TSVCACHE";
const VERSION: u32 = 1;
const MARKER: &[u8; 4] = b"TSVR";
/// Misses are encoded and appended this many at a time, so an interrupted run keeps
/// what it finished.
const CHUNK: usize = 512;
/// Fewer texts than this, while the file is not read yet, are encoded without it (and
/// not added to it).
///
/// **Rationale:** a search embeds its one query, which is seldom in the file; reading
/// every vector of a 92k-tool catalog (140 MB) to look it up cost more time and memory
/// than encoding it.
const READ_FROM: usize = 2;

/// An [`Encoder`] that remembers every vector it computes in a file.
///
/// ```no_run
/// use toolscout_embed::{CachedEncoder, Encoder, default_model_dir};
///
/// let dir = default_model_dir().ok_or("no home directory")?;
/// let encoder = Encoder::load(&dir)?;
/// let file = CachedEncoder::default_cache_file(encoder.model(), encoder.max_tokens())
///     .ok_or("no home directory")?;
/// let cached = CachedEncoder::open(encoder, &file)?;
/// let vectors = cached.embed(&["get the weather", "convert currency"]);
/// assert_eq!(vectors.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct CachedEncoder {
    encoder: Encoder,
    path: PathBuf,
    /// `None` until a call needs the file's vectors (see [`READ_FROM`]).
    vectors: RwLock<Option<HashMap<u128, Vec<f32>>>>,
    /// `None` when the file cannot be written: the cache is then read-only.
    file: Mutex<Option<File>>,
}

impl CachedEncoder {
    /// Opens `cache_file` (creating it and its directory if needed) and checks its header;
    /// its vectors are read when a call first needs them.
    pub fn open(encoder: Encoder, cache_file: &Path) -> Result<CachedEncoder> {
        let io = |cause| Error::Io {
            path: cache_file.to_owned(),
            cause,
        };
        let header = header(&encoder);
        if !cache_file.exists() {
            create(cache_file, &header).map_err(io)?;
        }
        let mut start = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(File::open(cache_file).map_err(io)?, 4096),
            &mut start,
        )
        .map_err(io)?;
        if !start.starts_with(&header) {
            return Err(Error::CacheMismatch {
                path: cache_file.to_owned(),
                expected: describe(&encoder.model, encoder.max_tokens(), encoder.dim()),
                found: describe_header(&start),
            });
        }
        let file = OpenOptions::new().append(true).open(cache_file).ok();
        Ok(CachedEncoder {
            encoder,
            path: cache_file.to_owned(),
            vectors: RwLock::new(None),
            file: Mutex::new(file),
        })
    }

    /// Reads the file's vectors, once. A file that cannot be read now is an empty cache.
    fn read_file(&self) {
        if self
            .vectors
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
        {
            return;
        }
        let mut vectors = self.vectors.write().unwrap_or_else(PoisonError::into_inner);
        if vectors.is_none() {
            let header = header(&self.encoder);
            let read = std::fs::read(&self.path)
                .ok()
                .filter(|bytes| bytes.starts_with(&header))
                .map(|bytes| read_records(&bytes[header.len()..], self.encoder.dim()));
            *vectors = Some(read.unwrap_or_default());
        }
    }

    /// `$XDG_CACHE_HOME/toolscout/vectors/<model>-<max_tokens>.bin`, else the same under
    /// `~/.cache`; `None` without a home directory.
    pub fn default_cache_file(model: &str, max_tokens: usize) -> Option<PathBuf> {
        Some(
            cache_root()?
                .join("toolscout")
                .join("vectors")
                .join(format!("{model}-{max_tokens}.bin")),
        )
    }

    /// The encoder that computes the vectors the cache does not have.
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many vectors the cache holds.
    pub fn len(&self) -> usize {
        self.read_file();
        self.vectors
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or(0, HashMap::len)
    }

    /// Whether the cache holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The vectors of `texts`, in order: looked up, and the misses encoded in parallel
    /// and appended to the file. A failed write only means those vectors are computed
    /// again next time.
    pub fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let unread = self
            .vectors
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none();
        if unread && texts.len() < READ_FROM {
            return self.encoder.embed_batch(texts);
        }
        self.read_file();
        let keys: Vec<u128> = texts.iter().map(|text| self.key(text)).collect();
        let mut out: Vec<Option<Vec<f32>>> = {
            let vectors = self.vectors.read().unwrap_or_else(PoisonError::into_inner);
            keys.iter()
                .map(|key| vectors.as_ref().and_then(|v| v.get(key)).cloned())
                .collect()
        };
        // Each distinct missing text once, in first-seen order.
        let mut seen = HashMap::new();
        let misses: Vec<(u128, &str)> = keys
            .iter()
            .zip(texts)
            .zip(&out)
            .filter(|(_, found)| found.is_none())
            .filter_map(|((&key, &text), _)| seen.insert(key, ()).is_none().then_some((key, text)))
            .collect();
        let mut computed = HashMap::with_capacity(misses.len());
        for chunk in misses.chunks(CHUNK) {
            let chunk_texts: Vec<&str> = chunk.iter().map(|&(_, text)| text).collect();
            let vectors = self.encoder.embed_batch(&chunk_texts);
            self.append(chunk.iter().map(|&(key, _)| key).zip(&vectors));
            let mut cache = self.vectors.write().unwrap_or_else(PoisonError::into_inner);
            let cache = cache.get_or_insert_default();
            for (&(key, _), vector) in chunk.iter().zip(vectors) {
                cache.insert(key, vector.clone());
                computed.insert(key, vector);
            }
        }
        out.iter_mut()
            .zip(&keys)
            .map(|(found, key)| {
                found
                    .take()
                    .or_else(|| computed.get(key).cloned())
                    .unwrap_or_default()
            })
            .collect()
    }

    fn key(&self, text: &str) -> u128 {
        let mut data = Vec::with_capacity(self.encoder.model.len() + text.len() + 16);
        data.extend_from_slice(&(self.encoder.model.len() as u64).to_le_bytes());
        data.extend_from_slice(self.encoder.model.as_bytes());
        data.extend_from_slice(&(self.encoder.max_tokens() as u64).to_le_bytes());
        data.extend_from_slice(text.as_bytes());
        (u128::from(fnv1a(&data)) << 64) | u128::from(mix64(&data))
    }

    /// Appends records with one write; errors are ignored (see [`embed`](Self::embed)).
    fn append<'a>(&self, records: impl Iterator<Item = (u128, &'a Vec<f32>)>) {
        let mut buf = Vec::new();
        for (key, vector) in records {
            encode_record(key, vector, &mut buf);
        }
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(f) = file.as_mut()
            && f.write_all(&buf).is_err()
        {
            // A short write leaves a damaged record that readers skip; stop writing to a
            // file that fails.
            *file = None;
        }
    }
}

impl toolscout_search::Embedder for CachedEncoder {
    fn model(&self) -> &str {
        self.encoder.model()
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        if self.encoder.prompts().document.is_empty() {
            return CachedEncoder::embed(self, texts);
        }
        // The prompt is part of the text, and so of the key.
        let prompted = self.encoder.document_texts(texts);
        let refs: Vec<&str> = prompted.iter().map(String::as_str).collect();
        CachedEncoder::embed(self, &refs)
    }

    fn embed_query(&self, text: &str) -> Vec<f32> {
        self.encoder.embed_query(text)
    }

    fn calibrate(&self, cosine: f32) -> f32 {
        self.encoder.calibrate(cosine)
    }
}

fn header(encoder: &Encoder) -> Vec<u8> {
    let model = encoder.model.as_bytes();
    let mut h = Vec::with_capacity(24 + model.len());
    h.extend_from_slice(MAGIC);
    for n in [
        VERSION as usize,
        encoder.dim(),
        encoder.max_tokens(),
        model.len(),
    ] {
        h.extend_from_slice(&(n as u32).to_le_bytes());
    }
    h.extend_from_slice(model);
    h
}

fn describe(model: &str, max_tokens: usize, dim: usize) -> String {
    format!("model {model:?} with {max_tokens} tokens and dimension {dim}")
}

fn describe_header(bytes: &[u8]) -> String {
    let word = |i: usize| {
        bytes
            .get(8 + 4 * i..12 + 4 * i)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(|b| u32::from_le_bytes(b) as usize)
    };
    if !bytes.starts_with(MAGIC) {
        return "not a toolscout vector cache".to_owned();
    }
    match (word(0), word(1), word(2), word(3)) {
        (Some(VERSION_USIZE), Some(dim), Some(max_tokens), Some(len)) => {
            match bytes.get(24..24 + len) {
                Some(name) => describe(&String::from_utf8_lossy(name), max_tokens, dim),
                None => "a cache with a truncated header".to_owned(),
            }
        }
        (Some(version), ..) if version != VERSION_USIZE => {
            format!("format version {version}")
        }
        _ => "a cache with a truncated header".to_owned(),
    }
}

const VERSION_USIZE: usize = VERSION as usize;

/// Creates the file with its header in one step: a temporary file is written and then
/// hard-linked into place, so another process never sees a half-written header.
fn create(path: &Path, header: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&tmp, header)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        // Another process created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        // No hard links here (some file systems): create it directly.
        Err(_) => match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(mut f) => f.write_all(header),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        },
    }
}

fn encode_record(key: u128, vector: &[f32], buf: &mut Vec<u8>) {
    let start = buf.len();
    buf.extend_from_slice(MARKER);
    buf.extend_from_slice(&key.to_le_bytes());
    for v in vector {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    let sum = mix64(&buf[start + MARKER.len()..]);
    buf.extend_from_slice(&sum.to_le_bytes());
}

/// Reads every intact record; damaged bytes are skipped up to the next intact record.
fn read_records(bytes: &[u8], dim: usize) -> HashMap<u128, Vec<f32>> {
    let body = 16 + 4 * dim;
    let len = MARKER.len() + body + 8;
    let mut vectors = HashMap::with_capacity(bytes.len() / len);
    let mut pos = 0;
    while pos + len <= bytes.len() {
        let record = &bytes[pos..pos + len];
        let data = &record[MARKER.len()..MARKER.len() + body];
        let sum = &record[MARKER.len() + body..];
        if record.starts_with(MARKER) && mix64(data).to_le_bytes() == sum {
            let mut key = [0u8; 16];
            key.copy_from_slice(&data[..16]);
            let vector = data[16..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            vectors.insert(u128::from_le_bytes(key), vector);
            pos += len;
        } else {
            pos += 1;
        }
    }
    vectors
}

/// 64-bit FNV-1a.
fn fnv1a(data: &[u8]) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(data);
    h.finish()
}

/// A multiply-xorshift hash over 8-byte words with splitmix64's finaliser; independent
/// of FNV-1a, so the pair makes a 128-bit key.
fn mix64(data: &[u8]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ (data.len() as u64);
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(word))
            .wrapping_mul(0xbf58_476d_1ce4_e5b9)
            .rotate_left(31);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h ^= u64::from_le_bytes(tail);
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_bytes_are_skipped_and_later_records_found() {
        let mut buf = Vec::new();
        encode_record(1, &[1.0, 2.0], &mut buf);
        let first = buf.len();
        encode_record(2, &[3.0, 4.0], &mut buf);
        buf.truncate(first + 10); // record 2 cut short by a crash
        encode_record(3, &[5.0, 6.0], &mut buf);
        buf.extend_from_slice(&[0x54, 0x53]); // and a torn tail
        let read = read_records(&buf, 2);
        assert_eq!(read.len(), 2);
        assert_eq!(read[&1], [1.0, 2.0]);
        assert_eq!(read[&3], [5.0, 6.0]);
    }

    #[test]
    fn hashes_differ() {
        assert_ne!(fnv1a(b"a"), fnv1a(b"b"));
        assert_ne!(mix64(b"abcdefgh1"), mix64(b"abcdefgh2"));
        assert_ne!(mix64(b""), mix64(b"\0"));
    }
}
