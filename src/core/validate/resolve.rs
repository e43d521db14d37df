//! `$ref` resolution within one schema (T-4.3.4): `$id` resources and anchors, `$anchor`, JSON Pointers, as
//! pi-schema resolves them in draft 2020-12 mode. No remote documents: a reference to anything else is unresolved.
//! Bases are interned strings, identified by index, so walkers pass a `usize` instead of cloning URIs.

use crate::core::fxhash::FxMap as HashMap;

use crate::core::text::json::Kw;
use serde_json::Value;

/// The base URI of a root schema without `$id` (pi-schema's), against which relative references resolve.
const DEFAULT_BASE: &str = "https://json-schema.invalid/root.json";

/// An interned base URI.
pub(crate) type BaseId = usize;

/// What a reference names.
pub(crate) enum Target<'s> {
    /// A value of the schema (a subschema, or something else that a schema check then rejects) and its base.
    Found(&'s Value, BaseId),
    /// Nothing: values at the reference's place fail with `unresolved reference <ref>`.
    Unresolved,
}

/// The identifiers of one schema, indexed once, when first needed: a schema without `$id` and
/// `$ref` (most tool schemas) is never walked for them.
pub(crate) struct Resolver<'s> {
    root: &'s Value,
    indexed: bool,
    bases: Vec<String>,
    base_ids: HashMap<String, BaseId>,
    /// Schema object (by address) to the base it was indexed under.
    base_of: HashMap<usize, BaseId>,
    resources: HashMap<String, &'s Value>,
    anchors: HashMap<String, &'s Value>,
}

/// The keywords whose value is one subschema, a map of them, or a list of them: the places `$id` may name things.
const SCHEMA_KEYWORDS: [&str; 12] = [
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "contentSchema",
    "items",
];
const MAP_KEYWORDS: [&str; 6] =
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];
const ARRAY_KEYWORDS: [&str; 5] = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];

pub(crate) fn address(v: &Value) -> usize {
    std::ptr::from_ref(v) as usize
}

impl<'s> Resolver<'s> {
    /// Indexes `root` (its depth is bounded by the caller, so the walk's recursion is too).
    pub(crate) fn new(root: &'s Value) -> Self {
        Resolver {
            root,
            indexed: false,
            bases: Vec::new(),
            base_ids: HashMap::default(),
            base_of: HashMap::default(),
            resources: HashMap::default(),
            anchors: HashMap::default(),
        }
    }

    /// Indexes the schema on first use. Until then no node with `$id` has been met and no
    /// reference resolved, so every base is the root's (id 0, as interned first here).
    fn ensure_indexed(&mut self) {
        if self.indexed {
            return;
        }
        self.indexed = true;
        let root = self.root;
        let root_base = self.intern(DEFAULT_BASE);
        self.resources.insert(DEFAULT_BASE.to_string(), root);
        self.index(root, root_base);
    }

    /// The base the root schema is walked from.
    pub(crate) fn root_base(&self) -> BaseId {
        0
    }

    fn intern(&mut self, uri: &str) -> BaseId {
        if let Some(id) = self.base_ids.get(uri) {
            return *id;
        }
        let id = self.bases.len();
        self.bases.push(uri.to_string());
        self.base_ids.insert(uri.to_string(), id);
        id
    }

    fn base_uri(&self, id: BaseId) -> &str {
        self.bases.get(id).map_or(DEFAULT_BASE, String::as_str)
    }

    /// The base of `node` whose parent has `base`: the indexed one, else as its `$id` changes it.
    pub(crate) fn base_for(&mut self, node: &Value, base: BaseId) -> BaseId {
        if !self.indexed {
            if !matches!(node.kw("$id"), Some(Value::String(_))) {
                return base;
            }
            self.ensure_indexed();
        }
        if let Some(id) = self.base_of.get(&address(node)) {
            return *id;
        }
        match node.kw("$id") {
            Some(Value::String(id)) => {
                let uri = resolve_uri(id, self.base_uri(base));
                let doc = document_of(&uri).to_string();
                self.intern(&doc)
            }
            _ => base,
        }
    }

