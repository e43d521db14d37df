//! Schema problems: what pi-schema's `compile` throws before any value is checked (a subschema that is neither an
//! object nor a boolean, a `pattern` that is no regular expression), found by walking the subschemas in the order
//! its compiler builds them. The first problem wins; each schema object is visited once, so `$ref` cycles end.

use crate::core::fxhash::FxSet;

use crate::core::text::json::Kw;
use serde_json::{Map, Value};

use super::resolve::{BaseId, Resolver, Target, address};
use super::{INVALID_REGEX, MAX_DEPTH, PatternMatcher, TOO_DEEP};
use crate::core::text::json::{js_entries, js_json_stringify};

/// Keywords that never affect a check: a schema with only these and `type` compiles to a type test.
pub(crate) const NEUTRAL: [&str; 16] = [
    "$schema",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
    "contentEncoding",
    "contentMediaType",
    "minContains",
    "maxContains",
    "$vocabulary",
];

struct Finder<'a> {
    resolver: Resolver<'a>,
    re: &'a dyn PatternMatcher,
    seen: FxSet<usize>,
    depth: usize,
}

/// The first problem of `schema`, as the message pi-schema's `compile` throws.
pub(crate) fn find(schema: &Value, re: &dyn PatternMatcher) -> Option<String> {
    let mut finder = Finder { resolver: Resolver::new(schema), re, seen: FxSet::default(), depth: 0 };
    let base = finder.resolver.root_base();
    finder.schema(schema, base).err()
}

type Found = Result<(), String>;

impl<'a> Finder<'a> {
    fn schema(&mut self, node: &'a Value, base: BaseId) -> Found {
        let Value::Object(o) = node else {
            return match node {
                Value::Bool(_) => Ok(()),
                other => Err(format!("A schema must be an object or a boolean, got {}", js_json_stringify(other))),
            };
        };
        if !self.seen.insert(address(node)) || bare_type(o) {
            return Ok(());
        }
        if self.depth >= MAX_DEPTH {
            return Err(TOO_DEEP.to_string());
        }
        self.depth = self.depth.saturating_add(1);
        let b = self.resolver.base_for(node, base);
        let found = self.keywords(o, b);
        self.depth = self.depth.saturating_sub(1);
        found
    }

    fn pattern(&self, pattern: &str) -> Found {
        if self.re.is_match(pattern, "").is_some() {
            return Ok(());
        }
        Err(self.re.pattern_error(pattern).unwrap_or_else(|| format!("{INVALID_REGEX}/{pattern}/")))
    }

    fn keywords(&mut self, o: &'a Map<String, Value>, b: BaseId) -> Found {
        if let Some(Value::String(p)) = o.kw("pattern") {
            self.pattern(p)?;
        }
        self.object_keywords(o, b)?;
        self.array_keywords(o, b)?;
        for s in o.kw("allOf").and_then(Value::as_array).into_iter().flatten() {
            self.schema(s, b)?;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = o.kw(key)
                && !const_union(branches)
            {
                for s in branches {
                    self.schema(s, b)?;
                }
            }
        }
        if let Some(not) = o.kw("not") {
            self.schema(not, b)?;
        }
        if let Some(cond) = o.kw("if") {
            let (then, otherwise) = (o.kw("then"), o.kw("else"));
            if then.is_some() || otherwise.is_some() {
                for s in [then, otherwise].into_iter().flatten() {
                    self.schema(s, b)?;
                }
                self.schema(cond, b)?;
            }
        }
        for key in ["$ref", "$dynamicRef"] {
            if let Some(Value::String(reference)) = o.kw(key)
                && let Target::Found(target, tb) = self.resolver.resolve(reference, b)
            {
                self.schema(target, tb)?;
            }
        }
        Ok(())
    }

    fn object_keywords(&mut self, o: &'a Map<String, Value>, b: BaseId) -> Found {
        for (_, s) in o.kw("properties").and_then(Value::as_object).map(js_entries).unwrap_or_default() {
            self.schema(s, b)?;
        }
        for (p, s) in o.kw("patternProperties").and_then(Value::as_object).map(js_entries).unwrap_or_default() {
            self.pattern(p)?;
            self.schema(s, b)?;
        }
        match o.kw("additionalProperties") {
            None | Some(Value::Bool(true)) => {}
            Some(extra) => self.schema(extra, b)?,
        }
        if let Some(names) = o.kw("propertyNames") {
            self.schema(names, b)?;
        }
        for (_, s) in o.kw("dependentSchemas").and_then(Value::as_object).map(js_entries).unwrap_or_default() {
            self.schema(s, b)?;
        }
        for (_, d) in o.kw("dependencies").and_then(Value::as_object).map(js_entries).unwrap_or_default() {
            if !d.is_array() {
                self.schema(d, b)?;
            }
        }
        Ok(())
    }

    fn array_keywords(&mut self, o: &'a Map<String, Value>, b: BaseId) -> Found {
        let (prefix, rest) = match o.kw("items") {
            Some(Value::Array(prefix)) => (prefix.as_slice(), o.kw("additionalItems")),
            items => match o.kw("prefixItems") {
                Some(Value::Array(prefix)) => (prefix.as_slice(), items),
                _ => (&[][..], items),
            },
        };
        for s in prefix {
            self.schema(s, b)?;
        }
        match rest {
            None | Some(Value::Bool(true)) => {}
            Some(s) => self.schema(s, b)?,
        }
        if let Some(contains) = o.kw("contains") {
            self.schema(contains, b)?;
        }
        Ok(())
    }
}

/// A schema of only `type` and annotations: pi-schema compiles it without looking at anything else.
fn bare_type(o: &Map<String, Value>) -> bool {
    o.keys().all(|k| k == "type" || NEUTRAL.contains(&k.as_str())) && !matches!(o.kw("type"), Some(Value::Array(_)))
}

/// A union whose branches are all `{const: primitive}` (pi-schema compiles it as an enum, not branch by branch).
fn const_union(branches: &[Value]) -> bool {
    branches.iter().all(|s| {
        s.as_object().is_some_and(|o| {
            o.kw("const").is_some_and(|c| !c.is_object() && !c.is_array())
                && o.keys().all(|k| k == "const" || NEUTRAL.contains(&k.as_str()))
        })
    })
}
