//! The modules of a crate's source tree and the paths between them, read from the
//! text (no compiler): which file module names which, and the circles that makes.
//!
//! A crate's modules are found from its roots (`lib.rs`, `main.rs`) through their
//! `mod name;` declarations; a module is a file (inline modules such as `mod tests
//! { .. }` belong to their file). Module `a` names module `b` when `a` holds, outside
//! comments and string literals,
//! * a `use` declaration with a leaf in `b` (anywhere: at the top, in a function),
//! * a path in code that starts with `crate`, `super`, `self` or a child module
//!   and leads into `b` (`super::loony::decode(x)`, `impl super::x::Trait for`),
//! * a path in a serde attribute (`serialize_with = "super::loony::flag"`).
//!
//! A path ends in the longest module it names; a name that module re-exports
//! (`pub use`) is followed to where it is defined, so that importing a type through
//! a parent's re-export is not an edge to the parent. Paths into other crates
//! (`std::`, `tb::` from the binary) are not edges: crates cannot form circles.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A module: its crate's root name (`lib`, `main`) and its path in the crate
/// (`games::dots::loony`; empty for the root).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Module {
    /// `lib` or `main`: the file the crate grows from.
    pub root: String,
    /// Segments from the crate root.
    pub path: Vec<String>,
}

impl std::fmt::Display for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{} (crate root)", self.root)
        } else {
            write!(f, "{}", self.path.join("::"))
        }
    }
}

/// Where a module names another first: its file, line and the path as written.
#[derive(Debug, Clone)]
pub struct Reference {
    /// The file holding the path.
    pub file: PathBuf,
    /// Its line (from 1).
    pub line: usize,
    /// The path (a `use` leaf or a path in code).
    pub text: String,
}

/// The modules of the crates under a source directory and the edges between them.
#[derive(Debug, Default)]
pub struct Graph {
    /// Every module with its file.
    pub files: BTreeMap<Module, PathBuf>,
    /// `edges[a][b]`: the first place `a` names `b`.
    pub edges: BTreeMap<Module, BTreeMap<Module, Reference>>,
}

/// A token of cleaned source: an identifier, `::`, or one other character.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// One file's tokens with their lines.
struct Tokens {
    tokens: Vec<(Token, usize)>,
}

/// A `use` leaf: the path's segments (with `self` leaves dropped) and the name it
/// brings into scope.
struct UseLeaf {
    segments: Vec<String>,
    name: Option<String>,
}

/// What one file says: the child modules it declares, its `use` leaves and
/// paths (with their inline-module depth and line), its re-exports.
#[derive(Default)]
struct FileFacts {
    children: Vec<String>,
    /// (segments, inline depth, line, text).
    paths: Vec<(Vec<String>, usize, usize, String)>,
    /// Name -> segments as written, for `pub use` at the file's top level.
    reexports: BTreeMap<String, Vec<String>>,
}

impl Graph {
    /// Reads the crates of `src` (those of `lib.rs` and `main.rs` that exist).
    pub fn read(src: &Path) -> std::io::Result<Graph> {
        let mut graph = Graph::default();
        let mut facts: BTreeMap<Module, FileFacts> = BTreeMap::new();
        for root in ["lib", "main"] {
            let file = src.join(format!("{root}.rs"));
            if !file.exists() {
                continue;
            }
            let mut todo = vec![(
                Module {
                    root: root.to_string(),
                    path: Vec::new(),
                },
                file,
            )];
            while let Some((module, file)) = todo.pop() {
                let text = std::fs::read_to_string(&file)?;
                let file_facts = read_file(&text);
                // `mod.rs`, `lib.rs`, `main.rs` own their directory; `x.rs` owns `x/`.
                let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                let dir = if module.path.is_empty() || stem == "mod" {
                    file.parent().unwrap().to_path_buf()
                } else {
                    file.with_extension("")
                };
                for child in &file_facts.children {
                    let flat = dir.join(format!("{child}.rs"));
                    let nested = dir.join(child).join("mod.rs");
                    let child_file = if flat.exists() { flat } else { nested };
                    let mut path = module.path.clone();
                    path.push(child.clone());
                    todo.push((
                        Module {
                            root: module.root.clone(),
                            path,
                        },
                        child_file,
                    ));
                }
                graph.files.insert(module.clone(), file);
                facts.insert(module, file_facts);
            }
        }
        for (module, file_facts) in &facts {
            let mut edges = BTreeMap::new();
            for (segments, depth, line, text) in &file_facts.paths {
                let Some(absolute) = absolute_path(module, segments, *depth, &facts) else {
                    continue;
                };
                let Some(target) = graph.target(&module.root, &absolute, &facts, 0) else {
                    continue;
                };
                if target == *module {
                    continue;
                }
                edges.entry(target).or_insert_with(|| Reference {
                    file: graph.files[module].clone(),
                    line: *line,
                    text: text.clone(),
                });
            }
            graph.edges.insert(module.clone(), edges);
        }
        Ok(graph)
    }

