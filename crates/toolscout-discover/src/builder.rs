//! [`ToolboxBuilder`]: a [`Toolbox`] over the program's own tools, in a few lines.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, ToolPut};
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{
    DynTool, HttpConfig, HttpImpl, Implementation, Invoker, NativeTool, SecretStore,
};
use toolscout_search::{Embedder, SearchIndex};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::openapi;

use crate::{Error, Result, Toolbox};

/// The bundle a builder puts its tools in, unless [`ToolboxBuilder::bundle`] says
/// otherwise.
pub const DEFAULT_BUNDLE: &str = "app";

/// What the index the builder makes ranks by.
enum Meaning {
    /// The built-in encoder with the feature `embed`, else words alone.
    Default,
    /// Words alone.
    WordsOnly,
    /// Words and this embedder.
    Embedder(Arc<dyn Embedder>),
}

/// Where an OpenAPI document comes from.
#[derive(Debug)]
enum OpenApi {
    File(PathBuf),
    Document(Value),
}

/// Builds a [`Toolbox`] from the program's own tools: native Rust tools, HTTP tools and
/// the operations of OpenAPI documents. Made by [`Toolbox::builder`].
///
/// Each native tool is named once, by its [`NativeTool::NAME`]: the builder registers it
/// with the invoker and stores its spec in the catalog under that name. The catalog is
/// private to the toolbox and gone when the last clone of it is dropped
/// ([`Catalog::temporary`]) unless [`ToolboxBuilder::directory`] names a directory; the
/// search index is in memory unless [`ToolboxBuilder::index`] gives one.
///
/// With the feature `embed` (which the `toolscout` library's default features turn on),
/// the index ranks by meaning as well as by words, with the built-in potion-base-8M
/// (`toolscout_embed::Encoder::bundled`, a table lookup per token), so "I feel sick, find
/// me a doctor" finds a tool that books a visit to a physician. [`ToolboxBuilder::embedder`]
/// chooses another model, [`ToolboxBuilder::words_only`] ranks by words alone; without
/// the feature, words alone is the default. Tools go into one
/// bundle, [`DEFAULT_BUNDLE`]; in a directory that already holds them, a tool whose name
/// the bundle has is left as stored.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolscout_discover::{Lookup, Toolbox};
/// use toolscout_invoke::{NativeTool, ToolError};
///
/// /// The city to look up.
/// #[derive(Deserialize, JsonSchema)]
/// struct City {
///     /// The city's name.
///     city: String,
/// }
///
/// struct GetWeather;
///
/// impl NativeTool for GetWeather {
///     const NAME: &'static str = "get_weather";
///     const SUMMARY: &'static str = "Current weather for a city";
///     type Args = City;
///     type Output = String;
///
///     async fn call(&self, args: City) -> Result<String, ToolError> {
///         Ok(format!("Sunny in {}", args.city))
///     }
/// }
///
/// let toolbox = Toolbox::builder().native(GetWeather).build()?;
/// assert!(matches!(toolbox.lookup("get_weather"), Lookup::Found(_)));
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let outcome = toolbox.call("get_weather", serde_json::json!({"city": "Paris"})).await;
/// assert_eq!(outcome.to_json()["value"], "Sunny in Paris");
/// # });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub struct ToolboxBuilder {
    natives: Vec<Arc<dyn DynTool>>,
    http: Vec<(ToolSpec, HttpImpl)>,
    openapi: Vec<(OpenApi, Option<String>)>,
    invoker: Invoker,
    builtins: Option<BuiltinConfig>,
    directory: Option<PathBuf>,
    index: Option<SearchIndex>,
    meaning: Meaning,
    bundle: String,
}

impl std::fmt::Debug for ToolboxBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let natives: Vec<&str> = self.natives.iter().map(|t| t.name()).collect();
        f.debug_struct("ToolboxBuilder")
            .field("natives", &natives)
            .field("http", &self.http.len())
            .field("openapi", &self.openapi)
            .field("directory", &self.directory)
            .field(
                "meaning",
                &match &self.meaning {
                    Meaning::Default => "default",
                    Meaning::WordsOnly => "words only",
                    Meaning::Embedder(embedder) => embedder.model(),
                },
            )
            .field("bundle", &self.bundle)
            .finish_non_exhaustive()
    }
}

