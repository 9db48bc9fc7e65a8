//! Import cycles between the modules of one crate.
//!
//! Every path that starts with `crate::`, `super::` or `self::` (in a `use` or in code)
//! is an import of the module it names; a name a module imports (`pub use x::Y`, or a
//! private `use`) is followed to where it comes from, so `crate::Error` is an import of
//! `error`. Test modules (`#[cfg(test)] mod …`) are left out.
//!
//! A module's subtree counts as one unit: an import from `a::x` of `b::y` is an edge
//! `a → b` between the siblings `a` and `b` under their common parent. A module and its
//! own descendants never form a cycle (a parent re-exports its children, a child uses
//! what its parent defines). Cycles are the strongly connected components of each
//! parent's children, found with Tarjan's algorithm.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::lex::{Token, tokens};

/// A module path from the crate root: `[]` is the root, `["store", "postgres"]` is
/// `crate::store::postgres`.
type ModPath = Vec<String>;

/// One import: the path as written, where, and by which module.
#[derive(Debug, Clone)]
struct Import {
    from: ModPath,
    path: Vec<String>,
    file: PathBuf,
    line: usize,
}

/// The modules of a crate and their imports.
#[derive(Debug, Default)]
struct Crate {
    modules: BTreeSet<ModPath>,
    imports: Vec<Import>,
    /// The names each module brings in with `use`: name → full path.
    names: BTreeMap<ModPath, BTreeMap<String, Vec<String>>>,
}

/// An edge between two sibling modules and the imports behind it.
#[derive(Debug)]
pub(crate) struct Edge {
    from: String,
    to: String,
    because: Vec<String>,
}

/// One cycle: sibling modules under `parent` that import one another.
#[derive(Debug)]
pub(crate) struct Cycle {
    parent: String,
    members: Vec<String>,
    edges: Vec<Edge>,
}

/// What [`check`] found in one crate.
#[derive(Debug)]
pub(crate) struct Report {
    root: PathBuf,
    modules: usize,
    pub(crate) cycles: Vec<Cycle>,
}

impl Report {
    /// The report as text, paths relative to `base`.
    pub(crate) fn render(&self, base: &Path) -> String {
        let root = relative(&self.root, base);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{root}: {} modules, {} import cycle{}",
            self.modules,
            self.cycles.len(),
            if self.cycles.len() == 1 { "" } else { "s" }
        );
        for cycle in &self.cycles {
            let _ = writeln!(
                out,
                "  cycle of {} modules in {}: {}",
                cycle.members.len(),
                cycle.parent,
                cycle.members.join(", ")
            );
            for edge in &cycle.edges {
                let because = edge
                    .because
                    .iter()
                    .map(|b| b.replace(&format!("{}/", base.display()), ""))
                    .collect::<Vec<_>>();
                let _ = writeln!(
                    out,
                    "    {} -> {}: {}",
                    edge.from,
                    edge.to,
                    because.join("; ")
                );
            }
        }
        out
    }
}

/// The import cycles of the crate whose root file is `root` (`lib.rs` or `main.rs`).
pub(crate) fn check(root: &Path) -> Result<Report, String> {
    let mut krate = Crate::default();
    read_module(&mut krate, root, &[], &module_dir(root))?;
    let cycles = find_cycles(&krate);
    Ok(Report {
        root: root.to_path_buf(),
        modules: krate.modules.len(),
        cycles,
    })
}

/// Where the files of a file's child modules are: beside `lib.rs`, `main.rs` and
/// `mod.rs`, in a folder named after any other file.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => parent,
        _ => parent.join(file.file_stem().unwrap_or_default()),
    }
}

