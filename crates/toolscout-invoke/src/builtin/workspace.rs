//! [`Workspace`]: the root the file tools are confined to.

use std::io;
use std::path::{Component, Path, PathBuf};

use serde_json::json;

use crate::{Error, ErrorKind, Result, ToolError};

/// A directory whose files the file tools may read and write; nothing outside it.
///
/// A path is resolved in two steps: lexically (`a/../b` is `b`; a `..` that climbs above
/// the root is refused), then through the file system (a symlink whose target is outside
/// the root is refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// The workspace at `root`, which must be an existing directory.
    pub fn new(root: &Path) -> Result<Self> {
        let canonical = root.canonicalize().map_err(|e| Error::WorkspaceRoot {
            path: root.to_owned(),
            reason: e.to_string(),
        })?;
        if !canonical.is_dir() {
            return Err(Error::WorkspaceRoot {
                path: root.to_owned(),
                reason: "not a directory".to_owned(),
            });
        }
        Ok(Workspace { root: canonical })
    }

    /// The root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` relative to the root, with `/` separators (for results).
    pub(crate) fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }

    /// The lexical join of `user_path` to the root, refusing climbs out of it.
    fn join(&self, user_path: &str) -> Result<PathBuf, ToolError> {
        let p = Path::new(user_path);
        let rel = if p.is_absolute() {
            p.strip_prefix(&self.root)
                .map_err(|_| outside(user_path, "is an absolute path outside the workspace"))?
        } else {
            p
        };
        let mut out = self.root.clone();
        let mut depth = 0usize;
        for c in rel.components() {
            match c {
                Component::Normal(part) => {
                    out.push(part);
                    depth += 1;
                }
                Component::CurDir => {}
                Component::ParentDir => {
                    if depth == 0 {
                        return Err(outside(
                            user_path,
                            "climbs above the workspace root with '..'",
                        ));
                    }
                    out.pop();
                    depth -= 1;
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(outside(user_path, "is not a relative path"));
                }
            }
        }
        Ok(out)
    }

    /// An existing file or directory inside the workspace, symlinks resolved. A path
    /// that ends with `/` (or `/.`) names a directory, as it does to the system.
    pub(crate) fn existing(&self, user_path: &str) -> Result<PathBuf, ToolError> {
        let joined = self.join(user_path)?;
        let real = joined.canonicalize().map_err(|e| io_error(user_path, &e))?;
        let real = self.inside(user_path, real)?;
        if names_a_directory(user_path) && !real.is_dir() {
            return Err(ToolError::new(
                ErrorKind::NotFound,
                format!(
                    "'{user_path}' ends with '/', which names a directory, and there is a file there; \
                     drop the trailing '/' to name the file"
                ),
            )
            .with_details(json!({"path": user_path})));
        }
        Ok(real)
    }

    /// A path to create or replace inside the workspace: its nearest existing ancestor
    /// (or itself, when it exists) must resolve inside the root.
    pub(crate) fn writable(&self, user_path: &str) -> Result<PathBuf, ToolError> {
        let joined = self.join(user_path)?;
        if joined == self.root {
            return Err(ToolError::invalid_arguments(format!(
                "'{user_path}' is the workspace root, not a file"
            )));
        }
        if names_a_directory(user_path) {
            return Err(ToolError::invalid_arguments(format!(
                "'{user_path}' ends with '/', which names a directory; give a file path"
            ))
            .with_details(json!({"path": user_path})));
        }
        if joined.symlink_metadata().is_ok() {
            let real = joined.canonicalize().map_err(|e| io_error(user_path, &e))?;
            self.inside(user_path, real)?;
            return Ok(joined);
        }
        let mut ancestor = joined.parent();
        while let Some(a) = ancestor {
            if a.symlink_metadata().is_ok() {
                let real = a.canonicalize().map_err(|e| io_error(user_path, &e))?;
                self.inside(user_path, real)?;
                break;
            }
            ancestor = a.parent();
        }
        Ok(joined)
    }

    /// Checks that a resolved path is inside the root.
    pub(crate) fn inside(&self, user_path: &str, real: PathBuf) -> Result<PathBuf, ToolError> {
        if real.starts_with(&self.root) {
            Ok(real)
        } else {
            Err(outside(
                user_path,
                "leads outside the workspace through a symbolic link",
            ))
        }
    }
}

/// Whether a path, as written, can only name a directory: it ends with a separator, or
/// with `.` or `..` as its last part (which [`Path::components`] hides).
fn names_a_directory(user_path: &str) -> bool {
    let trimmed = user_path.trim_end_matches(['/', std::path::MAIN_SEPARATOR]);
    trimmed.len() != user_path.len()
        || trimmed == "."
        || trimmed == ".."
        || trimmed.ends_with("/.")
        || trimmed.ends_with("/..")
}

fn outside(user_path: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorKind::OutsideWorkspace,
        format!("'{user_path}' {why}; use a path relative to the workspace root, without '..'"),
    )
    .with_details(json!({"path": user_path}))
}

/// A file-system error as the model should see it (no absolute paths of the host).
pub(crate) fn io_error(user_path: &str, e: &io::Error) -> ToolError {
    let (kind, what) = match e.kind() {
        io::ErrorKind::NotFound => (ErrorKind::NotFound, "does not exist".to_owned()),
        io::ErrorKind::PermissionDenied => (
            ErrorKind::PermissionDenied,
            "cannot be accessed (permission denied)".to_owned(),
        ),
        _ => (ErrorKind::ToolFailed, format!("cannot be used: {e}")),
    };
    ToolError::new(kind, format!("'{user_path}' {what}")).with_details(json!({"path": user_path}))
}