    /// The module an absolute path ends in: the longest module prefix, through the
    /// re-exports of that module.
    fn target(
        &self,
        root: &str,
        absolute: &[String],
        facts: &BTreeMap<Module, FileFacts>,
        hops: usize,
    ) -> Option<Module> {
        for len in (0..=absolute.len()).rev() {
            let module = Module {
                root: root.to_string(),
                path: absolute[..len].to_vec(),
            };
            let Some(module_facts) = facts.get(&module) else {
                continue;
            };
            if let Some(name) = absolute.get(len)
                && let Some(segments) = module_facts.reexports.get(name)
                && hops < 8
                && let Some(mut next) = absolute_path(&module, segments, 0, facts)
            {
                next.extend(absolute[len + 1..].iter().cloned());
                return self.target(root, &next, facts, hops + 1);
            }
            return Some(module);
        }
        None
    }

    /// The circles: every set of two or more modules each reachable from the
    /// others, after removing the edges in `allowed` (from, to); sorted.
    pub fn circles(&self, allowed: &[(Module, Module)]) -> Vec<Vec<Module>> {
        let nodes: Vec<&Module> = self.files.keys().collect();
        let index: BTreeMap<&Module, usize> =
            nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
        let next: Vec<Vec<usize>> = nodes
            .iter()
            .map(|m| {
                self.edges
                    .get(*m)
                    .into_iter()
                    .flat_map(|e| e.keys())
                    .filter(|t| !allowed.iter().any(|(a, b)| a == *m && b == *t))
                    .filter_map(|t| index.get(t).copied())
                    .collect()
            })
            .collect();
        let mut circles: Vec<Vec<Module>> = strongly_connected(&next)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut c: Vec<Module> = c.into_iter().map(|i| nodes[i].clone()).collect();
                c.sort();
                c
            })
            .collect();
        circles.sort();
        circles
    }

    /// A circle in words: each module and where it names the others of the circle.
    pub fn describe(&self, circle: &[Module]) -> String {
        let members: BTreeSet<&Module> = circle.iter().collect();
        let mut out = String::new();
        for module in circle {
            for (target, at) in self.edges.get(module).into_iter().flatten() {
                if members.contains(target) {
                    let _ = writeln!(
                        out,
                        "  {module} -> {target}: {}:{} `{}`",
                        at.file.display(),
                        at.line,
                        at.text
                    );
                }
            }
        }
        out
    }
}

/// The path's segments from its crate's root, for a path written in `module` at
/// inline-module depth `depth`; `None` for a path into another crate (or into an
/// inline module of the same file).
fn absolute_path(
    module: &Module,
    segments: &[String],
    mut depth: usize,
    facts: &BTreeMap<Module, FileFacts>,
) -> Option<Vec<String>> {
    let first = segments.first()?;
    match first.as_str() {
        "crate" => Some(segments[1..].to_vec()),
        "super" => {
            let mut base = module.path.clone();
            let mut rest = segments;
            while rest.first().is_some_and(|s| s == "super") {
                if depth > 0 {
                    depth -= 1;
                } else {
                    base.pop()?;
                }
                rest = &rest[1..];
            }
            if depth > 0 {
                return None; // still inside an inline module of this file
            }
            base.extend(rest.iter().cloned());
            Some(base)
        }
        "self" => (depth == 0).then(|| [module.path.clone(), segments[1..].to_vec()].concat()),
        name => {
            let children = &facts.get(module)?.children;
            children
                .iter()
                .any(|c| c == name)
                .then(|| [module.path.clone(), segments.to_vec()].concat())
        }
    }
}