fn read_module(
    krate: &mut Crate,
    file: &Path,
    module: &[String],
    dir: &Path,
) -> Result<(), String> {
    let source = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let tokens = tokens(&source);
    krate.modules.insert(module.to_vec());
    let mut children = Vec::new();
    read_items(krate, file, &tokens, module, dir, &mut children);
    for (child, child_dir_hint) in children {
        let name = child.last().cloned().unwrap_or_default();
        let flat = child_dir_hint.join(format!("{name}.rs"));
        let nested = child_dir_hint.join(&name).join("mod.rs");
        let path = if flat.exists() { flat } else { nested };
        if !path.exists() {
            return Err(format!(
                "module {} of {}: no file",
                child.join("::"),
                file.display()
            ));
        }
        read_module(krate, &path, &child, &module_dir(&path))?;
    }
    Ok(())
}

/// Reads the items of one file: its imports, and the child modules to read next (with
/// the folder their files are in). Inline modules (`mod x { … }`) are read in place.
fn read_items(
    krate: &mut Crate,
    file: &Path,
    tokens: &[Token],
    module: &[String],
    dir: &Path,
    children: &mut Vec<(ModPath, PathBuf)>,
) {
    // The inline modules open at this point, with the brace depth each closes at.
    let mut stack: Vec<(ModPath, PathBuf, usize)> = vec![(module.to_vec(), dir.to_path_buf(), 0)];
    let mut depth = 0;
    let mut cfg_test = false;
    let mut i = 0;
    while i < tokens.len() {
        let (current, current_dir, _) = stack.last().cloned().unwrap_or_default();
        let token = &tokens[i];
        match token.text.as_str() {
            "#" if tokens.get(i + 1).is_some_and(|t| t.is("[")) => {
                let end = matching(tokens, i + 1, "[", "]");
                let inner: Vec<&str> = tokens[i + 2..end].iter().map(|t| t.text.as_str()).collect();
                if inner == ["cfg", "(", "test", ")"] {
                    cfg_test = true;
                }
                i = end + 1;
                continue;
            }
            "mod" if tokens.get(i + 1).is_some_and(Token::is_ident) => {
                let name = tokens[i + 1].text.clone();
                let mut child = current.clone();
                child.push(name.clone());
                let opens = tokens.get(i + 2).is_some_and(|t| t.is("{"));
                if cfg_test {
                    cfg_test = false;
                    i = if opens {
                        matching(tokens, i + 2, "{", "}") + 1
                    } else {
                        i + 3
                    };
                    continue;
                }
                if opens {
                    krate.modules.insert(child.clone());
                    depth += 1;
                    stack.push((child, current_dir.join(&name), depth));
                    i += 3;
                } else {
                    children.push((child, current_dir.clone()));
                    i += 3;
                }
                continue;
            }
            "use" => {
                let mut paths = Vec::new();
                let end = use_tree(tokens, i + 1, &[], &mut paths);
                for (path, alias, line) in paths {
                    record(krate, &current, file, &path, line);
                    if let Some(name) = alias.or_else(|| path.last().cloned())
                        && name != "*"
                    {
                        krate
                            .names
                            .entry(current.clone())
                            .or_default()
                            .insert(name, path);
                    }
                }
                cfg_test = false;
                i = end + 1;
                continue;
            }
            "crate" | "super" | "self" if tokens.get(i + 1).is_some_and(|t| t.is("::")) => {
                let before = i.checked_sub(1).map(|b| tokens[b].text.as_str());
                // `$crate::` in a macro, `pub(in crate::x)`: not imports.
                if !matches!(before, Some("$" | "in")) {
                    let mut path = vec![token.text.clone()];
                    let mut j = i + 1;
                    while tokens.get(j).is_some_and(|t| t.is("::"))
                        && tokens.get(j + 1).is_some_and(Token::is_ident)
                    {
                        path.push(tokens[j + 1].text.clone());
                        j += 2;
                    }
                    record(krate, &current, file, &path, token.line);
                    i = j;
                    continue;
                }
            }
            "{" => depth += 1,
            "}" => {
                if stack.len() > 1 && stack.last().is_some_and(|(_, _, d)| *d == depth) {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
                cfg_test = false;
            }
            ";" | "fn" | "struct" | "enum" | "impl" | "trait" | "const" | "static" | "type" => {
                cfg_test = false;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The index of the token closing the bracket opened at `open`.
fn matching(tokens: &[Token], open: usize, left: &str, right: &str) -> usize {
    let mut depth = 0;
    for (j, token) in tokens.iter().enumerate().skip(open) {
        if token.is(left) {
            depth += 1;
        } else if token.is(right) {
            depth -= 1;
            if depth == 0 {
                return j;
            }
        }
    }
    tokens.len().saturating_sub(1)
}

/// Reads a use tree from `i` under `prefix`, pushing each leaf path (a glob ends in
/// `*`) with its alias and line; returns the index of the `;`, `,` or `}` after it.
fn use_tree(
    tokens: &[Token],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>, usize)>,
) -> usize {
    let mut path = prefix.to_vec();
    if tokens.get(i).is_some_and(|t| t.is("::")) {
        i += 1;
    }
    while let Some(token) = tokens.get(i) {
        if token.is("{") {
            i += 1;
            loop {
                i = use_tree(tokens, i, &path, out);
                match tokens.get(i).map(|t| t.text.as_str()) {
                    Some(",") => {
                        i += 1;
                        if tokens.get(i).is_some_and(|t| t.is("}")) {
                            break;
                        }
                    }
                    _ => break,
                }
            }
            // At the `}`: what follows is the end of this tree.
            return i + 1;
        }
        if token.is("*") {
            path.push("*".into());
            out.push((path, None, token.line));
            return i + 1;
        }
        if token.is_ident() {
            // `a::{self, B}`: `self` is `a` itself.
            if !(token.is("self") && !prefix.is_empty() && path.len() == prefix.len()) {
                path.push(token.text.clone());
            }
            let line = token.line;
            i += 1;
            if tokens.get(i).is_some_and(|t| t.is("::")) {
                i += 1;
                continue;
            }
            let mut alias = None;
            if tokens.get(i).is_some_and(|t| t.is("as")) {
                alias = tokens.get(i + 1).map(|t| t.text.clone());
                i += 2;
            }
            out.push((path, alias, line));
            return i;
        }
        // `;`, `,` or `}` of an empty tree.
        return i;
    }
    i
}

/// Records an import by `from` of `path` (as written) if it names a module of the crate.
fn record(krate: &mut Crate, from: &[String], file: &Path, path: &[String], line: usize) {
    if matches!(
        path.first().map(String::as_str),
        Some("crate" | "super" | "self")
    ) {
        krate.imports.push(Import {
            from: from.to_vec(),
            path: path.to_vec(),
            file: file.to_path_buf(),
            line,
        });
    }
}

/// The module `path` (written in `from`) names, following imported names.
fn resolve(krate: &Crate, from: &[String], path: &[String], hops: usize) -> Option<ModPath> {
    let mut module: ModPath = from.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            module.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                module.pop()?;
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    while let Some(segment) = rest.first() {
        let mut child = module.clone();
        child.push(segment.clone());
        if krate.modules.contains(&child) {
            module = child;
            rest = &rest[1..];
            continue;
        }
        // An item: defined here, or a name this module imports from elsewhere.
        if segment != "*"
            && hops < 8
            && let Some(imported) = krate.names.get(&module).and_then(|n| n.get(segment))
        {
            let mut full = match imported.first().map(String::as_str) {
                Some("crate" | "super" | "self") => imported.clone(),
                // `use child::X`: a path from this module.
                Some(first)
                    if krate
                        .modules
                        .contains(&[module.clone(), vec![first.to_string()]].concat()) =>
                {
                    [vec!["self".to_string()], imported.clone()].concat()
                }
                // Another crate's.
                _ => break,
            };
            full.extend(rest[1..].iter().cloned());
            return resolve(krate, &module, &full, hops + 1);
        }
        break;
    }
    Some(module)
}

fn find_cycles(krate: &Crate) -> Vec<Cycle> {
    // parent → (from child, to child) → the imports behind the edge.
    let mut graphs: BTreeMap<ModPath, BTreeMap<(String, String), Vec<String>>> = BTreeMap::new();
    for import in &krate.imports {
        let Some(target) = resolve(krate, &import.from, &import.path, 0) else {
            continue;
        };
        let common = import
            .from
            .iter()
            .zip(&target)
            .take_while(|(a, b)| a == b)
            .count();
        // A module and its own ancestors or descendants: not an edge.
        if common == import.from.len() || common == target.len() {
            continue;
        }
        let parent = import.from[..common].to_vec();
        let edge = (import.from[common].clone(), target[common].clone());
        let why = format!(
            "{}:{} {}",
            import.file.display(),
            import.line,
            import.path.join("::")
        );
        let reasons = graphs.entry(parent).or_default().entry(edge).or_default();
        if !reasons.contains(&why) {
            reasons.push(why);
        }
    }
    let mut cycles = Vec::new();
    for (parent, edges) in &graphs {
        let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
        let nodes: Vec<&String> = nodes.into_iter().collect();
        let index = |n: &String| nodes.iter().position(|m| *m == n).unwrap_or(0);
        let mut adjacency = vec![Vec::new(); nodes.len()];
        for (a, b) in edges.keys() {
            adjacency[index(a)].push(index(b));
        }
        for component in tarjan(&adjacency) {
            if component.len() < 2 {
                continue;
            }
            let members: BTreeSet<&String> = component.iter().map(|&c| nodes[c]).collect();
            let cycle_edges = edges
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|((a, b), why)| Edge {
                    from: a.clone(),
                    to: b.clone(),
                    because: why.clone(),
                })
                .collect();
            cycles.push(Cycle {
                parent: if parent.is_empty() {
                    "crate".into()
                } else {
                    format!("crate::{}", parent.join("::"))
                },
                members: members.into_iter().cloned().collect(),
                edges: cycle_edges,
            });
        }
    }
    cycles
}

/// The strongly connected components of a graph (Tarjan, recursive: module graphs are
/// small).
fn tarjan(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adjacency: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.adjacency[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let n = adjacency.len();
    let mut s = State {
        adjacency,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.components
}

fn relative(path: &Path, base: &Path) -> String {
    let path = path.display().to_string();
    path.strip_prefix(&format!("{}/", base.display()))
        .unwrap_or(&path)
        .to_string()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn check(files: &[(&str, &str)]) -> String {
        let dir = std::env::temp_dir()
            .join(format!("xtask-cycles-{}", std::process::id()))
            .join(files[0].1.len().to_string() + &files.len().to_string());
        for (path, text) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        let report = super::check(&dir.join("lib.rs")).unwrap();
        let out = report.render(Path::new(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        out
    }

    #[test]
    fn a_cycle_through_a_reexport_and_a_nested_module() {
        let out = check(&[
            ("lib.rs", "mod a; mod b; mod error; pub use error::Error;"),
            ("a.rs", "use crate::b::{self, inner::X};"),
            (
                "b.rs",
                "pub mod inner;\n#[cfg(test)]\nmod tests { use crate::a::*; }",
            ),
            (
                "b/inner.rs",
                "use super::super::a; fn f() -> crate::Error { todo() }",
            ),
            ("error.rs", "pub struct Error; use crate::b::inner as _;"),
        ]);
        assert_eq!(
            out,
            "lib.rs: 5 modules, 1 import cycle\n  cycle of 3 modules in crate: a, b, error\n    a -> b: a.rs:1 crate::b; a.rs:1 crate::b::inner::X\n    b -> a: b/inner.rs:1 super::super::a\n    b -> error: b/inner.rs:1 crate::Error\n    error -> b: error.rs:1 crate::b::inner\n"
        );
    }

    #[test]
    fn parents_and_children_are_not_cycles() {
        let out = check(&[
            ("lib.rs", "mod a; pub use a::X;"),
            (
                "a.rs",
                "mod c; pub use c::X; use crate::a::c::Y; fn f() { super::g(); }",
            ),
            ("a/c.rs", "use super::Z; pub struct X;"),
        ]);
        assert_eq!(out, "lib.rs: 3 modules, 0 import cycles\n");
    }
}
