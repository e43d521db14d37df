//! The layering of `src/core`, read from the source: which file's code names which other file's
//! module (`use` paths and inline `crate::…`/`super::…` paths, test modules left out). The rules (ARCHITECTURE.md):
//! `host.rs` names nothing above it, the fast-path layer is never named by the references it calls, and no two files
//! name each other through any chain (no import circle), nor do two modules (`core::agent` and its files as one).
//! With the same reading, the library's own records (the Agent's state, a snapshot, a checkpoint, an approval pause):
//! outside its module, code names a field only by its constant.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, by its module path (`core::agent_state::reducer`).
fn modules(root: &Path, dir: &Path, out: &mut BTreeMap<String, PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            modules(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            out.insert(parts.join("::"), path);
        }
    }
}

/// The code of a file before its first `#[cfg(test)]` item, without comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("\n#[cfg(test)]").next().unwrap_or_default();
    text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// The paths a `use` tree or an inline path names, expanded: `super::{a::X, b}` → `super::a::X`, `super::b`.
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim_end_matches("::");
        let prefix = if head.is_empty() { prefix.to_string() } else { join(prefix, head) };
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&prefix, &inner[start..], out);
    } else if !tree.is_empty() {
        out.push(join(prefix, tree.split(" as ").next().unwrap_or_default()));
    }
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() { b.to_string() } else { format!("{a}::{b}") }
}

/// The module paths a file names, absolute (`core::host`, `core::agent_state::Queue`, …).
fn named(module: &str, is_mod_rs: bool, code: &str, children: &BTreeSet<String>) -> Vec<String> {
    let mut raw = Vec::new();
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let stmt = stmt.strip_prefix("pub(crate) ").or_else(|| stmt.strip_prefix("pub ")).unwrap_or(stmt);
        if let Some(tree) = stmt.strip_prefix("use ") {
            expand("", tree, &mut raw);
        }
    }
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        for (i, _) in code.match_indices(start) {
            if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':') {
                continue;
            }
            let end = code[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| i + e);
            raw.push(code[i..end].trim_end_matches(':').to_string());
        }
    }
    let parent: Vec<&str> = module.split("::").collect();
    let mut out = Vec::new();
    for path in raw {
        let mut parts: Vec<&str> = path.split("::").collect();
        let mut base: Vec<&str> = parent.clone();
        match parts.first() {
            Some(&"crate") => {
                base.clear();
                parts.remove(0);
            }
            Some(&"super") => {
                while parts.first() == Some(&"super") {
                    parts.remove(0);
                    base.pop();
                }
            }
            Some(&"self") => {
                parts.remove(0);
                base = parent.clone();
            }
            Some(first) if is_mod_rs && children.contains(*first) => {}
            _ => continue, // an external crate or std
        }
        base.extend(parts);
        out.push(base.join("::"));
    }
    out
}

/// A file of `src/core` (test modules left out): its code and the paths it names.
struct Source {
    code: String,
    names: Vec<String>,
}

/// Every file of `src/core`, by module path (`core::agent::lifecycle`).
fn sources() -> BTreeMap<String, Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    modules(&src, &src.join("core"), &mut files);
    files.retain(|m, _| !m.contains("::tests") && !m.ends_with("test_host") && !m.contains("tests_"));
    let mut sources = BTreeMap::new();
    for (module, path) in &files {
        let is_mod_rs = path.file_name().is_some_and(|f| f == "mod.rs");
        let children: BTreeSet<String> = files
            .keys()
            .filter_map(|m| {
                m.strip_prefix(&format!("{module}::")).filter(|rest| !rest.contains("::")).map(str::to_string)
            })
            .collect();
        let code = code(path);
        let names = named(module, is_mod_rs, &code, &children);
        sources.insert(module.clone(), Source { code, names });
    }
    sources
}

/// The file-level graph: module → the modules (files) it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let sources = sources();
    let mut graph = BTreeMap::new();
    for (module, source) in &sources {
        let mut edges = BTreeSet::new();
        for target in &source.names {
            // The longest prefix that is a file: an item's path names the module that holds it.
            let mut parts: Vec<&str> = target.split("::").collect();
            while !parts.is_empty() {
                let m = parts.join("::");
                if sources.contains_key(&m) {
                    if &m != module {
                        edges.insert(m);
                    }
                    break;
                }
                parts.pop();
            }
        }
        graph.insert(module.clone(), edges);
    }
    graph
}

