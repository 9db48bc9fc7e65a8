//! Mapping one model's cosines onto the scale search's thresholds are set in.

use std::path::Path;

use crate::{Error, Result};

/// The file in a model's folder that holds its calibration ([`Calibration::read`]).
pub const CALIBRATION_FILE: &str = "calibration.json";

/// The largest calibration file read, in bytes: a few dozen knots take under 2 KB.
const MAX_CALIBRATION_BYTES: u64 = 64 * 1024;

/// The reference cosines [`Calibration::fit`] puts knots at.
const FIT_LEVELS: [f32; 9] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/// The fewest pairs that must lie above a level (and below it) for
/// [`Calibration::fit`] to put a knot there: a quantile of fewer is noise.
const MIN_PAIRS_BEYOND: usize = 20;

/// What [`CALIBRATION_FILE`] holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct CalibrationFile {
    /// `[model's cosine, reference cosine]` pairs, as [`Calibration::new`] takes them.
    knots: Vec<(f32, f32)>,
    /// Where the knots came from, for people; not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    measured: Option<String>,
}

/// A non-decreasing, piecewise-linear map from a model's cosines to all-MiniLM-L6-v2's
/// scale, where `toolscout-search` and the agent set their thresholds (unrelated texts
/// near 0.1, one subject above 0.3, near-twins above 0.8).
///
/// **Rationale:** a model's cosines have their own spread: potion-base-8M puts the
/// median pair of unrelated tool texts at 0.10 where all-MiniLM-L6-v2 puts it at 0.04,
/// and a query's expected tool at 0.58 where MiniLM has 0.52. Thresholds measured on one
/// model then mean something else on the other (twins at 0.8 group 9.5 names into the
/// first five BFCL hits under potion, 7.7 under MiniLM). Matching the two models'
/// quantiles over the same pairs gives the knots: the cosine at which a given share of
/// pairs lies below is mapped to MiniLM's cosine at that share.
///
/// Outside the knots the map goes on along the line to (−1, −1) below the first knot
/// and to (1, 1) above the last.
///
/// ```
/// use toolscout_embed::Calibration;
///
/// let c = Calibration::new(vec![(0.2, 0.1), (0.4, 0.3)])?;
/// assert!((c.apply(0.3) - 0.2).abs() < 1e-6);
/// assert_eq!(c.apply(1.0), 1.0);
/// assert!(Calibration::new(vec![(0.4, 0.3), (0.2, 0.1)]).is_err());
/// # Ok::<(), toolscout_embed::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// `(model's cosine, MiniLM's cosine)`, both strictly increasing, with (−1, −1) and
    /// (1, 1) at the ends.
    knots: Vec<(f32, f32)>,
}

impl Calibration {
    /// A map through `knots`, `(model's cosine, reference cosine)` pairs: each number
    /// finite and inside (−1, 1), both coordinates strictly increasing. The error says
    /// which knot is wrong.
    pub fn new(knots: Vec<(f32, f32)>) -> Result<Calibration> {
        let mut all = Vec::with_capacity(knots.len() + 2);
        all.push((-1.0, -1.0));
        for (i, &(x, y)) in knots.iter().enumerate() {
            let inside = |v: f32| v.is_finite() && v > -1.0 && v < 1.0;
            let &(px, py) = all.last().unwrap_or(&(-1.0, -1.0));
            if !inside(x) || !inside(y) || x <= px || y <= py {
                return Err(Error::Calibration(format!(
                    "knot {i} ({x}, {y}) must lie inside (-1, 1) on both axes and above the \
                     knot before it ({px}, {py})"
                )));
            }
            all.push((x, y));
        }
        all.push((1.0, 1.0));
        Ok(Calibration { knots: all })
    }

    /// The map that matches the quantiles of `model`'s cosines to `reference`'s: two
    /// models' cosines over the same pairs of texts (a query and a tool, two tools). At
    /// each of the reference levels 0.1, 0.2, … 0.9, the share of reference cosines below
    /// it is found, and the model's cosine at that share is mapped to it; a level with
    /// fewer than 20 pairs on either side is left out, as is a knot not above the one
    /// before it. The error says when the cosines are too few or not numbers.
    ///
    /// ```
    /// use toolscout_embed::Calibration;
    ///
    /// // A model whose cosines run 0.5 higher, squeezed into the top half.
    /// let reference: Vec<f32> = (0..1000).map(|i| i as f32 / 1000.0).collect();
    /// let model: Vec<f32> = reference.iter().map(|c| 0.5 + c / 2.0).collect();
    /// let c = Calibration::fit(model, reference)?;
    /// assert!((c.apply(0.75) - 0.5).abs() < 0.01);
    /// assert!((c.apply(0.6) - 0.2).abs() < 0.01);
    /// # Ok::<(), toolscout_embed::Error>(())
    /// ```
    pub fn fit(mut model: Vec<f32>, mut reference: Vec<f32>) -> Result<Calibration> {
        if model.iter().chain(&reference).any(|c| !c.is_finite()) {
            return Err(Error::Calibration(
                "a cosine to fit is not a finite number".into(),
            ));
        }
        let least = 2 * MIN_PAIRS_BEYOND;
        if model.len() < least || reference.len() < least {
            return Err(Error::Calibration(format!(
                "{} and {} cosines are too few to fit; at least {least} of each",
                model.len(),
                reference.len()
            )));
        }
        model.sort_by(f32::total_cmp);
        reference.sort_by(f32::total_cmp);
        let mut knots: Vec<(f32, f32)> = Vec::new();
        for level in FIT_LEVELS {
            let below = reference.partition_point(|&c| c < level);
            if below < MIN_PAIRS_BEYOND || reference.len() - below < MIN_PAIRS_BEYOND {
                continue;
            }
            let share = below as f64 / reference.len() as f64;
            // The model's cosine at the same share of its pairs.
            let at = ((share * model.len() as f64) as usize).min(model.len() - 1);
            let x = model[at];
            let inside = x > -1.0 && x < 1.0;
            let above = knots.last().is_none_or(|&(px, _)| x > px);
            if inside && above {
                knots.push((x, level));
            }
        }
        Calibration::new(knots)
    }

