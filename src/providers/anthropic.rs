//! stub: being written
use super::{Assembler, HttpRequest, RequestInput, StreamMapper, WireFormat};
use serde_json::Value;

pub struct AnthropicMessages;

struct Mapper;

impl WireFormat for AnthropicMessages {
    fn build_request(&self, _input: &RequestInput<'_>) -> Result<HttpRequest, String> {
        Err("not implemented yet".into())
    }
    fn mapper(&self, _input: &RequestInput<'_>) -> Box<dyn StreamMapper> {
        Box::new(Mapper)
    }
}

impl StreamMapper for Mapper {
    fn on_event(&mut self, _event: Option<&str>, _data: &Value, _asm: &mut Assembler) {}
    fn on_end(&mut self, asm: &mut Assembler) {
        asm.fail("not implemented yet", None);
    }
}