/// The modules on a circle through `start`, if any (a path back to it).
fn circle(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == start {
                return Some([path.clone(), vec![start.to_string()]].concat());
            }
            if seen.insert(next.clone()) {
                stack.push((next.clone(), [path.clone(), vec![next.clone()]].concat()));
            }
        }
    }
    None
}

/// Every circle of `graph`, one per module on one, written `a -> b -> a`.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    graph.keys().filter_map(|m| circle(graph, m)).map(|c| c.join(" -> ")).collect()
}

#[test]
fn the_graph_is_read() {
    let g = graph();
    // The reader finds what it must, or the checks below would pass on an empty graph.
    assert!(g["core::agent::lifecycle"].contains("core::fast"), "{:?}", g["core::agent::lifecycle"]);
    assert!(g["core::fast"].contains("core::agent_state::reducer"), "{:?}", g["core::fast"]);
    assert!(g["core::agent"].contains("core::agent::lifecycle"));
    assert!(g["core::validate::check"].contains("core::text::json"), "{:?}", g["core::validate::check"]);
    assert!(g.len() > 40, "{}", g.len());
}

#[test]
fn host_names_nothing_above_it() {
    let g = graph();
    assert_eq!(g["core::host"], BTreeSet::new());
}

#[test]
fn no_import_circles() {
    let circles = circles(&graph());
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
}

/// The graph of modules: each file counted as the module it belongs to, `core::<name>` (so
/// `core::agent::lifecycle` is `core::agent`), edges within a module left out.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let top = |m: &str| m.split("::").take(2).collect::<Vec<_>>().join("::");
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, edges) in graph() {
        let module = top(&file);
        let entry = modules.entry(module.clone()).or_default();
        entry.extend(edges.iter().map(|e| top(e)).filter(|e| *e != module));
    }
    modules
}

#[test]
fn no_module_circles() {
    let g = module_graph();
    // The reader finds what it must: the Agent calls the fast-path layer, which names the Agent state's references.
    assert!(g["core::agent"].contains("core::fast"), "{:?}", g["core::agent"]);
    assert!(g["core::fast"].contains("core::agent_state"), "{:?}", g["core::fast"]);
    let circles = circles(&g);
    assert!(circles.is_empty(), "module circles:\n{}", circles.join("\n"));
}

/// `key::MODEL` for `model`: the constant `core::agent_state::key` names a state key by.
fn key_const(key: &str) -> String {
    let mut out = String::new();
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// The non-test code of every file of `src/core`, by module path, flattened (`flat`).
fn core_code() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut files = BTreeMap::new();
    modules(&src, &src, &mut files);
    files
        .into_iter()
        .filter(|(m, _)| !m.contains("tests") && !m.contains("test_host"))
        .map(|(m, path)| (m, flat(&code(&path))))
        .collect()
}