    /// The knots between the ends (−1, −1) and (1, 1), as [`Calibration::new`] took them.
    pub fn knots(&self) -> &[(f32, f32)] {
        &self.knots[1..self.knots.len() - 1]
    }

    /// The calibration in `path` (a [`CALIBRATION_FILE`]: `{"knots": [[0.78, 0.1], …]}`,
    /// the model's cosine then the reference's), or an error that names the file and
    /// says what is wrong with it.
    pub fn read(path: &Path) -> Result<Calibration> {
        let io = |cause| Error::Io {
            path: path.to_owned(),
            cause,
        };
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > MAX_CALIBRATION_BYTES {
            return Err(Error::Config {
                path: path.to_owned(),
                message: format!(
                    "{size} bytes is too large for a calibration (at most {MAX_CALIBRATION_BYTES})"
                ),
            });
        }
        let file: CalibrationFile = crate::error::read_json(path)?;
        Calibration::new(file.knots).map_err(|e| Error::Config {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// Writes the knots to `path` as [`Calibration::read`] reads them, with `measured`
    /// (what the knots were measured on) beside them; through a temporary file renamed
    /// into place, so that a reader never sees half a file.
    pub fn write(&self, path: &Path, measured: &str) -> Result<()> {
        let file = CalibrationFile {
            knots: self.knots().to_vec(),
            measured: Some(measured.to_owned()),
        };
        let io = |cause| Error::Io {
            path: path.to_owned(),
            cause,
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| io(std::io::Error::other(e)))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text + "\n").map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// The reference cosine of this model's `cosine`; NaN stays NaN, and values beyond
    /// ±1 (rounding) are clamped first.
    pub fn apply(&self, cosine: f32) -> f32 {
        if cosine.is_nan() {
            return cosine;
        }
        let x = cosine.clamp(-1.0, 1.0);
        let i = self.knots.partition_point(|&(kx, _)| kx < x).max(1);
        let (Some(&(x0, y0)), Some(&(x1, y1))) = (self.knots.get(i - 1), self.knots.get(i)) else {
            return x;
        };
        y0 + (x - x0) * (y1 - y0) / (x1 - x0)
    }
}

#[cfg(test)]
mod tests {
    use super::Calibration;

    #[test]
    fn the_map_goes_through_its_knots_and_keeps_the_order() {
        let c = Calibration::new(vec![(0.165, 0.1), (0.385, 0.3), (0.84, 0.8)]).unwrap();
        for (x, y) in [
            (-1.0, -1.0),
            (0.165, 0.1),
            (0.385, 0.3),
            (0.84, 0.8),
            (1.0, 1.0),
        ] {
            assert!((c.apply(x) - y).abs() < 1e-6, "{x} → {}", c.apply(x));
        }
        let mut last = f32::NEG_INFINITY;
        for i in -120..=120 {
            let y = c.apply(i as f32 / 100.0);
            assert!(y >= last && (-1.0..=1.0).contains(&y), "at {i}: {y}");
            last = y;
        }
        assert!(c.apply(f32::NAN).is_nan());
    }

    #[test]
    fn a_fit_maps_quantiles_and_a_file_round_trips() {
        // A model whose cosines are the reference's squared: the same order, lower.
        let reference: Vec<f32> = (0..2000).map(|i| i as f32 / 2000.0).collect();
        let model: Vec<f32> = reference.iter().map(|c| c * c).collect();
        let c = Calibration::fit(model, reference).unwrap();
        assert_eq!(c.knots().len(), 9);
        for level in [0.1f32, 0.5, 0.9] {
            assert!((c.apply(level * level) - level).abs() < 0.005, "{level}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(super::CALIBRATION_FILE);
        c.write(&path, "a test").unwrap();
        let back = Calibration::read(&path).unwrap();
        assert_eq!(back.knots().len(), c.knots().len());
        assert!((back.apply(0.25) - c.apply(0.25)).abs() < 1e-6);
        // Too few cosines, or not numbers, are refused with a reason.
        let err = Calibration::fit(vec![0.5; 10], vec![0.5; 10]).unwrap_err();
        assert!(err.to_string().contains("too few"), "{err}");
        let err = Calibration::fit(vec![f32::NAN; 100], vec![0.5; 100]).unwrap_err();
        assert!(err.to_string().contains("finite"), "{err}");
        // A file of knots out of order names itself.
        std::fs::write(&path, r#"{"knots": [[0.5, 0.5], [0.4, 0.6]]}"#).unwrap();
        let err = Calibration::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("calibration.json") && err.contains("knot"),
            "{err}"
        );
        std::fs::write(&path, "not json").unwrap();
        let err = Calibration::read(&path).unwrap_err().to_string();
        assert!(err.contains("invalid JSON"), "{err}");
    }

    #[test]
    fn knots_out_of_order_or_range_are_refused() {
        for knots in [
            vec![(0.5, 0.5), (0.4, 0.6)],
            vec![(0.4, 0.5), (0.5, 0.5)],
            vec![(1.0, 0.5)],
            vec![(0.2, f32::NAN)],
        ] {
            let err = Calibration::new(knots.clone()).unwrap_err().to_string();
            assert!(err.contains("knot"), "{knots:?}: {err}");
        }
        assert_eq!(Calibration::new(vec![]).unwrap().apply(0.25), 0.25);
    }
}
