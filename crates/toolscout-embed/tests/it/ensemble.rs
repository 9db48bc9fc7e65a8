//! Encoders mixed: the cosine of an ensemble is the weighted mean of its members'.

use std::sync::Arc;

use toolscout_embed::Ensemble;
use toolscout_search::Embedder;

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// One dimension per letter a–e, counted and normalised; a text with "!" gets no vector
/// (as a broken embedder might).
struct Letters;

impl Embedder for Letters {
    fn model(&self) -> &str {
        "letters"
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        texts
            .iter()
            .map(|t| {
                if t.contains('!') {
                    return Vec::new();
                }
                let v: Vec<f32> = ['a', 'b', 'c', 'd', 'e']
                    .iter()
                    .map(|&c| t.matches(c).count() as f32 + 0.01)
                    .collect();
                let n = cosine(&v, &v).sqrt();
                v.into_iter().map(|x| x / n).collect()
            })
            .collect()
    }

    fn calibrate(&self, cosine: f32) -> f32 {
        cosine / 2.0
    }
}

#[cfg(feature = "bundled")]
#[test]
fn an_ensemble_cosine_is_the_weighted_mean_of_its_members_cosines() {
    let potion: Arc<dyn Embedder> = Arc::new(toolscout_embed::Encoder::bundled().unwrap());
    let letters: Arc<dyn Embedder> = Arc::new(Letters);
    let mix = Ensemble::new(vec![(potion.clone(), 3.0), (letters.clone(), 1.0)]).unwrap();
    assert_eq!(mix.model(), "potion-base-8M-int8*0.75+letters*0.25");
    assert_eq!(mix.dim(), 256 + 5);
    let docs = [
        "convert currency: convert an amount of money",
        "get weather: the weather forecast for a city",
    ];
    let query = "will it rain in Paris tomorrow";
    let vectors = mix.embed(&docs);
    let q = mix.embed_query(query);
    assert_eq!(q.len(), mix.dim());
    for (doc, v) in docs.iter().zip(&vectors) {
        assert_eq!(v.len(), mix.dim());
        assert!((cosine(v, v) - 1.0).abs() < 1e-4, "unit length");
        let expected = 0.75 * cosine(&potion.embed_query(query), &potion.embed(&[doc])[0])
            + 0.25 * cosine(&letters.embed_query(query), &letters.embed(&[doc])[0]);
        assert!((cosine(&q, v) - expected).abs() < 1e-4, "{doc}");
    }
    for c in [0.1f32, 0.4, 0.8] {
        let expected = 0.75 * potion.calibrate(c) + 0.25 * c / 2.0;
        assert!((mix.calibrate(c) - expected).abs() < 1e-6);
    }
}

#[test]
fn equal_weights_name_the_members_alone_and_a_missing_vector_is_zeros() {
    let mix = Ensemble::new(vec![
        (Arc::new(Letters) as Arc<dyn Embedder>, 2.0),
        (Arc::new(Letters), 2.0),
    ])
    .unwrap();
    assert_eq!(mix.model(), "letters+letters");
    let v = mix.embed(&["abc", "abc!"]);
    assert_eq!(v[0].len(), 10);
    assert!((cosine(&v[0], &v[0]) - 1.0).abs() < 1e-5);
    assert_eq!(v[1], vec![0.0; 10], "a member without a vector gives zeros");
}

#[test]
fn an_ensemble_needs_members_with_positive_weights() {
    let err = Ensemble::new(Vec::new()).unwrap_err().to_string();
    assert_eq!(err, "ensemble: no encoder to combine");
    for w in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let err = Ensemble::new(vec![
            (Arc::new(Letters) as Arc<dyn Embedder>, 1.0),
            (Arc::new(Letters), w),
        ])
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            format!("ensemble: the weight of letters is {w}; weights are positive numbers")
        );
    }
}
