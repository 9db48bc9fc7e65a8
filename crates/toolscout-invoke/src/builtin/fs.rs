//! `read_file`, `write_file` and `search_files`, confined to a [`Workspace`].

use std::io::{BufRead, BufReader, Read as _, Write};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolscout_spec::ToolSpec;

use super::workspace::{Workspace, io_error};
use crate::{ErrorKind, NativeTool, ToolError};

/// Most text `read_file` returns at once.
const MAX_READ_BYTES: usize = 10 << 20;
/// Most directory entries `search_files` visits.
const MAX_VISITED: usize = 200_000;

fn one() -> u32 {
    1
}

/// Reads a file from the workspace. Supports reading a range of lines of a large file.
/// Returns the file's contents as a string.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Path of the file, relative to the workspace root
    #[schemars(length(min = 1))]
    pub file_path: String,
    /// Line to start reading from (1-indexed)
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub offset: u32,
    /// Maximum number of lines to read; the rest of the file when absent
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1), transform = super::no_default)]
    pub limit: Option<u32>,
}

/// The `read_file` tool.
#[derive(Debug, Clone)]
pub struct ReadFile {
    workspace: Workspace,
}

impl ReadFile {
    /// `read_file` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        ReadFile { workspace }
    }
}

impl NativeTool for ReadFile {
    const NAME: &'static str = "read_file";
    const SUMMARY: &'static str = "Read a text file, whole or a range of lines";
    type Args = ReadFileArgs;
    type Output = String;

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::from_args::<ReadFileArgs>(Self::NAME, Self::SUMMARY)
            .title("Read file")
            .returns("string: the lines read, line endings preserved")
            .category("files")
            .with_metadata(|m| {
                m.read_only = true;
                m.idempotent = true;
            })
            .build()
    }

    async fn call(&self, args: ReadFileArgs) -> Result<String, ToolError> {
        let workspace = self.workspace.clone();
        blocking(move || read_lines(&workspace, &args)).await
    }
}

fn read_lines(workspace: &Workspace, args: &ReadFileArgs) -> Result<String, ToolError> {
    let path = workspace.existing(&args.file_path)?;
    if path.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "'{}' is a directory; use search_files to list it",
            args.file_path
        )));
    }
    let file = open_regular(&path, &args.file_path)?;
    read_window(BufReader::new(file), args)
}

/// Lines `offset..offset + limit` of `reader`, holding at most [`MAX_READ_BYTES`] (plus
/// one byte) of them however long a line is.
fn read_window(mut reader: impl BufRead, args: &ReadFileArgs) -> Result<String, ToolError> {
    let mut out = Vec::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut taken = 0u64;
    let read_error = |e: std::io::Error| io_error(&args.file_path, &e);
    loop {
        if number + 1 < u64::from(args.offset) {
            // Lines before the offset are skipped without being kept, whatever their length.
            if !skip_line(&mut reader).map_err(read_error)? {
                break;
            }
            number += 1;
            continue;
        }
        if args.limit.is_some_and(|l| taken >= u64::from(l)) {
            break;
        }
        line.clear();
        // Never more than what may still be returned, plus one byte to tell.
        let room = (MAX_READ_BYTES - out.len()) as u64;
        let n = (&mut reader)
            .take(room + 1)
            .read_until(b'\n', &mut line)
            .map_err(read_error)?;
        if n == 0 {
            break;
        }
        number += 1;
        if out.len() + line.len() > MAX_READ_BYTES {
            return Err(ToolError::new(
                ErrorKind::TooLarge,
                format!(
                    "'{}' from line {} is over {MAX_READ_BYTES} bytes; read fewer lines with offset and limit",
                    args.file_path, args.offset
                ),
            )
            .with_details(json!({"limit_bytes": MAX_READ_BYTES, "lines_read": taken})));
        }
        out.extend_from_slice(&line);
        taken += 1;
    }
    if args.offset > 1 && number < u64::from(args.offset) {
        return Err(ToolError::invalid_arguments(format!(
            "offset {} is past the end of '{}', which has {number} lines",
            args.offset, args.file_path
        ))
        .with_details(json!({"lines": number})));
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Moves past the next line (its `\n` included) without keeping it; `false` at the end of
/// the file.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<bool> {
    let mut any = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(any);
        }
        any = true;
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(true);
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}

