//! A static sentence encoder (model2vec's format): one vector per word piece, and a
//! text's vector is the mean of its pieces' vectors. No transformer runs, so a text costs
//! a table lookup per token: thousands of times cheaper than a BERT pass.

use std::path::Path;

use crate::error::{read_file, read_json};
use crate::{Error, Result};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

/// The name model2vec gives its table.
const TENSOR: &str = "embeddings";
/// model2vec's optional per-token weights, one per token id, multiplied into its row.
const WEIGHTS: &str = "weights";
/// model2vec's optional vocabulary quantisation: the table row of each token id.
const MAPPING: &str = "mapping";

/// The token limit model2vec applies by default: a tool's text fits whole.
pub(crate) const STATIC_MAX_TOKENS: usize = 512;

/// Whether the `config.json` at `path` describes a model2vec model (`"model_type":
/// "model2vec"`); a BERT's config does not.
pub(crate) fn is_static(path: &Path) -> Result<bool> {
    let value: serde_json::Value = read_json(path)?;
    Ok(value.get("model_type").and_then(|v| v.as_str()) == Some("model2vec"))
}

/// The table: `rows` vectors of `dim` numbers, and how token ids find theirs.
#[derive(Debug)]
pub(crate) struct Table {
    values: Vec<f32>,
    rows: usize,
    dim: usize,
    /// Token id → row, when the vocabulary was quantised (several ids share a row);
    /// otherwise a token's row is its id.
    mapping: Option<Vec<u32>>,
    /// Token id → the weight its row is scaled by, when the model has them.
    weights: Option<Vec<f32>>,
}

impl Table {
    /// Reads a model2vec `model.safetensors`: the `embeddings` tensor (F32, F16 or I8,
    /// `[rows, dim]`; int8 rows are read as whole numbers, their scale being a per-token
    /// weight or nothing, since a text's vector is normalised), and when present `mapping` (an integer row per token id) and
    /// `weights` (a float per token id), as model2vec's `StaticModel` applies them. Every
    /// number must be finite and every mapped row must exist; the error names the tensor.
    ///
    /// The file is read whole and its numbers widened to f32, so loading briefly holds
    /// the file and the table (a 30 MB f16 model: about 90 MB) before the file is
    /// dropped.
    pub(crate) fn load(path: &Path) -> Result<Table> {
        Table::from_bytes(&read_file(path)?, path)
    }

