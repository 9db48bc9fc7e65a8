//! Import and export of one bundle as a ZIP file.
//!
//! ```text
//! manifest.json                  {"format", "bundle": {…}, "tools": ["tools/<slug>@<version>.json", …]}
//! tools/<slug>@<version>.json    one tool.json per tool version, as stored
//! ```
//!
//! An import goes through the checks of a PUT, all of them before anything is written:
//! one bad tool, one built-in tool's name or one conflicting `<slug, version>` and
//! nothing is imported. The bundle and its tools are then written in one batch, all or
//! nothing even when the process is killed half-way; importing the same archive again
//! completes an import that did not get in.

use std::collections::HashSet;
use std::io::{Read, Seek, Write};

use serde::{Deserialize, Serialize};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::ToolFile;
use uuid::Uuid;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::Catalog;
use super::ops::{check_conflict, writable_bundle};
use crate::model::new_bundle;
use crate::model::{Bundle, BundlePut, Tool};
use crate::state::State;
use crate::validate::{check_id, check_slug, check_tool_file};
use crate::viewer::Viewer;
use crate::{Error, Result};

/// The `format` of `manifest.json`.
pub const ARCHIVE_FORMAT: &str = "toolscout.bundle-archive/1";

/// The largest entry an import reads, in bytes.
pub const MAX_ENTRY_BYTES: u64 = 4 << 20;

/// The most bytes an import reads from all its entries together, uncompressed.
/// **Rationale:** a ZIP file of 1 MB can hold gigabytes of well-compressed entries, and
/// the same entry can be listed many times.
pub const MAX_ARCHIVE_BYTES: u64 = 64 << 20;

/// The most tools an archive may hold.
pub const MAX_TOOLS: usize = 10_000;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    format: String,
    bundle: ManifestBundle,
    tools: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ManifestBundle {
    #[serde(rename = "bundleID")]
    bundle_id: Uuid,
    slug: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "yes")]
    is_enabled: bool,
}

fn yes() -> bool {
    true
}

/// What [`Catalog::import_bundle`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Imported {
    /// The bundle, as it is now.
    pub bundle: Bundle,
    /// Whether the import created the bundle (otherwise it added to an existing one).
    pub created: bool,
    /// The tools added.
    pub tools: Vec<Tool>,
    /// How many of the archive's tools the bundle already held as the archive has them
    /// (the same archive imported before): left as they are.
    pub unchanged: usize,
}

fn zip_err(entry: &str) -> impl Fn(zip::result::ZipError) -> Error + '_ {
    move |e| Error::archive(entry, e)
}

/// One entry's bytes, at most [`MAX_ENTRY_BYTES`] and at most what is left of `budget`
/// (the archive's [`MAX_ARCHIVE_BYTES`]), which it uses up.
fn read_entry<R: Read + Seek>(
    zip: &mut ZipArchive<R>,
    name: &str,
    budget: &mut u64,
) -> Result<Vec<u8>> {
    let entry = zip.by_name(name).map_err(zip_err(name))?;
    let limit = MAX_ENTRY_BYTES.min(*budget);
    let mut bytes = Vec::new();
    entry
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::archive(name, e))?;
    let read = bytes.len() as u64;
    if read > MAX_ENTRY_BYTES {
        return Err(Error::archive(
            name,
            format!("larger than {MAX_ENTRY_BYTES} bytes"),
        ));
    }
    if read > *budget {
        return Err(Error::archive(
            name,
            format!(
                "the archive's entries add up to more than {MAX_ARCHIVE_BYTES} bytes uncompressed"
            ),
        ));
    }
    *budget -= read;
    Ok(bytes)
}