/// Tarjan's strongly connected components of a graph given as successor lists.
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        components: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.next[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let n = next.len();
    let mut s = State {
        next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.components
}

/// What a file declares and names (see [`FileFacts`]).
fn read_file(text: &str) -> FileFacts {
    let tokens = tokenize(&clean(text));
    let mut facts = FileFacts::default();
    let t = &tokens.tokens;
    let ident = |i: usize| match t.get(i) {
        Some((Token::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let punct = |i: usize, c: char| matches!(t.get(i), Some((Token::Punct(p), _)) if *p == c);
    let sep = |i: usize| matches!(t.get(i), Some((Token::PathSep, _)));
    // Brace depths at which the inline modules enclosing the cursor opened.
    let mut inline: Vec<usize> = Vec::new();
    let mut braces = 0usize;
    let mut i = 0;
    while i < t.len() {
        let line = t[i].1;
        if punct(i, '{') {
            braces += 1;
        } else if punct(i, '}') {
            if inline.last() == Some(&braces) {
                inline.pop();
            }
            braces = braces.saturating_sub(1);
        } else if ident(i) == Some("mod")
            && let Some(name) = ident(i + 1)
        {
            if punct(i + 2, ';') && inline.is_empty() {
                facts.children.push(name.to_string());
            } else if punct(i + 2, '{') {
                inline.push(braces + 1);
            }
            i += 2;
            continue;
        } else if ident(i) == Some("use") && !sep(i.wrapping_sub(1)) {
            let public = is_public(t, i);
            let (leaves, end) = use_tree(t, i + 1, Vec::new());
            for leaf in leaves {
                let text = leaf.segments.join("::");
                if public
                    && inline.is_empty()
                    && let Some(name) = &leaf.name
                {
                    facts.reexports.insert(name.clone(), leaf.segments.clone());
                }
                facts.paths.push((leaf.segments, inline.len(), line, text));
            }
            i = end;
            continue;
        } else if let Some(first) = ident(i)
            && sep(i + 1)
            && !sep(i.wrapping_sub(1))
        {
            // A path in code: identifiers joined by `::` (up to generics or a
            // use-tree brace).
            let mut segments = vec![first.to_string()];
            let mut j = i + 1;
            while sep(j)
                && let Some(next) = ident(j + 1)
            {
                segments.push(next.to_string());
                j += 2;
            }
            let text = segments.join("::");
            facts.paths.push((segments, inline.len(), line, text));
            i = j;
            continue;
        }
        i += 1;
    }
    facts
}

/// Whether the `use` at token `i` is preceded by `pub` or `pub(..)`.
fn is_public(t: &[(Token, usize)], i: usize) -> bool {
    let is = |k: usize, want: &Token| k < t.len() && t[k].0 == *want;
    let pub_token = Token::Ident("pub".into());
    if i >= 1 && is(i - 1, &pub_token) {
        return true;
    }
    // `pub(crate) use`: `pub` `(` ... `)` `use`.
    if i >= 1 && is(i - 1, &Token::Punct(')')) {
        let mut k = i - 1;
        while k > 0 && !is(k, &Token::Punct('(')) {
            k -= 1;
        }
        return k >= 1 && is(k - 1, &pub_token);
    }
    false
}

/// The leaves of the use tree starting at token `i` (after `use` or inside a
/// group), each prefixed by `prefix`; returns them and the index after the tree's
/// end (`;`, `,` or `}` left for the caller, except a final `;` consumed).
fn use_tree(t: &[(Token, usize)], mut i: usize, mut prefix: Vec<String>) -> (Vec<UseLeaf>, usize) {
    let mut leaves = Vec::new();
    if matches!(t.get(i), Some((Token::PathSep, _))) {
        i += 1; // `use ::std::x`
    }
    loop {
        match t.get(i).map(|(tok, _)| tok) {
            Some(Token::Ident(name)) if name == "as" => {
                let alias = match t.get(i + 1) {
                    Some((Token::Ident(a), _)) => Some(a.clone()),
                    _ => None,
                };
                let name = alias.filter(|a| a != "_");
                leaves.push(leaf(prefix, name));
                return (leaves, finish(t, i + 2));
            }
            Some(Token::Ident(name)) => {
                prefix.push(name.clone());
                i += 1;
                if matches!(t.get(i), Some((Token::PathSep, _))) {
                    i += 1;
                    continue;
                }
                let name = prefix.last().cloned();
                if !matches!(t.get(i), Some((Token::Ident(a), _)) if a == "as") {
                    leaves.push(leaf(prefix, name));
                    return (leaves, finish(t, i));
                }
            }
            Some(Token::Punct('*')) => {
                leaves.push(UseLeaf {
                    segments: prefix,
                    name: None,
                });
                return (leaves, finish(t, i + 1));
            }
            Some(Token::Punct('{')) => {
                i += 1;
                loop {
                    match t.get(i).map(|(tok, _)| tok) {
                        Some(Token::Punct('}')) => {
                            i += 1;
                            break;
                        }
                        Some(Token::Punct(',')) => i += 1,
                        None => return (leaves, i),
                        _ => {
                            let (inner, end) = use_tree(t, i, prefix.clone());
                            leaves.extend(inner);
                            if end == i {
                                i += 1; // not a tree: skip the token
                            } else {
                                i = end;
                            }
                        }
                    }
                }
                return (leaves, finish(t, i));
            }
            _ => return (leaves, i),
        }
    }
}

/// A leaf: a trailing `self` names the module before it.
fn leaf(mut segments: Vec<String>, name: Option<String>) -> UseLeaf {
    let name = if segments.last().is_some_and(|s| s == "self") {
        segments.pop();
        name.filter(|n| n != "self")
            .or_else(|| segments.last().cloned())
    } else {
        name
    };
    UseLeaf { segments, name }
}

/// Past a `;` ending a use declaration at `i`, else `i`.
fn finish(t: &[(Token, usize)], i: usize) -> usize {
    if matches!(t.get(i), Some((Token::Punct(';'), _))) {
        i + 1
    } else {
        i
    }
}

/// Identifiers, `::` and single characters, with their lines.
fn tokenize(text: &str) -> Tokens {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push((Token::Ident(word), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push((Token::PathSep, line));
            i += 2;
        } else {
            tokens.push((Token::Punct(c), line));
            i += 1;
        }
    }
    Tokens { tokens }
}

/// The source without comments, string and character literals (newlines kept, so
/// lines stay), but with the path of a serde `with`-style attribute (`serialize_with
/// = "a::b"`) left in place of its string.
fn clean(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_newlines = |out: &mut String, s: &[char]| {
        out.extend(s.iter().filter(|&&c| c == '\n'));
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = i;
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            keep_newlines(&mut out, &chars[start..i.min(chars.len())]);
        } else if let Some((content, end)) = string_literal(&chars, i) {
            let content: String = content.into_iter().collect();
            let attribute = out.trim_end().strip_suffix('=').map(str::trim_end);
            let serde_path = attribute.is_some_and(|a| {
                a.ends_with("serialize_with")
                    || a.ends_with("deserialize_with")
                    || a.ends_with(" with")
                    || a.ends_with("(with")
            }) && content
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == ':');
            if serde_path {
                out.push_str(&content);
            } else {
                out.push_str("\"\"");
                keep_newlines(&mut out, &chars[i..end]);
            }
            i = end;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a).
            if next == Some('\\') {
                let mut j = i + 3;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                out.push_str("' '");
                i = j + 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// A string literal starting at `i` (`"..."`, `b"..."`, `r"..."`, `r#"..."#`,
/// `br#"..."#`, not inside an identifier): its content and the index past it.
fn string_literal(chars: &[char], i: usize) -> Option<(Vec<char>, usize)> {
    let before = i.checked_sub(1).map(|k| chars[k]);
    if before.is_some_and(|b| b.is_alphanumeric() || b == '_') {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    let raw = chars.get(j) == Some(&'r');
    if raw {
        j += 1;
    }
    let mut hashes = 0;
    while raw && chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    let start = j;
    while j < chars.len() {
        if !raw && chars[j] == '\\' {
            j += 2;
            continue;
        }
        if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
            return Some((chars[start..j].to_vec(), j + 1 + hashes));
        }
        j += 1;
    }
    Some((chars[start..].to_vec(), chars.len()))
}