/// Code as one line, each run of whitespace one space (`h.set(\n st,\n "key"` reads `h.set( st, "key"`), and without
/// the constants that define a name (`const NAME: &str = "…";`): what is left names a field, it does not define one.
fn flat(code: &str) -> String {
    let code = code.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("const ") {
        let tail = &rest[at + 6..];
        let name_end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        let definition = tail[name_end..]
            .strip_prefix(": &str = \"")
            .and_then(|value| value.find("\";").map(|end| at + 6 + name_end + 10 + end + 2));
        match definition {
            Some(end) => {
                out.push_str(&rest[..at]);
                rest = &rest[end..];
            }
            None => {
                out.push_str(&rest[..at + 6]);
                rest = &rest[at + 6..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `code[..at]` ends with `name` and then `tail`, `name` a whole identifier (`data, ` but not `metadata, `).
fn ends_with_name(before: &str, name: &str, tail: &str) -> bool {
    before
        .strip_suffix(tail)
        .and_then(|b| b.strip_suffix(name))
        .is_some_and(|b| !b.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

#[test]
fn every_state_key_is_defined_once_and_named_only_by_its_constant() {
    let defined: BTreeMap<String, String> =
        crate::core::agent_state::KEYS.iter().map(|(k, _)| (key_const(k), k.to_string())).collect();
    assert_eq!(defined.len(), crate::core::agent_state::KEYS.len(), "a key listed twice");
    let mut used = BTreeSet::new();
    let mut literals = Vec::new();
    for (module, code) in core_code() {
        // `KEYS` itself names every constant: a use is anywhere else.
        let code = match (module.as_str(), code.find("pub const KEYS")) {
            ("agent_state", Some(start)) => {
                let end = code[start..].find("];").map_or(code.len(), |e| start + e);
                format!("{}{}", &code[..start], &code[end..])
            }
            _ => code,
        };
        for (i, _) in code.match_indices("key::") {
            let name: String = code[i + 5..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
            if let Some(key) = defined.get(&name) {
                used.insert(key.clone());
            }
        }
        // A field of the state object named by a literal (`get(h, st, "messages")`): only its module may.
        if module != "agent_state" {
            for (i, _) in code.match_indices("st, \"") {
                let key: String = code[i + 5..].chars().take_while(char::is_ascii_alphanumeric).collect();
                if ends_with_name(&code[..i + 4], "st", ", ") && defined.values().any(|k| *k == key) {
                    literals.push(format!("{module}: st, \"{key}\""));
                }
            }
        }
    }
    assert!(
        literals.is_empty(),
        "state keys named by a literal outside core::agent_state (use key::…):\n{}",
        literals.join("\n")
    );
    // The reader finds what it must.
    for key in ["ck", "transitSteering", "followUpMode", "interrupted", "listeners"] {
        assert!(used.contains(key), "{key} not found in {used:?}");
    }
    // `view` is the facade's alone (pkg-template/agent.js sets and reads it).
    let unused: Vec<&String> = defined.values().filter(|k| !used.contains(*k) && k.as_str() != "view").collect();
    assert!(unused.is_empty(), "keys in agent_state::KEYS the core never uses: {unused:?}");
}

/// A record of the library besides the Agent's state: the module that defines its fields (`core::<module>::field`,
/// listed in its `FIELDS`), the names the code holds one in (as `st` holds the state), and the fields.
struct Record {
    module: &'static str,
    holders: &'static [&'static str],
    fields: &'static [&'static str],
}

const RECORDS: [Record; 3] = [
    Record { module: "snapshot", holders: &["snapshot", "data"], fields: &crate::core::snapshot::FIELDS },
    Record { module: "checkpoint", holders: &["checkpoint"], fields: &crate::core::checkpoint::FIELDS },
    Record { module: "approvals", holders: &["approvals", "held", "pause"], fields: &crate::core::approvals::FIELDS },
];

/// Record fields that other shapes of the core have too (the loop's context and config, a message, an event, the
/// Agent's options and fields): a literal of one of these is a record's only where it follows a holder or stands in a
/// file that handles the record. Each must be named by a literal somewhere else, or it does not belong here.
const SHARED: [&str; 10] = [
    "format",
    "version",
    "model",
    "thinkingLevel",
    "messages",
    "steeringMode",
    "followUpMode",
    "sessionId",
    "approvals",
    "usage",
];

/// A field of a snapshot, a checkpoint or an approval pause named by a literal rather than its constant
/// (`snapshot::field::STEERING_QUEUE`), in any file of the core (the defining module's constants define, they do
/// not name). A literal `"<field>"` counts as the record's when
/// 1. the word is one no other shape of the core has (`"steeringQueue"`, `"checkpointSeq"`): anywhere;
/// 2. it follows a value the code holds the record in: `data, "model"`, `&held, "decisions"`, `snapshot.get("model")`;
/// 3. it stands in a file that reads or builds the record (its defining module, or a file naming `<module>::field` or
///    `<module>::FIELDS`), unless it names a field of the Agent itself (`agent, "sessionId"`: `agent::options`).
#[test]
fn every_record_field_is_named_only_by_its_constant() {
    let sources: Vec<(String, String, Vec<String>)> = sources()
        .into_iter()
        .filter(|(m, _)| m.starts_with("core::"))
        .map(|(m, s)| (m, flat(&s.code), s.names))
        .collect();
    let mut literals = Vec::new();
    // A literal is reported once, under the first record whose field it is (a checkpoint shares a snapshot's).
    let mut seen = BTreeSet::new();
    let mut handlers: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for record in &RECORDS {
        let defining = format!("core::{}", record.module);
        for (module, code, names) in &sources {
            let handles = *module == defining
                || names
                    .iter()
                    .any(|n| n.starts_with(&format!("{defining}::field")) || *n == format!("{defining}::FIELDS"))
                || code.contains(&format!("{}::field::", record.module))
                || code.contains(&format!("{}::FIELDS", record.module));
            if handles {
                handlers.entry(record.module).or_default().push(module.clone());
            }
            for field in record.fields {
                for (i, _) in code.match_indices(&format!("\"{field}\"")) {
                    let before = &code[..i];
                    let unique = !SHARED.contains(field);
                    let held = record.holders.iter().any(|holder| {
                        ends_with_name(before, holder, ", ")
                            || ends_with_name(before, &format!("&{holder}"), ", ")
                            || ends_with_name(before, holder, ".get(")
                    });
                    let handled = handles && !ends_with_name(before, "agent", ", ");
                    if (unique || held || handled) && seen.insert((module.clone(), i)) {
                        let from = before.char_indices().rev().nth(30).map_or(0, |(at, _)| at);
                        literals.push(format!("{module} ({}): …{}\"{field}\"", record.module, &before[from..]));
                    }
                }
            }
        }
    }
    assert!(
        literals.is_empty(),
        "record fields named by a literal (use core::<record>::field::…):\n{}",
        literals.join("\n")
    );
    // The reader finds what it must: the files that read or build each record.
    for (record, module) in [
        ("snapshot", "core::agent::snapshot"),
        ("snapshot", "core::checkpoint"),
        ("checkpoint", "core::agent::snapshot"),
        ("approvals", "core::agent::approvals"),
        ("approvals", "core::agent::lifecycle"),
        ("approvals", "core::snapshot"),
        ("approvals", "core::checkpoint"),
    ] {
        assert!(handlers[record].iter().any(|m| m == module), "{module} not seen to handle {record}: {handlers:?}");
    }
    // `SHARED` holds only what is shared: a field of a record, named by a literal in a file that handles no record.
    let all: BTreeSet<&str> = RECORDS.iter().flat_map(|r| r.fields.iter().copied()).collect();
    for word in SHARED {
        assert!(all.contains(word), "{word} in SHARED is no record's field");
        let elsewhere = sources
            .iter()
            .any(|(m, code, _)| !handlers.values().flatten().any(|h| h == m) && code.contains(&format!("\"{word}\"")));
        assert!(elsewhere, "{word} in SHARED is named by a literal nowhere but the records: remove it from SHARED");
    }
}

/// What each wasm module would carry again for one call (issue 43: each was measured out of both modules): std's hash
/// tables (per key and value type; `core::fxhash::FxMap`), core's slice sorts (per element type; `core::sort`), its
/// float parser (`text::number::json_number`, `validate::parse_f64`) and `serde_json`'s reader and writer
/// (`text::json`). Non-test code of every file of the crate.
#[test]
fn no_code_the_modules_dropped_comes_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    modules(&src, &src, &mut files);
    let forbidden = [
        "collections::HashMap",
        "collections::HashSet",
        "HashMap, ",
        "HashSet, ",
        ".sort()",
        ".sort_by",
        ".sort_unstable",
        "parse::<f64>",
        "parse::<f32>",
        "serde_json::from_",
        "serde_json::to_",
    ];
    let mut found = Vec::new();
    for (module, path) in files.iter().filter(|(m, _)| !m.contains("tests") && !m.contains("test_host")) {
        let code = code(path);
        for pattern in forbidden {
            if code.contains(pattern) {
                found.push(format!("{module}: {pattern}"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    // The reader sees what it must: a file with one of them in its tests only.
    assert!(
        files
            .get("core::text::json")
            .is_some_and(|p| std::fs::read_to_string(p).unwrap().contains("serde_json::from_"))
    );
}
