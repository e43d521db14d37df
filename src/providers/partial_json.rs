//! stub: being written (the incremental tolerant JSON parser)
#[derive(Clone, Debug, PartialEq)]
pub enum PathSeg { Key(String), Index(usize) }
#[derive(Clone, Debug, PartialEq)]
pub enum PatchOp { SetObject, SetArray, SetValue(serde_json::Value), SetString(String), AppendString(String) }
#[derive(Clone, Debug, PartialEq)]
pub struct Patch { pub path: Vec<PathSeg>, pub op: PatchOp }
#[derive(Default)]
pub struct PartialJson;
impl PartialJson {
    pub fn new() -> Self { PartialJson }
    pub fn push(&mut self, _fragment: &str, _out: &mut Vec<Patch>) {}
}
pub fn apply(_root: &mut serde_json::Value, _patch: &Patch) {}
