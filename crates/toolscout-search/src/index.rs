//! [`SearchIndex`]: the tantivy index, in memory or in a directory, and its writes.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tantivy::directory::MmapDirectory;
use tantivy::schema::Term;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument};

use crate::analyzer::{ANALYZER, ANALYZER_EXACT, analyzer, exact_analyzer};
use crate::schema::{Fields, IndexDoc, schema};
use crate::semantic::{Semantic, tool_text};
use crate::{Embedder, Error, Result};

/// Memory the writer may use before it flushes a segment, in bytes. Large enough that a
/// 100k-tool catalog makes one segment.
const WRITER_HEAP: usize = 512 * 1024 * 1024;

/// Indexing threads of the writer.
///
/// **Rationale:** each thread writes its own segment, and every query pays per segment:
/// on the 92k OpenAPI tools one segment answers in about 0.7× the time of two (p50 and
/// p99 alike), while building with one thread took about 1.1× as long, since the calling
/// thread prepares documents (parameter text, name expansion) in parallel with it.
const INDEXING_THREADS: usize = 1;

/// A search index over tools.
///
/// Writes ([`upsert`](Self::upsert), [`delete`](Self::delete)) become visible at
/// [`commit`](Self::commit); until then every search sees the previous snapshot. The
/// index is `Send + Sync`: search from many threads, write from any.
pub struct SearchIndex {
    pub(crate) index: Index,
    pub(crate) reader: IndexReader,
    pub(crate) fields: Fields,
    pub(crate) analyzer: TextAnalyzer,
    /// The unstemmed analyzer, for a query's words as written.
    pub(crate) exact_analyzer: TextAnalyzer,
    pub(crate) semantic: Option<Semantic>,
    writer: Mutex<Option<IndexWriter<TantivyDocument>>>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("docs", &self.len())
            .field("semantic", &self.semantic)
            .finish_non_exhaustive()
    }
}

impl SearchIndex {
    /// An empty index in memory.
    pub fn in_memory() -> Result<Self> {
        Self::from_index(Index::create_in_ram(schema()))
    }

    /// Opens the index stored in `dir`, or creates an empty one there (creating `dir`).
    ///
    /// Reopening reads what was committed; nothing is re-indexed. An index written by a
    /// version of this crate with other fields does not open ([`Error::Directory`] says
    /// the schema does not match): delete the directory and index the tools again.
    pub fn open_or_create(dir: &Path) -> Result<Self> {
        let err = |reason: String| Error::Directory {
            path: dir.to_path_buf(),
            reason,
        };
        std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        let mmap = MmapDirectory::open(dir).map_err(|e| err(e.to_string()))?;
        let index = Index::open_or_create(mmap, schema()).map_err(|e| err(e.to_string()))?;
        Self::from_index(index)
    }

    fn from_index(index: Index) -> Result<Self> {
        index.tokenizers().register(ANALYZER, analyzer());
        index
            .tokenizers()
            .register(ANALYZER_EXACT, exact_analyzer());
        let fields = Fields::new(&index.schema())?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(SearchIndex {
            index,
            reader,
            fields,
            analyzer: analyzer(),
            exact_analyzer: exact_analyzer(),
            semantic: None,
            writer: Mutex::new(None),
        })
    }

