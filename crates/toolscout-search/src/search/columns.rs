//! Fast-field columns of a search: read per document, opened once per segment.

use tantivy::columnar::Column;
use tantivy::{DocAddress, Searcher};

use crate::Result;
use crate::schema::{ENABLED, MODIFIED_AT, NAME_FAST, NAME_WORDS};

/// Fast-field columns, opened once per segment per search.
#[derive(Default)]
pub(super) struct Columns {
    modified: Vec<Option<Column<i64>>>,
    name_words: Vec<Option<Column<u64>>>,
    names: Vec<Option<tantivy::columnar::StrColumn>>,
}

impl Columns {
    pub(super) fn modified_at(&mut self, searcher: &Searcher, addr: DocAddress) -> Result<i64> {
        let seg = addr.segment_ord as usize;
        if self.modified.len() <= seg {
            self.modified.resize_with(seg + 1, || None);
        }
        if self.modified[seg].is_none() {
            let reader = searcher.segment_reader(addr.segment_ord);
            self.modified[seg] = Some(reader.fast_fields().i64(MODIFIED_AT)?);
        }
        Ok(self.modified[seg]
            .as_ref()
            .and_then(|c| c.first(addr.doc_id))
            .unwrap_or(0))
    }

    pub(super) fn name_words(&mut self, searcher: &Searcher, addr: DocAddress) -> Result<u32> {
        let seg = addr.segment_ord as usize;
        if self.name_words.len() <= seg {
            self.name_words.resize_with(seg + 1, || None);
        }
        if self.name_words[seg].is_none() {
            let reader = searcher.segment_reader(addr.segment_ord);
            self.name_words[seg] = Some(reader.fast_fields().u64(NAME_WORDS)?);
        }
        let n = self.name_words[seg]
            .as_ref()
            .and_then(|c| c.first(addr.doc_id))
            .unwrap_or(0);
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    pub(super) fn name(&mut self, searcher: &Searcher, addr: DocAddress) -> Result<String> {
        let seg = addr.segment_ord as usize;
        if self.names.len() <= seg {
            self.names.resize_with(seg + 1, || None);
        }
        if self.names[seg].is_none() {
            let reader = searcher.segment_reader(addr.segment_ord);
            self.names[seg] = reader.fast_fields().str(NAME_FAST)?;
        }
        let mut out = String::new();
        if let Some(col) = &self.names[seg]
            && let Some(ord) = col.term_ords(addr.doc_id).next()
        {
            col.ord_to_str(ord, &mut out)
                .map_err(|e| crate::Error::Index(e.into()))?;
        }
        Ok(out)
    }

    pub(super) fn enabled(&mut self, searcher: &Searcher, addr: DocAddress) -> Result<bool> {
        let reader = searcher.segment_reader(addr.segment_ord);
        let col = reader.fast_fields().u64(ENABLED)?;
        Ok(col.first(addr.doc_id).unwrap_or(1) == 1)
    }
}