    fn index(&mut self, node: &'s Value, base: BaseId) {
        let Value::Object(o) = node else {
            return;
        };
        if self.base_of.contains_key(&address(node)) {
            return;
        }
        let mut b = base;
        if let Some(Value::String(id)) = o.kw("$id") {
            let uri = resolve_uri(id, self.base_uri(base));
            let doc = document_of(&uri).to_string();
            b = self.intern(&doc);
            // As pi-schema: even a fragment-only `$id` ("#foo") registers its node as the document's resource.
            self.resources.insert(doc.clone(), node);
            if uri.len() > doc.len().saturating_add(1) {
                self.anchors.insert(uri, node);
            }
        }
        self.base_of.insert(address(node), b);
        let doc = self.base_uri(b).to_string();
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(Value::String(anchor)) = o.kw(key) {
                self.anchors.insert(format!("{doc}#{anchor}"), node);
            }
        }
        for key in SCHEMA_KEYWORDS {
            if let Some(child) = o.kw(key) {
                self.index(child, b);
            }
        }
        for key in MAP_KEYWORDS {
            if let Some(Value::Object(map)) = o.kw(key) {
                for child in map.values() {
                    self.index(child, b);
                }
            }
        }
        for key in ARRAY_KEYWORDS {
            if let Some(Value::Array(list)) = o.kw(key) {
                for child in list {
                    self.index(child, b);
                }
            }
        }
    }

    /// What `reference`, written in a schema whose base is `base`, names.
    pub(crate) fn resolve(&mut self, reference: &str, base: BaseId) -> Target<'s> {
        self.ensure_indexed();
        let uri = resolve_uri(reference, self.base_uri(base));
        let doc = document_of(&uri).to_string();
        let Some(raw_fragment) = uri.get(doc.len()..).map(|f| f.strip_prefix('#').unwrap_or(f)) else {
            return Target::Unresolved;
        };
        let Some(fragment) = percent_decode(raw_fragment) else {
            return Target::Unresolved;
        };
        let Some(root) = self.resources.get(&doc).copied() else {
            return Target::Unresolved;
        };
        let doc_id = self.intern(&doc);
        if fragment.is_empty() {
            return Target::Found(root, doc_id);
        }
        if fragment.starts_with('/') {
            return self.pointer(root, doc_id, &fragment);
        }
        match self.anchors.get(&format!("{doc}#{fragment}")).copied() {
            Some(target) => {
                let b = self.base_of.get(&address(target)).copied().unwrap_or(doc_id);
                Target::Found(target, b)
            }
            None => Target::Unresolved,
        }
    }

    fn pointer(&self, root: &'s Value, base: BaseId, fragment: &str) -> Target<'s> {
        let mut node = root;
        let mut b = base;
        for raw in fragment.split('/').skip(1) {
            let key = crate::core::text::json::unescape(raw);
            let next = match node {
                Value::Object(map) => map.get(&key),
                Value::Array(items) => canonical_index(&key).and_then(|i| items.get(i)),
                _ => None,
            };
            let Some(next) = next else {
                return Target::Unresolved;
            };
            node = next;
            if let Some(id) = self.base_of.get(&address(node)) {
                b = *id;
            }
        }
        Target::Found(node, b)
    }
}

fn canonical_index(key: &str) -> Option<usize> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) || !key.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    key.parse().ok()
}

/// `uri` without its fragment.
pub(crate) fn document_of(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(doc, _)| doc)
}

/// `decodeURIComponent`: `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        if c == b'%' {
            let hi = bytes.get(i.saturating_add(1)).and_then(|h| (*h as char).to_digit(16))?;
            let lo = bytes.get(i.saturating_add(2)).and_then(|h| (*h as char).to_digit(16))?;
            out.push(u8::try_from(hi.saturating_mul(16).saturating_add(lo)).ok()?);
            i = i.saturating_add(3);
        } else {
            out.push(c);
            i = i.saturating_add(1);
        }
    }
    String::from_utf8(out).ok()
}

/// The parts of an absolute URI: `scheme:[//authority]path[?query][#fragment]`.
struct Parts<'u> {
    scheme: &'u str,
    authority: Option<&'u str>,
    path: &'u str,
    query: Option<&'u str>,
}

fn scheme_len(s: &str) -> Option<usize> {
    let colon = s.find(':')?;
    let scheme = s.get(..colon)?;
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    (first_ok && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))).then_some(colon)
}

