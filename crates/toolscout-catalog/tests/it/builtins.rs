//! What a model sees of the built-in tools, at levels 1 and 3.

use toolscout_catalog::builtin;
use toolscout_spec::Level;

#[test]
fn builtin_tools_as_a_model_sees_them() {
    let mut out = String::new();
    for b in builtin::bundles() {
        out.push_str(&format!("# bundle {} — {}\n", b.slug, b.description));
        for t in &b.tools {
            out.push_str(&format!("{}\n", t.spec.disclose(Level::L1).to_text()));
        }
    }
    for spec in builtin::specs() {
        let l3 = spec.disclose(Level::L3);
        out.push_str(&format!(
            "\n## {} (level 3, {} tokens)\n{}\n",
            spec.name,
            l3.tokens(),
            l3.to_text()
        ));
    }
    insta::assert_snapshot!("builtin_tools", out);
}