/// Opens an existing regular file for reading. FIFOs, sockets and devices are refused
/// (opening a FIFO blocks until a writer comes, and reading a device never ends); the
/// open itself does not block, and the check is made on the opened file, so a file
/// swapped for a FIFO in between is refused too.
fn open_regular(path: &Path, user: &str) -> Result<std::fs::File, ToolError> {
    let not_regular = || {
        ToolError::invalid_arguments(format!(
            "'{user}' is not a regular file (a pipe, socket or device); only files can be read"
        ))
        .with_details(json!({"path": user}))
    };
    if !std::fs::metadata(path)
        .map_err(|e| io_error(user, &e))?
        .is_file()
    {
        return Err(not_regular());
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| io_error(user, &e))?;
    let meta = file.metadata().map_err(|e| io_error(user, &e))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    single_link(&meta, user)?;
    Ok(file)
}

/// Refuses a file that has other names (hard links): one of them may be outside the
/// workspace, and reading or appending through the name inside would reach it.
/// Replacing the file (`write_file` in overwrite mode) is allowed: it renames a new file
/// over this one name and leaves the others as they were.
fn single_link(meta: &std::fs::Metadata, user: &str) -> Result<(), ToolError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let links = meta.nlink();
        if links > 1 {
            return Err(ToolError::new(
                ErrorKind::OutsideWorkspace,
                format!(
                    "'{user}' is a hard link (the file has {links} names, which may be outside \
                     the workspace); it is not read or appended to"
                ),
            )
            .with_details(json!({"path": user, "links": links})));
        }
    }
    #[cfg(not(unix))]
    let _ = (meta, user);
    Ok(())
}

/// Overwrite the file or append to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(transform = super::plain_enum)]
pub enum WriteMode {
    /// Replace the file, atomically.
    #[default]
    Overwrite,
    /// Add to its end.
    Append,
}

/// Writes content to a file in the workspace. Creates the file if it does not exist and
/// overwrites it by default; can append instead.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Path of the file, relative to the workspace root
    #[schemars(length(min = 1))]
    pub file_path: String,
    /// Text to write
    pub content: String,
    /// Overwrite the file or append to it
    #[serde(default)]
    pub mode: WriteMode,
}

/// What `write_file` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WriteOutput {
    /// The path written, relative to the workspace root.
    pub path: String,
    /// The number of bytes written.
    pub bytes: u64,
    /// The same number, under the name the catalog's output schema uses.
    pub bytes_written: u64,
}

/// The `write_file` tool.
#[derive(Debug, Clone)]
pub struct WriteFile {
    workspace: Workspace,
}

impl WriteFile {
    /// `write_file` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        WriteFile { workspace }
    }
}

impl NativeTool for WriteFile {
    const NAME: &'static str = "write_file";
    const SUMMARY: &'static str = "Write or append text to a file, atomically";
    type Args = WriteFileArgs;
    type Output = WriteOutput;

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::from_args::<WriteFileArgs>(Self::NAME, Self::SUMMARY)
            .title("Write file")
            .returns("object: the path written and the number of bytes")
            .category("files")
            .with_metadata(|m| {
                m.destructive = true;
                m.requires_approval = true;
            })
            .build()?
            .with_output::<WriteOutput>()
    }

    async fn call(&self, args: WriteFileArgs) -> Result<WriteOutput, ToolError> {
        let workspace = self.workspace.clone();
        blocking(move || write(&workspace, &args)).await
    }
}