impl Catalog {
    /// Writes a bundle (built-in ones too) and all its tools as a ZIP archive.
    pub fn export_bundle<W: Write + Seek>(&self, id: Uuid, writer: W) -> Result<()> {
        let (bundle, files) = {
            let state = self.lock_state();
            let bundle = state
                .bundles
                .get(&id)
                .cloned()
                .ok_or(Error::BundleNotFound { bundle: id })?;
            let files = state
                .tools
                .values()
                .filter(|raw| raw.head.bundle_id == id)
                .map(|raw| match &raw.builtin {
                    Some(t) => {
                        let mut t = (**t).clone();
                        t.is_enabled = raw.head.is_enabled;
                        Ok(t.to_file())
                    }
                    None => state.read_file(&raw.head),
                })
                .collect::<Result<Vec<ToolFile>>>()?;
            (bundle, files)
        };
        let names: Vec<String> = files
            .iter()
            .map(|f| format!("tools/{}@{}.json", f.slug, f.version))
            .collect();
        let manifest = Manifest {
            format: ARCHIVE_FORMAT.to_owned(),
            bundle: ManifestBundle {
                bundle_id: bundle.id,
                slug: bundle.slug,
                display_name: bundle.display_name,
                description: bundle.description,
                is_enabled: bundle.is_enabled,
            },
            tools: names.clone(),
        };
        let mut zip = ZipWriter::new(writer);
        let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        let mut add = |name: &str, bytes: Vec<u8>| -> Result<()> {
            zip.start_file(name, options).map_err(zip_err(name))?;
            zip.write_all(&bytes).map_err(|e| Error::archive(name, e))
        };
        add("manifest.json", to_json(&manifest)?)?;
        for (name, file) in names.iter().zip(&files) {
            add(name, to_json(file)?)?;
        }
        zip.finish().map_err(zip_err(""))?;
        Ok(())
    }

    /// Imports a bundle archive written by [`Catalog::export_bundle`].
    ///
    /// The bundle is created when missing; otherwise the tools are added to it, with the
    /// rules of [`Catalog::put_tool`] (a built-in tool's name, or a new bundle with a
    /// built-in bundle's slug, is refused: [`Catalog::check_tool_name`]). Tools keep their
    /// ids unless another tool has it.
    ///
    /// All or nothing: every tool is checked before anything is written, and the bundle
    /// and its tools are written in one batch (one sync), so that even a process killed
    /// half-way leaves all of them or none. The same archive imported again adds what is
    /// missing: a tool the bundle already holds as the archive has it (same id, same
    /// definition: an earlier run of the import) is counted in [`Imported::unchanged`],
    /// not a conflict. Another tool with the same slug and version is
    /// [`Error::Conflict`].
    pub fn import_bundle<R: Read + Seek>(&self, reader: R) -> Result<Imported> {
        self.import_bundle_as(&Viewer::Operator, reader)
    }

