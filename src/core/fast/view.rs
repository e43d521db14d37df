//! The validator's view of a tool call's arguments (`ViewPaths`: `json_copy`, `view_string`, `patch_copy`), the fast
//! paths the reference of `FastPaths::check_tool_call` (`check_call.rs`) runs on: the copy of the arguments, and the
//! coerced values written back into it. The JS twins are `jsonCopy`, `viewString` and `patchCopy` in
//! `src/js/snippets/view.js`, which copy with `structuredClone` and write values JSON cannot hold as markers
//! (`validate::special`). A trait of its own under `FastPaths`, so that `check_call.rs` names it and not the layer
//! that names `check_call.rs`.

use crate::core::host::Host;
use crate::core::text;

/// The view's fast paths, each with its reference as the default method (see `core::fast`).
pub trait ViewPaths: Host {
    /// A copy of `v` and its `JSON.stringify` text, reading `v` once. The JS twin copies with
    /// `structuredClone` as the reference loop does (throwing its errors) and writes the clone; the
    /// reference makes a fresh `JSON.parse` of the text (`null` when the text is undefined).
    fn json_copy(&self, v: &Self::V) -> Result<(Option<String>, Self::V), Self::V> {
        json_copy(self, v)
    }

    /// The JSON text of the long string that the `l<index>` marker of the last `json_copy` view stands for (issue
    /// 34). The reference writes no such markers: `None`.
    fn view_string(&self, _index: usize) -> Option<String> {
        None
    }

    /// The validated arguments: `copy` (the clone `json_copy` made) with `patches` applied. `patches` is the JSON
    /// text of a list of `[path, value]` (set), `[path]` (delete) and `[path, 0, 0]` (wrap into a one-item array)
    /// entries; a path is a list of keys and indices, and the empty path is the whole copy. Values may hold markers
    /// (`validate::special`), which the JS twin turns back into the values they stand for.
    fn patch_copy(&self, copy: &Self::V, patches: &str) -> Result<Self::V, Self::V> {
        patch_copy(self, copy, patches)
    }
}

/// The reference of `ViewPaths::json_copy`: the text, and a fresh `JSON.parse` of it (`null` when
/// the text is undefined).
pub fn json_copy<H: Host>(h: &H, v: &H::V) -> Result<(Option<String>, H::V), H::V> {
    let text = h.json_stringify(v, false)?;
    let copy = match &text {
        Some(text) => h.json_parse(text)?,
        None => h.null(),
    };
    Ok((text, copy))
}

/// The reference of `ViewPaths::patch_copy`: reads and writes through `get`/`set`/`delete`.
pub fn patch_copy<H: Host>(h: &H, copy: &H::V, patches: &str) -> Result<H::V, H::V> {
    use serde_json::Value;
    let parsed = text::wtf::parse(patches).map_err(|e| h.error(&e, false))?;
    let key = |k: &Value| k.as_str().map_or_else(|| text::json::js_property_key(k), str::to_string);
    let parse = |v: &Value| h.json_parse(&text::json::js_json_stringify(v));
    let mut root = copy.clone();
    for patch in parsed.as_array().map(Vec::as_slice).unwrap_or_default() {
        let Value::Array(patch) = patch else { continue };
        let (Some(Value::Array(path)), value, wrap) = (patch.first(), patch.get(1), patch.len() == 3) else {
            continue;
        };
        let Some((last, parents)) = path.split_last() else {
            root = match value {
                _ if wrap => h.array(&[root]),
                Some(value) => parse(value)?,
                None => root,
            };
            continue;
        };
        let mut node = root.clone();
        for k in parents {
            node = h.get(&node, &key(k))?;
        }
        match value {
            _ if wrap => {
                let item = h.get(&node, &key(last))?;
                h.set(&node, &key(last), &h.array(&[item]))?;
            }
            Some(value) => h.set(&node, &key(last), &parse(value)?)?,
            None => h.delete(&node, &key(last))?,
        }
    }
    text::wtf::drop_deep(parsed);
    Ok(root)
}

/// The reference of `FastPaths::json_text_kept`: `JSON.stringify(v)`, nothing kept (the table `undefined`).
pub fn json_text_kept<H: Host>(h: &H, v: &H::V) -> Result<(Option<String>, H::V), H::V> {
    Ok((h.json_stringify(v, false)?, h.undefined()))
}

/// The reference of `FastPaths::json_parse_kept`: `JSON.parse(text)` (the reference keeps nothing to put back).
pub fn json_parse_kept<H: Host>(h: &H, text: &str, _table: &H::V) -> Result<H::V, H::V> {
    h.json_parse(text)
}