fn write(workspace: &Workspace, args: &WriteFileArgs) -> Result<WriteOutput, ToolError> {
    let user = args.file_path.as_str();
    let target = workspace.writable(user)?;
    if target.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "'{user}' is a directory; give a file path"
        )));
    }
    let parent = target
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| workspace.root().to_path_buf());
    std::fs::create_dir_all(&parent).map_err(|e| io_error(user, &e))?;
    // The parent may have been a symlink created in between; check where it really is.
    let real_parent = parent.canonicalize().map_err(|e| io_error(user, &e))?;
    workspace.inside(user, real_parent)?;
    let bytes = args.content.as_bytes();
    match args.mode {
        WriteMode::Overwrite => {
            // The replacement keeps the file's permissions (a new file gets 0644, not the
            // temporary file's 0600).
            let permissions = match std::fs::metadata(&target) {
                Ok(m) if m.is_file() => Some(m.permissions()),
                _ => new_file_permissions(),
            };
            let mut tmp =
                tempfile::NamedTempFile::new_in(&parent).map_err(|e| io_error(user, &e))?;
            tmp.write_all(bytes).map_err(|e| io_error(user, &e))?;
            if let Some(p) = permissions {
                tmp.as_file()
                    .set_permissions(p)
                    .map_err(|e| io_error(user, &e))?;
            }
            tmp.as_file().sync_all().map_err(|e| io_error(user, &e))?;
            tmp.persist(&target).map_err(|e| io_error(user, &e.error))?;
        }
        WriteMode::Append => {
            let mut options = std::fs::OpenOptions::new();
            options.create(true).append(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt as _;
                // The last component was checked above; a symlink put there since is not
                // followed (ELOOP), and a FIFO does not block the open.
                options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
                options.mode(0o644);
            }
            let mut f = options.open(&target).map_err(|e| match e.raw_os_error() {
                #[cfg(unix)]
                Some(libc::ELOOP) => ToolError::new(
                    ErrorKind::OutsideWorkspace,
                    format!("'{user}' is a symbolic link; append writes only to the file itself"),
                )
                .with_details(json!({"path": user})),
                _ => io_error(user, &e),
            })?;
            let meta = f.metadata().map_err(|e| io_error(user, &e))?;
            if !meta.is_file() {
                return Err(ToolError::invalid_arguments(format!(
                    "'{user}' is not a regular file (a pipe, socket or device); only files can be written"
                )));
            }
            single_link(&meta, user)?;
            f.write_all(bytes).map_err(|e| io_error(user, &e))?;
            f.sync_all().map_err(|e| io_error(user, &e))?;
        }
    }
    Ok(WriteOutput {
        path: workspace.relative(&target),
        bytes: bytes.len() as u64,
        bytes_written: bytes.len() as u64,
    })
}

/// The permissions of a file `write_file` creates: 0644 on Unix.
fn new_file_permissions() -> Option<std::fs::Permissions> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        Some(std::fs::Permissions::from_mode(0o644))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

fn default_dot() -> String {
    ".".to_owned()
}

fn hundred() -> u32 {
    100
}

/// Searches the workspace for files matching a glob pattern. Returns the matching
/// paths, sorted.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFilesArgs {
    /// Glob pattern, e.g. **/*.rs (`*` stays within one directory, `**` crosses them)
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// Directory to search in, relative to the workspace root
    #[serde(default = "default_dot")]
    pub path: String,
    /// Stop after this many matches
    #[serde(default = "hundred")]
    #[schemars(range(min = 1, max = 10000))]
    pub max_results: u32,
}

/// The `search_files` tool.
#[derive(Debug, Clone)]
pub struct SearchFiles {
    workspace: Workspace,
}

impl SearchFiles {
    /// `search_files` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        SearchFiles { workspace }
    }
}

impl NativeTool for SearchFiles {
    const NAME: &'static str = "search_files";
    const SUMMARY: &'static str = "Find files whose path matches a glob pattern";
    type Args = SearchFilesArgs;
    type Output = Vec<String>;

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::from_args::<SearchFilesArgs>(Self::NAME, Self::SUMMARY)
            .title("Search files")
            .returns("array of strings: matching paths, relative to the workspace root")
            .category("files")
            .with_metadata(|m| {
                m.read_only = true;
                m.idempotent = true;
            })
            .build()
    }

    async fn call(&self, args: SearchFilesArgs) -> Result<Vec<String>, ToolError> {
        let workspace = self.workspace.clone();
        blocking(move || search(&workspace, &args)).await
    }
}

/// Longest `search_files` pattern, in bytes.
pub const MAX_GLOB_BYTES: usize = 1024;
/// Deepest nesting of `{…}` alternatives in a `search_files` pattern.
pub const MAX_GLOB_NESTING: usize = 8;