impl Default for ToolboxBuilder {
    fn default() -> Self {
        ToolboxBuilder {
            natives: Vec::new(),
            http: Vec::new(),
            openapi: Vec::new(),
            invoker: Invoker::default(),
            builtins: None,
            directory: None,
            index: None,
            meaning: Meaning::Default,
            bundle: DEFAULT_BUNDLE.to_owned(),
        }
    }
}

impl Toolbox {
    /// A builder of a toolbox over the program's own tools (see [`ToolboxBuilder`]).
    pub fn builder() -> ToolboxBuilder {
        ToolboxBuilder::default()
    }
}

impl ToolboxBuilder {
    /// Adds a native Rust tool, under its [`NativeTool::NAME`].
    pub fn native<T: NativeTool>(self, tool: T) -> Self {
        self.native_dyn(Arc::new(tool))
    }

    /// Adds a native tool in its object-safe form.
    pub fn native_dyn(mut self, tool: Arc<dyn DynTool>) -> Self {
        self.natives.push(tool);
        self
    }

    /// Adds an HTTP tool: what the model sees, and the request a call makes.
    pub fn http(mut self, spec: ToolSpec, http: HttpImpl) -> Self {
        self.http.push((spec, http));
        self
    }

    /// Adds one HTTP tool per operation of the OpenAPI document in `path` (JSON, or YAML
    /// with the `yaml` feature; see [`openapi::parse`]), calling
    /// the document's first server (see [`toolscout_spec::adapters::openapi`]). The file
    /// is read by [`ToolboxBuilder::build`]. Calls need the API's host allowed
    /// ([`ToolboxBuilder::http_config`]).
    pub fn http_from_openapi(mut self, path: impl AsRef<Path>) -> Self {
        self.openapi
            .push((OpenApi::File(path.as_ref().to_owned()), None));
        self
    }

    /// Adds one HTTP tool per operation of an OpenAPI document, calling `base_url` (or,
    /// when `None`, the document's first server).
    pub fn http_from_openapi_document(mut self, document: Value, base_url: Option<&str>) -> Self {
        self.openapi
            .push((OpenApi::Document(document), base_url.map(str::to_owned)));
        self
    }

    /// Adds the built-in tools (`read_file`, `write_file`, `search_files`, `http_get`,
    /// `json_query`, `clock`), their files confined to `config`'s workspace.
    pub fn builtins(mut self, config: BuiltinConfig) -> Self {
        self.builtins = Some(config);
        self
    }

    /// Where HTTP tools may go, and their limits (no host is allowed by default).
    pub fn http_config(mut self, config: HttpConfig) -> Self {
        self.invoker = self.invoker.with_http_config(config);
        self
    }

    /// The secrets HTTP tools name as `${NAME}`, with their grants.
    pub fn secrets(mut self, secrets: SecretStore) -> Self {
        self.invoker = self.invoker.with_secrets(secrets);
        self
    }

    /// Starts from this invoker (its approver, usage sink, timeouts and any native tools
    /// it already has) instead of a default one. Call it before the settings it would
    /// replace ([`ToolboxBuilder::http_config`], [`ToolboxBuilder::secrets`]).
    pub fn invoker(mut self, invoker: Invoker) -> Self {
        self.invoker = invoker;
        self
    }

