// A minimal OTLP/HTTP trace receiver on 127.0.0.1, as a collector would listen on :4318: it takes
// `POST /v1/traces` with an ExportTraceServiceRequest in OTLP's JSON encoding (what @opentelemetry/exporter-trace-otlp-http
// sends: `content-type: application/json`), answers as a collector does, and decodes the spans. Anything else (the
// protobuf encoding, another path) is recorded as refused and answered 415/404, so a test sees it.
import { createServer } from "node:http";

/** OTLP's SpanKind numbers (SPAN_KIND_UNSPECIFIED is 0). */
const KINDS = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];
const STATUS = ["UNSET", "OK", "ERROR"];

/** An OTLP AnyValue in the JSON encoding, as a JS value (64-bit integers come as strings or numbers). */
function anyValue(v) {
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return (v.arrayValue.values ?? []).map(anyValue);
  if ("kvlistValue" in v) return attributes(v.kvlistValue.values);
  throw new Error(`an AnyValue this receiver does not know: ${JSON.stringify(v)}`);
}

const attributes = (list = []) => Object.fromEntries(list.map((a) => [a.key, anyValue(a.value)]));

/** The spans of one ExportTraceServiceRequest, flattened, each with its resource's and scope's names. */
export function decodeTraces(request) {
  return request.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        resource: attributes(rs.resource?.attributes),
        scope: ss.scope?.name,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId || undefined,
        name: s.name,
        kind: KINDS[s.kind ?? 0],
        attributes: attributes(s.attributes),
        events: (s.events ?? []).map((e) => e.name),
        status: STATUS[s.status?.code ?? 0],
        start: BigInt(s.startTimeUnixNano),
        end: BigInt(s.endTimeUnixNano),
      })),
    ),
  );
}

export async function otlpReceiver() {
  const spans = [];
  const refused = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const type = req.headers["content-type"] ?? "";
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      refused.push(`${req.method} ${req.url}`);
      return res.writeHead(404).end();
    }
    if (!type.startsWith("application/json")) {
      refused.push(`content-type ${type}`);
      return res.writeHead(415).end();
    }
    spans.push(...decodeTraces(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ partialSuccess: {} }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    spans,
    refused,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