    /// Ranks sentence queries by meaning too: the word tier fuses BM25 with the cosine of
    /// the `embedder`'s vectors of the query and of each tool (see [`Embedder`]).
    ///
    /// Tools are embedded when they are added, so set the embedder before adding them; the
    /// vectors live in memory, and tools already in a reopened index are ranked by words
    /// alone until they are added again. Name-like queries (one word, no spaces) are not
    /// affected: exact, prefix and fuzzy name matches stay as they are.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolscout_search::{Embedder, IndexDoc, SearchIndex, SearchQuery};
    ///
    /// /// A toy embedder: one dimension per topic word.
    /// struct Topics;
    /// impl Embedder for Topics {
    ///     fn model(&self) -> &str { "topics" }
    ///     fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
    ///         texts.iter().map(|t| {
    ///             let t = t.to_lowercase();
    ///             let v = [t.contains("weather") || t.contains("rain"), t.contains("file")];
    ///             let v: Vec<f32> = v.iter().map(|&b| if b { 1.0 } else { 0.0 }).collect();
    ///             let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    ///             v.iter().map(|x| x / n).collect()
    ///         }).collect()
    ///     }
    /// }
    ///
    /// let tools = toolscout_spec::sample::catalog();
    /// let index = SearchIndex::in_memory()?.with_embedder(Arc::new(Topics));
    /// index.extend(tools.iter().map(IndexDoc::new), &mut |_| {})?;
    /// // Meaning ranks a weather tool first, whatever words it uses.
    /// let found = index.search(&SearchQuery::new("will it rain tomorrow"))?;
    /// let first: Vec<&str> = found.hits.iter().take(2).map(|h| h.id.as_str()).collect();
    /// assert!(first.contains(&"get_weather"), "{first:?}");
    /// # Ok::<(), toolscout_search::Error>(())
    /// ```
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.semantic = Some(Semantic::new(embedder));
        self
    }

    /// The model that ranks by meaning, if any (see [`with_embedder`](Self::with_embedder)).
    pub fn embedder_model(&self) -> Option<&str> {
        self.semantic.as_ref().map(|s| s.embedder.model())
    }

    /// How close in meaning two indexed tools are: the cosine of their committed vectors.
    /// `None` without an embedder, or when either id has no vector.
    ///
    /// Near 1 for tools that do the same thing under two names (`calculate_entropy_change`
    /// and `entropy_change.calculate`), so a caller can keep one of each such pair.
    pub fn similarity(&self, a: &str, b: &str) -> Option<f32> {
        self.semantic.as_ref()?.between(a, b)
    }

    /// How many tools the current snapshot holds.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Whether the current snapshot holds no tool.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn with_writer<T>(
        &self,
        f: impl FnOnce(&mut IndexWriter<TantivyDocument>) -> Result<T>,
    ) -> Result<T> {
        let mut guard = self
            .writer
            .lock()
            .map_err(|_| Error::Writer("a previous write panicked".to_owned()))?;
        if guard.is_none() {
            *guard = Some(
                self.index
                    .writer_with_num_threads(INDEXING_THREADS, WRITER_HEAP)?,
            );
        }
        match guard.as_mut() {
            Some(w) => f(w),
            None => Err(Error::Writer("no writer".to_owned())),
        }
    }

    /// Adds a tool, replacing the tool with the same id. Visible after [`commit`](Self::commit).
    pub fn upsert(&self, doc: &IndexDoc<'_>) -> Result<()> {
        self.with_writer(|w| {
            w.delete_term(Term::from_field_text(self.fields.id, doc.id));
            w.add_document(self.fields.document(doc, &mut self.analyzer.clone()))?;
            Ok(())
        })?;
        if let Some(s) = &self.semantic {
            s.stage(vec![(doc.id.to_owned(), tool_text(doc.spec))]);
        }
        Ok(())
    }

    /// Adds many tools at once, replacing those with the same ids, then commits.
    ///
    /// `progress` is called with the number of tools added so far, every 1,024 tools.
    /// Prefer it to many [`upsert`](Self::upsert)s when (re)building: on an empty index it
    /// skips the replacement step.
    pub fn extend<'a>(
        &self,
        docs: impl IntoIterator<Item = IndexDoc<'a>>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        self.add(docs, progress)?;
        self.commit()
    }

    /// [`extend`](Self::extend) without the commit: for adding a large catalog a batch at
    /// a time and committing once (one commit makes one segment, which answers faster
    /// than many).
    pub fn add<'a>(
        &self,
        docs: impl IntoIterator<Item = IndexDoc<'a>>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        // Nothing committed yet: the ids are new, and need no replacing.
        let fresh = self.is_empty();
        let mut analyzer = self.analyzer.clone();
        let mut meaning: Vec<(String, String)> = Vec::new();
        self.with_writer(|w| {
            let mut n = 0u64;
            for doc in docs {
                if !fresh {
                    w.delete_term(Term::from_field_text(self.fields.id, doc.id));
                }
                w.add_document(self.fields.document(&doc, &mut analyzer))?;
                if self.semantic.is_some() {
                    meaning.push((doc.id.to_owned(), tool_text(doc.spec)));
                }
                n += 1;
                if n.is_multiple_of(1024) {
                    progress(n);
                }
            }
            progress(n);
            Ok(())
        })?;
        if let Some(s) = &self.semantic {
            s.stage(meaning);
        }
        Ok(())
    }

    /// Removes the tool with this id (nothing happens if there is none). Visible after
    /// [`commit`](Self::commit).
    pub fn delete(&self, id: &str) -> Result<()> {
        self.with_writer(|w| {
            w.delete_term(Term::from_field_text(self.fields.id, id));
            Ok(())
        })?;
        if let Some(s) = &self.semantic {
            s.stage_delete(id);
        }
        Ok(())
    }

    /// Makes every write so far durable and visible to new searches.
    ///
    /// The writer is let go after each commit (and made again at the next write): its
    /// indexing memory is freed, and another process may write to an index on disk.
    pub fn commit(&self) -> Result<()> {
        self.with_writer(|w| {
            w.commit()?;
            Ok(())
        })?;
        let writer = self
            .writer
            .lock()
            .map_err(|_| Error::Writer("a previous write panicked".to_owned()))?
            .take();
        if let Some(w) = writer {
            // Lets merges the commit started finish, so segments do not pile up.
            w.wait_merging_threads()?;
        }
        self.reader.reload()?;
        if let Some(s) = &self.semantic {
            s.commit();
        }
        Ok(())
    }
}