    /// Keeps the catalog in `dir` (created when missing) instead of a private directory
    /// removed on drop, so that other programs (the `toolscout` CLI, a server) see it.
    pub fn directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.directory = Some(dir.into());
        self
    }

    /// Uses this search index instead of a new one in memory (e.g. one on disk), as it
    /// is: it ranks by the embedder it was given ([`SearchIndex::with_embedder`]) or by
    /// words alone, whatever [`embedder`](Self::embedder) or
    /// [`words_only`](Self::words_only) say.
    pub fn index(mut self, index: SearchIndex) -> Self {
        self.index = Some(index);
        self
    }

    /// Ranks searches by this embedder's meaning as well as by words (e.g. a
    /// `toolscout_embed::Encoder` loaded from a model folder), instead of the built-in
    /// encoder.
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.meaning = Meaning::Embedder(embedder);
        self
    }

    /// Ranks searches by words alone, with no sentence encoder (the default without the
    /// feature `embed`): a paraphrase that shares no word with a tool does not find it.
    pub fn words_only(mut self) -> Self {
        self.meaning = Meaning::WordsOnly;
        self
    }

    /// The slug of the bundle the tools go into ([`DEFAULT_BUNDLE`] by default).
    pub fn bundle(mut self, slug: impl Into<String>) -> Self {
        self.bundle = slug.into();
        self
    }

    /// Registers the native tools, reads the OpenAPI documents, opens the catalog, adds
    /// the tools and indexes them.
    ///
    /// Fails on two native tools of one name, a spec or an HTTP template that does not
    /// check out, an OpenAPI file that cannot be read or has no usable operation, or a
    /// catalog or index that cannot be opened. A single bad operation of an OpenAPI
    /// document is left out (the others are added).
    pub fn build(self) -> Result<Toolbox> {
        let ToolboxBuilder {
            natives,
            http,
            openapi,
            mut invoker,
            builtins,
            directory,
            index,
            meaning,
            bundle,
        } = self;
        let mut puts = Vec::new();
        if let Some(config) = &builtins {
            toolscout_invoke::builtin::register(&mut invoker, config)?;
        }
        for tool in natives {
            let name = tool.name().to_owned();
            let spec = invoker.register_dyn(tool)?;
            puts.push(ToolPut::native(spec, &name));
        }
        for (spec, template) in http {
            template.validate(&spec.name)?;
            let block = Implementation::Http(Box::new(template)).to_json();
            puts.push(ToolPut::http(spec, block));
        }
        for (source, base_url) in openapi {
            let (document, origin) = match source {
                OpenApi::Document(doc) => (doc, None),
                OpenApi::File(path) => (read_document(&path)?, Some(path)),
            };
            let api = openapi::from_openapi(&document, base_url.as_deref())?;
            if api.tools.is_empty() {
                return Err(Error::File {
                    path: origin.unwrap_or_default(),
                    reason: format!(
                        "the OpenAPI document has no operation that can be a tool ({} skipped)",
                        api.skipped.len()
                    ),
                });
            }
            puts.extend(
                api.tools
                    .into_iter()
                    .map(|t| ToolPut::http(t.spec, t.template)),
            );
        }
        let natives = invoker.native_names();
        let options = CatalogOptions::default()
            .with_natives(&natives)
            .with_builtins(builtins.is_some());
        let catalog = match &directory {
            Some(dir) => Catalog::open_with(dir, options)?,
            None => Catalog::temporary(options)?,
        };
        if !puts.is_empty() {
            catalog.add_tools(&BundlePut::new(bundle.as_str()), puts)?;
        }
        let index = match (index, meaning) {
            (Some(index), _) => index,
            (None, Meaning::Embedder(embedder)) => {
                SearchIndex::in_memory()?.with_embedder(embedder)
            }
            (None, Meaning::WordsOnly) => SearchIndex::in_memory()?,
            (None, Meaning::Default) => match built_in_embedder()? {
                Some(embedder) => SearchIndex::in_memory()?.with_embedder(embedder),
                None => SearchIndex::in_memory()?,
            },
        };
        Toolbox::new(catalog, index, invoker)
    }
}

/// The built-in potion-base-8M, loaded once per process (its table is about 30 MB once
/// widened to f32) and shared by every toolbox built after.
#[cfg(feature = "embed")]
fn built_in_embedder() -> Result<Option<Arc<dyn Embedder>>> {
    use std::sync::OnceLock;
    static BUILT_IN: OnceLock<Arc<toolscout_embed::Encoder>> = OnceLock::new();
    let encoder = match BUILT_IN.get() {
        Some(encoder) => encoder.clone(),
        None => {
            let loaded = Arc::new(toolscout_embed::Encoder::bundled()?);
            BUILT_IN.get_or_init(|| loaded).clone()
        }
    };
    Ok(Some(encoder))
}

/// Without the feature `embed` there is no built-in encoder: words alone.
#[cfg(not(feature = "embed"))]
fn built_in_embedder() -> Result<Option<Arc<dyn Embedder>>> {
    Ok(None)
}

/// The JSON document in `path`.
/// Reads an OpenAPI document, JSON or YAML ([`openapi::parse`]).
fn read_document(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::File {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    openapi::parse(&text).map_err(|e| Error::File {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}
