//! A static sentence encoder (model2vec's format): one vector per word piece, and a
//! text's vector is the mean of its pieces' vectors. No transformer runs, so a text costs
//! a table lookup per token: thousands of times cheaper than a BERT pass.

use std::path::Path;

use crate::error::{read_file, read_json};
use crate::{Error, Result};
use safetensors::{Dtype, SafeTensors};

/// The name model2vec gives its one tensor.
const TENSOR: &str = "embeddings";

/// The token limit model2vec applies by default: a tool's text fits whole.
pub(crate) const STATIC_MAX_TOKENS: usize = 512;

/// Whether the `config.json` at `path` describes a model2vec model (`"model_type":
/// "model2vec"`); a BERT's config does not.
pub(crate) fn is_static(path: &Path) -> Result<bool> {
    let value: serde_json::Value = read_json(path)?;
    Ok(value.get("model_type").and_then(|v| v.as_str()) == Some("model2vec"))
}

/// The table: `rows` vectors of `dim` numbers, one per token id.
#[derive(Debug)]
pub(crate) struct Table {
    values: Vec<f32>,
    rows: usize,
    dim: usize,
}

impl Table {
    /// Reads the `embeddings` tensor (F32 or F16, `[vocabulary, dim]`) of a safetensors
    /// file.
    pub(crate) fn load(path: &Path) -> Result<Table> {
        let bytes = read_file(path)?;
        let tensors = SafeTensors::deserialize(&bytes).map_err(|e| Error::Safetensors {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let view = tensors.tensor(TENSOR).map_err(|_| Error::MissingTensor {
            path: path.to_owned(),
            tensor: TENSOR.to_owned(),
        })?;
        let bad = |expected: &str| Error::BadTensor {
            path: path.to_owned(),
            tensor: TENSOR.to_owned(),
            expected: expected.to_owned(),
            found: format!("{:?} {:?}", view.dtype(), view.shape()),
        };
        let &[rows, dim] = view.shape() else {
            return Err(bad("F32 or F16 [vocabulary, dim]"));
        };
        if rows == 0 || dim == 0 {
            return Err(bad("F32 or F16 [vocabulary, dim], both positive"));
        }
        let values: Vec<f32> = match view.dtype() {
            Dtype::F32 => view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::F16 => view
                .data()
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            _ => return Err(bad("F32 or F16 [vocabulary, dim]")),
        };
        if rows.checked_mul(dim) != Some(values.len()) {
            return Err(bad("as many numbers as its shape says"));
        }
        Ok(Table { values, rows, dim })
    }

    /// How many token ids have a vector.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The length of every vector.
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// The unit-length mean of the vectors of `ids`; ids without a row are skipped. A
    /// text with no known token is the zero vector (it is close to nothing).
    pub(crate) fn embed(&self, ids: impl IntoIterator<Item = u32>) -> Vec<f32> {
        let mut sum = vec![0f32; self.dim];
        for id in ids {
            let start = id as usize * self.dim;
            let Some(row) = self.values.get(start..start + self.dim) else {
                continue;
            };
            sum.iter_mut().zip(row).for_each(|(s, v)| *s += v);
        }
        // The mean's direction is the sum's: scaling to unit length makes them equal.
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 && norm.is_finite() {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }
}

/// An IEEE 754 half-precision number, widened.
fn f16_to_f32(h: u16) -> f32 {
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

    #[test]
    fn a_text_is_the_unit_mean_of_its_known_tokens() {
        let table = Table {
            values: vec![1.0, 0.0, 0.0, 1.0, 3.0, 4.0],
            rows: 3,
            dim: 2,
        };
        let v = table.embed([0, 1]);
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!((v[0] - h).abs() < 1e-6 && (v[1] - h).abs() < 1e-6, "{v:?}");
        // An id past the table is skipped, not a panic.
        assert_eq!(table.embed([2, 99]), vec![0.6, 0.8]);
        assert_eq!(table.embed([]), vec![0.0, 0.0]);
    }
}
