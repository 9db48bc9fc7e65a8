//! A build without the feature `transformer` (the `toolscout` library's default): static
//! models load, a BERT is refused with an error that names the feature.

use toolscout_embed::{Encoder, Error};

use crate::fixture::tiny_model;

#[test]
fn a_bert_without_the_transformer_is_an_error_that_names_the_feature() {
    let (_tmp, dir) = tiny_model();
    let err = Encoder::load(&dir).unwrap_err();
    assert!(
        matches!(&err, Error::NeedsTransformer { path } if path == &dir.join("config.json")),
        "{err:?}"
    );
    assert!(err.to_string().contains("`transformer` feature"), "{err}");
}