/// Checks a glob's length and the nesting of its alternatives before it is compiled.
///
/// **Rationale:** globset before 0.4.22 panicked on alternatives nested about a hundred
/// deep (its regex passed the regex crate's nesting limit), and its compile time grows
/// with the pattern; both bounds are far above what a file search needs.
fn check_glob(pattern: &str) -> Result<(), ToolError> {
    let refused = |why: String| {
        ToolError::invalid_arguments(format!(
            "the pattern was refused: {why}; use e.g. \"**/*.rs\""
        ))
        .with_details(json!({"pattern_bytes": pattern.len()}))
    };
    if pattern.len() > MAX_GLOB_BYTES {
        return Err(refused(format!(
            "it is {} bytes long, over the limit of {MAX_GLOB_BYTES}",
            pattern.len()
        )));
    }
    let mut depth = 0usize;
    let mut escaped = false;
    for c in pattern.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => {
                depth += 1;
                if depth > MAX_GLOB_NESTING {
                    return Err(refused(format!(
                        "its {{…}} alternatives nest more than {MAX_GLOB_NESTING} deep"
                    )));
                }
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn search(workspace: &Workspace, args: &SearchFilesArgs) -> Result<Vec<String>, ToolError> {
    check_glob(&args.pattern)?;
    let glob = globset::GlobBuilder::new(&args.pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            ToolError::invalid_arguments(format!(
                "the pattern is not a valid glob: {}; use e.g. \"**/*.rs\"",
                e.kind()
            ))
            .with_details(json!({"pattern": args.pattern}))
        })?
        .compile_matcher();
    let base = workspace.existing(&args.path)?;
    if !base.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "'{}' is not a directory",
            args.path
        )));
    }
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = vec![base.clone()];
    let mut visited = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > MAX_VISITED {
                break;
            }
            let path = entry.path();
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
                continue;
            }
            if ft.is_symlink() {
                // Only links to files inside the workspace count; links to directories
                // are not followed (no cycles, no escapes).
                match path.canonicalize() {
                    Ok(real) if real.starts_with(workspace.root()) && real.is_file() => {}
                    _ => continue,
                }
            }
            let Ok(rel) = path.strip_prefix(&base) else {
                continue;
            };
            if glob.is_match(rel) {
                found.push(workspace.relative(&path));
            }
        }
    }
    found.sort();
    found.truncate(args.max_results as usize);
    Ok(found)
}

/// Runs file-system work off the async threads.
async fn blocking<T, F>(f: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        // Not the panic's message: it may quote the arguments at length.
        tracing::warn!(panicked = e.is_panic(), "a file tool stopped unexpectedly");
        Err(ToolError::failed(
            "the file operation stopped unexpectedly; try a simpler request",
        ))
    })
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    /// A reader that counts the bytes taken from it.
    struct Counting<R> {
        inner: R,
        taken: Arc<AtomicU64>,
    }

    impl<R: Read> Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.taken.fetch_add(n as u64, Ordering::Relaxed);
            Ok(n)
        }
    }

    #[test]
    fn a_line_longer_than_the_limit_is_not_read_past_it() {
        // Regression: the whole line was read (and held) before the size check, so a
        // file without line breaks cost its whole size in memory. 1 GiB of 'x' here.
        let taken = Arc::new(AtomicU64::new(0));
        let reader = BufReader::new(Counting {
            inner: std::io::repeat(b'x').take(1 << 30),
            taken: Arc::clone(&taken),
        });
        let args = ReadFileArgs {
            file_path: "one_line.txt".to_owned(),
            offset: 1,
            limit: None,
        };
        let err = read_window(reader, &args).unwrap_err();
        assert_eq!(err.kind, ErrorKind::TooLarge, "{err:?}");
        let taken = taken.load(Ordering::Relaxed);
        // What may be returned, one byte to tell, and one buffer of read-ahead.
        let bound = MAX_READ_BYTES as u64 + 1 + 8 * 1024;
        assert!(taken <= bound, "read {taken} bytes, more than {bound}");
    }
}
