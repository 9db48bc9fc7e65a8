//! Mapping one model's cosines onto the scale search's thresholds are set in.

use crate::{Error, Result};

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