    /// [`Table::load`] of a file already in memory; `path` names it in errors.
    pub(crate) fn from_bytes(bytes: &[u8], path: &Path) -> Result<Table> {
        let tensors = SafeTensors::deserialize(bytes).map_err(|e| Error::Safetensors {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let view = tensors.tensor(TENSOR).map_err(|_| Error::MissingTensor {
            path: path.to_owned(),
            tensor: TENSOR.to_owned(),
        })?;
        let bad = |name: &str, view: &TensorView<'_>, expected: &str| Error::BadTensor {
            path: path.to_owned(),
            tensor: name.to_owned(),
            expected: expected.to_owned(),
            found: format!("{:?} {:?}", view.dtype(), view.shape()),
        };
        let &[rows, dim] = view.shape() else {
            return Err(bad(TENSOR, &view, "F32, F16 or I8 [vocabulary, dim]"));
        };
        if rows == 0 || dim == 0 {
            return Err(bad(
                TENSOR,
                &view,
                "F32, F16 or I8 [vocabulary, dim], both positive",
            ));
        }
        let values =
            floats(&view).ok_or_else(|| bad(TENSOR, &view, "F32, F16 or I8 [vocabulary, dim]"))?;
        if rows.checked_mul(dim) != Some(values.len()) {
            return Err(bad(TENSOR, &view, "as many numbers as its shape says"));
        }
        if !values.iter().all(|v| v.is_finite()) {
            return Err(bad(
                TENSOR,
                &view,
                "finite numbers (it holds NaN or infinity)",
            ));
        }

        let mapping = match tensors.tensor(MAPPING) {
            Err(_) => None,
            Ok(view) => {
                let &[ids] = view.shape() else {
                    return Err(bad(MAPPING, &view, "integers [vocabulary]"));
                };
                let found =
                    integers(&view).ok_or_else(|| bad(MAPPING, &view, "integers [vocabulary]"))?;
                let mut mapping = Vec::with_capacity(ids);
                for row in found {
                    match u32::try_from(row) {
                        Ok(row) if (row as usize) < rows => mapping.push(row),
                        _ => {
                            return Err(bad(
                                MAPPING,
                                &view,
                                &format!("rows of `{TENSOR}` (0..{rows}), not {row}"),
                            ));
                        }
                    }
                }
                if mapping.len() != ids {
                    return Err(bad(MAPPING, &view, "as many numbers as its shape says"));
                }
                Some(mapping)
            }
        };
        let vocabulary = mapping.as_ref().map_or(rows, Vec::len);

        let weights = match tensors.tensor(WEIGHTS) {
            Err(_) => None,
            Ok(view) => {
                let expected = format!("F32 or F16 [{vocabulary}], a finite weight per token id");
                let weights = floats(&view)
                    .filter(|w| view.shape() == [vocabulary] && w.len() == vocabulary)
                    .filter(|w| w.iter().all(|v| v.is_finite()))
                    .ok_or_else(|| bad(WEIGHTS, &view, &expected))?;
                Some(weights)
            }
        };
        drop(tensors);
        Ok(Table {
            values,
            rows,
            dim,
            mapping,
            weights,
        })
    }

    /// How many token ids have a vector: the table's rows, or the mapping's length when
    /// the vocabulary was quantised.
    pub(crate) fn vocabulary(&self) -> usize {
        self.mapping.as_ref().map_or(self.rows, Vec::len)
    }

    /// The length of every vector.
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// The unit-length mean of the (weighted) rows of `ids`; ids without a row are
    /// skipped. A text with no known token is the zero vector (it is close to nothing),
    /// and so is one whose sum overflows.
    pub(crate) fn embed(&self, ids: impl IntoIterator<Item = u32>) -> Vec<f32> {
        let mut sum = vec![0f32; self.dim];
        for id in ids {
            let id = id as usize;
            if id >= self.vocabulary() {
                continue;
            }
            let row = self.mapping.as_ref().map_or(id, |m| m[id] as usize);
            let weight = self.weights.as_ref().map_or(1.0, |w| w[id]);
            // `row < rows` and `rows * dim` fits (checked at load).
            let start = row * self.dim;
            let Some(values) = self.values.get(start..start + self.dim) else {
                continue;
            };
            sum.iter_mut()
                .zip(values)
                .for_each(|(s, v)| *s += weight * v);
        }
        // The mean's direction is the sum's: scaling to unit length makes them equal.
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() {
            return vec![0.0; self.dim];
        }
        if norm > 0.0 {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }
}

/// A float tensor's numbers widened to f32 (F32, F16 or F64; I8, model2vec's int8
/// quantisation, as whole numbers), or `None` for another element type.
fn floats(view: &TensorView<'_>) -> Option<Vec<f32>> {
    let data = view.data();
    Some(match view.dtype() {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        Dtype::F64 => data
            .chunks_exact(8)
            .map(|b| {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                f64::from_le_bytes(a) as f32
            })
            .collect(),
        Dtype::I8 => data
            .iter()
            .map(|&b| f32::from(i8::from_le_bytes([b])))
            .collect(),
        _ => return None,
    })
}

/// An integer tensor's numbers (I64, I32, U32 or U64; numpy saves `int64`), or `None`
/// for another element type. A U64 past `i64::MAX` becomes negative: no row.
fn integers(view: &TensorView<'_>) -> Option<Vec<i64>> {
    let data = view.data();
    let eight = |b: &[u8]| {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        a
    };
    Some(match view.dtype() {
        Dtype::I64 => data
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(eight(b)))
            .collect(),
        Dtype::U64 => data
            .chunks_exact(8)
            .map(|b| i64::try_from(u64::from_le_bytes(eight(b))).unwrap_or(-1))
            .collect(),
        Dtype::I32 => data
            .chunks_exact(4)
            .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect(),
        Dtype::U32 => data
            .chunks_exact(4)
            .map(|b| i64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect(),
        _ => return None,
    })
}

/// An IEEE 754 half-precision number, widened.
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        // Subnormal: value = frac × 2^-24.
        (0, _) => {
            let v = frac as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (frac << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_widens_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    fn table(values: Vec<f32>, dim: usize) -> Table {
        Table {
            rows: values.len() / dim,
            values,
            dim,
            mapping: None,
            weights: None,
        }
    }

    #[test]
    fn a_text_is_the_unit_mean_of_its_known_tokens() {
        let table = table(vec![1.0, 0.0, 0.0, 1.0, 3.0, 4.0], 2);
        let v = table.embed([0, 1]);
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!((v[0] - h).abs() < 1e-6 && (v[1] - h).abs() < 1e-6, "{v:?}");
        // An id past the table is skipped, not a panic, even one whose row would
        // overflow `id * dim`.
        assert_eq!(table.embed([2, 99, u32::MAX]), vec![0.6, 0.8]);
        assert_eq!(table.embed([]), vec![0.0, 0.0]);
    }

    #[test]
    fn weights_scale_rows_and_the_mapping_picks_them() {
        let mut t = table(vec![1.0, 0.0, 0.0, 1.0], 2);
        // Three token ids over two rows: ids 0 and 2 share row 0.
        t.mapping = Some(vec![0, 1, 0]);
        t.weights = Some(vec![3.0, 4.0, 1.0]);
        assert_eq!(t.embed([0, 1]), vec![0.6, 0.8]);
        assert_eq!(t.embed([2]), vec![1.0, 0.0]);
        // Id 3 is past the mapping: skipped.
        assert_eq!(t.embed([3]), vec![0.0, 0.0]);
    }

    #[test]
    fn a_sum_that_overflows_is_the_zero_vector() {
        let t = table(vec![f32::MAX, f32::MAX], 2);
        assert_eq!(t.embed([0, 0]), vec![0.0, 0.0]);
    }
}
