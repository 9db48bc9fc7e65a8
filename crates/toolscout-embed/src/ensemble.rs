//! Several sentence encoders read as one: [`Ensemble`].

use std::sync::Arc;

use toolscout_search::Embedder;

use crate::{Error, Result};

/// Sentence encoders read as one embedder: a text's vector is the members' vectors side
/// by side, each scaled by the square root of its weight (weights sum to one), so the
/// dot product of two such vectors is the weighted mean of the members' cosines.
///
/// Models that were trained differently err on different texts, and the mean of their
/// cosines ranks better than either: all-MiniLM-L6-v2 with the built-in potion-base-8M
/// is what the CLI uses when the first is fetched.
///
/// **Rationale:** recall@5 by cosine alone (the tool's name words and description
/// against the query), all-MiniLM-L6-v2 / potion-base-8M / both at equal weights: BFCL
/// (1,000 queries) 0.783 / 0.795 / **0.848**, MetaTool (1,500) 0.755 / 0.742 /
/// **0.803**. Weights 0.3 and 0.7 for MiniLM gave 0.838 and 0.839 on BFCL, 0.802 and
/// 0.816 on MetaTool (1,000). The potion table is almost free beside the transformer,
/// so the mixture costs MiniLM's time and the two models' vector memory.
///
/// ```
/// use std::sync::Arc;
/// use toolscout_embed::Ensemble;
/// use toolscout_search::Embedder;
///
/// /// A toy embedder: one dimension per letter a–c, counted and normalised.
/// struct Letters;
/// impl Embedder for Letters {
///     fn model(&self) -> &str { "letters" }
///     fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
///         texts.iter().map(|t| {
///             let v: Vec<f32> = ['a', 'b', 'c'].iter().map(|&c| t.matches(c).count() as f32).collect();
///             let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
///             v.into_iter().map(|x| x / n).collect()
///         }).collect()
///     }
/// }
///
/// let both = Ensemble::new(vec![(Arc::new(Letters) as Arc<dyn Embedder>, 1.0), (Arc::new(Letters), 3.0)])?;
/// assert_eq!(both.model(), "letters*0.25+letters*0.75");
/// let v = both.embed(&["ab", "ab"]);
/// let cosine: f32 = v[0].iter().zip(&v[1]).map(|(x, y)| x * y).sum();
/// assert!((cosine - 1.0).abs() < 1e-6);
/// # Ok::<(), toolscout_embed::Error>(())
/// ```
pub struct Ensemble {
    model: String,
    members: Vec<Member>,
}

struct Member {
    embedder: Arc<dyn Embedder>,
    /// The share of the cosine, the weights summing to one.
    weight: f32,
    /// The length of this member's vectors.
    dim: usize,
}

impl std::fmt::Debug for Ensemble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ensemble")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Ensemble {
    /// Combines `members`, each with its weight (any positive numbers: they are divided by
    /// their sum). Fails without members, or for a weight that is not a positive finite
    /// number. Each member embeds one short text here, to learn its vectors' length.
    ///
    /// The name ([`Embedder::model`]) is the members' names joined by `+`, each followed
    /// by `*` and its share (two decimals) unless all shares are equal; an index built
    /// with one mixture is not read with another.
    pub fn new(members: Vec<(Arc<dyn Embedder>, f32)>) -> Result<Ensemble> {
        if members.is_empty() {
            return Err(Error::Ensemble("no encoder to combine".into()));
        }
        if let Some((e, w)) = members.iter().find(|(_, w)| !(w.is_finite() && *w > 0.0)) {
            return Err(Error::Ensemble(format!(
                "the weight of {} is {w}; weights are positive numbers",
                e.model()
            )));
        }
        let total: f32 = members.iter().map(|(_, w)| w).sum();
        let members: Vec<Member> = members
            .into_iter()
            .map(|(embedder, w)| Member {
                dim: embedder.embed_query("a").len(),
                weight: w / total,
                embedder,
            })
            .collect();
        let equal = members
            .iter()
            .all(|m| (m.weight - members[0].weight).abs() < 1e-6);
        let model = members
            .iter()
            .map(|m| {
                if equal {
                    m.embedder.model().to_owned()
                } else {
                    format!("{}*{:.2}", m.embedder.model(), m.weight)
                }
            })
            .collect::<Vec<_>>()
            .join("+");
        Ok(Ensemble { model, members })
    }

    /// The length of the vectors: the sum of the members'.
    pub fn dim(&self) -> usize {
        self.members.iter().map(|m| m.dim).sum()
    }

    /// The members' vectors of one text, side by side and scaled. A member's vector of
    /// another length than its first (which an embedder must not give) counts as zeros,
    /// so every vector keeps the ensemble's length.
    fn join(&self, parts: impl Iterator<Item = Vec<f32>>) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.dim());
        for (m, v) in self.members.iter().zip(parts) {
            if v.len() == m.dim {
                let scale = m.weight.sqrt();
                out.extend(v.into_iter().map(|x| x * scale));
            } else {
                out.resize(out.len() + m.dim, 0.0);
            }
        }
        out
    }
}

impl Embedder for Ensemble {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let mut per_member: Vec<std::vec::IntoIter<Vec<f32>>> = self
            .members
            .iter()
            .map(|m| m.embedder.embed(texts).into_iter())
            .collect();
        (0..texts.len())
            .map(|_| self.join(per_member.iter_mut().map(|v| v.next().unwrap_or_default())))
            .collect()
    }

    fn embed_query(&self, text: &str) -> Vec<f32> {
        self.join(self.members.iter().map(|m| m.embedder.embed_query(text)))
    }

    /// The weighted mean of the members' calibrations of `cosine`: exact when the members'
    /// own cosines agree, and a non-decreasing map always.
    fn calibrate(&self, cosine: f32) -> f32 {
        self.members
            .iter()
            .map(|m| m.weight * m.embedder.calibrate(cosine))
            .sum()
    }
}