    /// [`Catalog::import_bundle`] by `writer`. For a tenant, ids from outside are kept
    /// only where they are its own: the archive's bundle id when the tenant owns that
    /// bundle (else its own live bundle of the archive's slug, else a new bundle with a
    /// fresh id, whether or not the archive's id is free), and tool ids only for a tool
    /// it already holds as the archive has it; so an import never tells whether another
    /// party holds an id.
    pub(crate) fn import_bundle_as<R: Read + Seek>(
        &self,
        writer: &Viewer,
        reader: R,
    ) -> Result<Imported> {
        let mut zip = ZipArchive::new(reader).map_err(zip_err(""))?;
        let mut budget = MAX_ARCHIVE_BYTES;
        let manifest: Manifest =
            serde_json::from_slice(&read_entry(&mut zip, "manifest.json", &mut budget)?)
                .map_err(|e| Error::archive("manifest.json", e))?;
        if manifest.format != ARCHIVE_FORMAT {
            return Err(Error::archive(
                "manifest.json",
                format!(
                    "unknown format {:?}, expected {ARCHIVE_FORMAT:?}",
                    manifest.format
                ),
            ));
        }
        if manifest.tools.len() > MAX_TOOLS {
            return Err(Error::archive(
                "manifest.json",
                format!(
                    "{} tools, at most {MAX_TOOLS} are allowed",
                    manifest.tools.len()
                ),
            ));
        }
        let mb = &manifest.bundle;
        check_id("bundle", mb.bundle_id)?;
        check_slug(&mb.slug)?;
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        for name in &manifest.tools {
            let mut file: ToolFile =
                serde_json::from_slice(&read_entry(&mut zip, name, &mut budget)?)
                    .map_err(|e| Error::archive(name, e))?;
            file.bundle_id = mb.bundle_id;
            file.is_built_in = false;
            // As every store keeps them.
            file.created_at = crate::model::to_micros(file.created_at);
            file.modified_at = crate::model::to_micros(file.modified_at);
            let spec = check_tool_file(&file)?;
            if !seen.insert((file.slug.clone(), file.version.clone())) {
                return Err(Error::archive(
                    name,
                    format!("{}@{} is in the archive twice", file.slug, file.version),
                ));
            }
            tools.push((file, spec));
        }
        let now = crate::model::now();
        self.write_as(writer, |tx| {
            let operator = *tx.writer == Viewer::Operator;
            let target = match tx.writer {
                Viewer::Operator => mb.bundle_id,
                Viewer::Tenant(t) => {
                    let own = |b: &crate::Bundle| b.owner == Some(*t);
                    if tx.state.bundles.get(&mb.bundle_id).is_some_and(own) {
                        mb.bundle_id
                    } else if let Some(b) = tx
                        .state
                        .bundles
                        .values()
                        .find(|b| own(b) && b.slug == mb.slug && b.soft_deleted_at.is_none())
                    {
                        b.id
                    } else {
                        Uuid::now_v7()
                    }
                }
                Viewer::Public => {
                    return Err(Error::NotOwner {
                        bundle: mb.bundle_id,
                        slug: mb.slug.clone(),
                    });
                }
            };
            if tx.state.bundles.contains_key(&target) {
                tx.may_write(target)?;
            }
            let created = match tx.state.bundles.get(&target) {
                Some(b) if b.is_built_in => {
                    return Err(Error::BuiltIn {
                        what: "bundle",
                        slug: b.slug.clone(),
                    });
                }
                Some(_) => {
                    writable_bundle(tx.state, target)?;
                    false
                }
                None => {
                    self.check_bundle_slug(&mb.slug)?;
                    let owner = tx.new_owner(target, &mb.slug)?;
                    super::ops::check_slug_free(tx.state, target, owner, &mb.slug)?;
                    true
                }
            };
            for (_, spec) in &tools {
                self.check_tool_name(spec.name.as_str())?;
            }
            let mut new = Vec::with_capacity(tools.len());
            let mut ids = HashSet::new();
            let mut unchanged = 0;
            for (mut file, spec) in tools {
                file.bundle_id = target;
                match tx.state.find(target, &file.slug, &file.version) {
                    Some(existing) if imported_before(tx.state, existing, &file, &spec) => {
                        unchanged += 1;
                    }
                    Some(_) => {
                        check_conflict(tx.state, target, &file.slug, &file.version)?;
                    }
                    None => {
                        let id = match file.tool_id {
                            Some(id)
                                if operator
                                    && id.get_version_num() == 7
                                    && !tx.state.tools.contains_key(&id)
                                    && ids.insert(id) =>
                            {
                                id
                            }
                            _ => {
                                let id = Uuid::now_v7();
                                ids.insert(id);
                                id
                            }
                        };
                        file.tool_id = Some(id);
                        new.push((id, file, spec));
                    }
                }
            }
            let bundle = created.then(|| {
                let put = BundlePut {
                    slug: mb.slug.clone(),
                    display_name: mb.display_name.clone(),
                    description: mb.description.clone(),
                    is_enabled: mb.is_enabled,
                };
                let mut b = new_bundle(target, &put, now, now);
                b.owner = tx.writer.tenant();
                b
            });
            tx.check_limits(u64::from(created), new.len() as u64)?;
            let files: Vec<&ToolFile> = new.iter().map(|(_, f, _)| f).collect();
            super::recipes::check_new(tx.state, tx.writer, &files)?;
            let added = tx.insert_new_tools(bundle, target, new)?;
            let bundle = tx
                .state
                .bundles
                .get(&target)
                .cloned()
                .ok_or(Error::BundleNotFound { bundle: target })?;
            Ok(Imported {
                bundle,
                created,
                tools: added,
                unchanged,
            })
        })
    }
}

/// Whether the stored tool `existing` is `file` as an earlier run of the same import
/// stored it: the archive's id, the same definition and the same way of running (its
/// enabled flag may have changed since).
fn imported_before(state: &State, existing: Uuid, file: &ToolFile, spec: &ToolSpec) -> bool {
    if file.tool_id != Some(existing) {
        return false;
    }
    let Some(stored) = state
        .tools
        .get(&existing)
        .and_then(|raw| state.view(raw).ok())
    else {
        return false;
    };
    stored.spec == *spec
        && stored.tool_type == file.tool_type
        && stored.implementation == file.implementation
}

fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec_pretty(value).map_err(|e| Error::archive("", e))
}