fn split(uri: &str) -> Option<Parts<'_>> {
    let colon = scheme_len(uri)?;
    let scheme = uri.get(..colon)?;
    let rest = uri.get(colon.saturating_add(1)..)?;
    let rest = document_of(rest);
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            (after.get(..end), after.get(end..).unwrap_or(""))
        }
        None => (None, rest),
    };
    Some(Parts { scheme, authority, path, query })
}

fn join(scheme: &str, authority: Option<&str>, path: &str, query: Option<&str>, fragment: Option<&str>) -> String {
    let scheme = scheme.to_ascii_lowercase();
    let special = matches!(scheme.as_str(), "http" | "https" | "ws" | "wss" | "ftp" | "file");
    let mut out = scheme;
    out.push(':');
    if let Some(a) = authority {
        out.push_str("//");
        out.push_str(a);
    }
    let path = if authority.is_some() || path.starts_with('/') { remove_dot_segments(path) } else { path.to_string() };
    if path.is_empty() && authority.is_some() && special {
        out.push('/');
    }
    out.push_str(&path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {
                if i == last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if path.starts_with('/') && !joined.starts_with('/') { format!("/{joined}") } else { joined }
}

fn fragment_of(uri: &str) -> Option<&str> {
    uri.split_once('#').map(|(_, f)| f)
}

/// `new URL(reference, base).href`, for the URIs schemas use; a reference a URL parser would reject stays as it is
/// (and a fragment-only one joins the base document), as pi-schema falls back.
pub(crate) fn resolve_uri(reference: &str, base: &str) -> String {
    if scheme_len(reference).is_some() {
        return match split(reference) {
            Some(p) => join(p.scheme, p.authority, p.path, p.query, fragment_of(reference)),
            None => reference.to_string(),
        };
    }
    let Some(b) = split(base) else {
        return if reference.starts_with('#') {
            format!("{}{reference}", document_of(base))
        } else {
            reference.to_string()
        };
    };
    let fragment = fragment_of(reference);
    let body = document_of(reference);
    if b.authority.is_none() && !b.path.starts_with('/') {
        // An opaque base (`urn:…`) takes only fragment references.
        return if body.is_empty() { join(b.scheme, None, b.path, b.query, fragment) } else { reference.to_string() };
    }
    let (ref_path, ref_query) = match body.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (body, None),
    };
    if let Some(after) = ref_path.strip_prefix("//") {
        let end = after.find('/').unwrap_or(after.len());
        return join(b.scheme, after.get(..end), after.get(end..).unwrap_or(""), ref_query, fragment);
    }
    if ref_path.is_empty() {
        let query = if ref_query.is_some() { ref_query } else { b.query };
        return join(b.scheme, b.authority, b.path, query, fragment);
    }
    if ref_path.starts_with('/') {
        return join(b.scheme, b.authority, ref_path, ref_query, fragment);
    }
    let dir = b.path.rfind('/').and_then(|i| b.path.get(..=i)).unwrap_or("/");
    let merged = format!("{dir}{ref_path}");
    join(b.scheme, b.authority, &merged, ref_query, fragment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_resolve_like_url() {
        let base = DEFAULT_BASE;
        assert_eq!(resolve_uri("#/$defs/a", base), "https://json-schema.invalid/root.json#/$defs/a");
        assert_eq!(resolve_uri("other.json", "http://a.com/x/s.json"), "http://a.com/x/other.json");
        assert_eq!(resolve_uri("../o.json#f", "http://a.com/x/s.json"), "http://a.com/o.json#f");
        assert_eq!(resolve_uri("/o.json", "http://a.com/x/s.json"), "http://a.com/o.json");
        assert_eq!(resolve_uri("//b.com/o", "http://a.com/x/s.json"), "http://b.com/o");
        assert_eq!(resolve_uri("HTTP://b.com", base), "http://b.com/");
        assert_eq!(resolve_uri("urn:x#/a", base), "urn:x#/a");
        assert_eq!(resolve_uri("#a", "urn:x"), "urn:x#a");
        assert_eq!(resolve_uri("y", "urn:x"), "y");
        assert_eq!(resolve_uri("", "http://a.com/s.json#f"), "http://a.com/s.json");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("%C3%A9").as_deref(), Some("é"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%C3"), None);
        assert_eq!(percent_decode("%"), None);
    }
}
