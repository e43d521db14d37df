// Who may reach the agents, checked in the Worker before any request reaches a Durable Object: every request needs
// `Authorization: Bearer <AUTH_TOKEN>` (a secret); pages on other origins are let in by CORS_ORIGINS only. Owns those
// two checks and their answers; routes and agents are worker.js's.
//
// No token in URLs: a `?token=` would land in access logs, browser history and Referer headers. Every route, the
// streams too, reads the header; a browser sends it with fetch() (the AI SDK's DefaultChatTransport has `headers`,
// also for its reconnect), not with EventSource, which cannot set headers (README: a fetch-based SSE reader).
// No switch turns authentication off: a variable that disables it could be left on in a deployment.

/** Shorter tokens are refused as a configuration error (a guessable secret guards payments). */
export const MIN_TOKEN_LENGTH = 16;

/** What makes AUTH_TOKEN or CORS_ORIGINS unusable, or undefined. */
export function accessConfigError(env) {
  const token = env.AUTH_TOKEN ?? "";
  if (token === "") {
    return "AUTH_TOKEN is not set: every route needs it (wrangler secret put AUTH_TOKEN; locally AUTH_TOKEN=… in .dev.vars)";
  }
  if (token.length < MIN_TOKEN_LENGTH) {
    return `AUTH_TOKEN is ${token.length} characters long: use at least ${MIN_TOKEN_LENGTH} (e.g. openssl rand -hex 32)`;
  }
  for (const origin of originsOf(env)) {
    let parsed;
    try {
      parsed = new URL(origin).origin;
    } catch {
      parsed = undefined;
    }
    if (parsed !== origin) return `CORS_ORIGINS: "${origin}" is not an origin (scheme://host[:port], no path, no "*")`;
  }
  return undefined;
}

/** The exact origins CORS_ORIGINS lists (separated by commas or spaces); none by default. */
export const originsOf = (env) => (env.CORS_ORIGINS ?? "").split(/[\s,]+/).filter(Boolean);

/** A 401 unless the request carries `Authorization: Bearer <AUTH_TOKEN>`; undefined when it does. */
export async function refuseUnauthorized(request, token) {
  const header = request.headers.get("authorization");
  const given = header === null ? null : /^Bearer +(\S+) *$/i.exec(header)?.[1];
  if (!given) {
    return unauthorized('Bearer realm="agents"', "this route needs an Authorization: Bearer <AUTH_TOKEN> header");
  }
  if (!(await sameSecret(given, token))) return unauthorized('Bearer realm="agents", error="invalid_token"', "the bearer token is not AUTH_TOKEN");
  return undefined;
}

const unauthorized = (challenge, error) => Response.json({ error }, { status: 401, headers: { "www-authenticate": challenge } });

/**
 * Compares the SHA-256 digests in constant time: the time taken tells nothing of where the strings differ, nor (as
 * digests have one length) of the token's length.
 */
async function sameSecret(given, expected) {
  const bytes = new TextEncoder();
  const [a, b] = await Promise.all([given, expected].map((s) => crypto.subtle.digest("SHA-256", bytes.encode(s))));
  return crypto.subtle.timingSafeEqual(a, b);
}

/**
 * A CORS preflight (an OPTIONS with Access-Control-Request-Method) is answered here without a token (browsers send
 * none in it): 204 with the allowed methods and headers for an origin CORS_ORIGINS lists, else 403 with no CORS
 * header, so the browser blocks the request. Undefined for any other request.
 */
export function answerPreflight(request, env) {
  if (request.method !== "OPTIONS" || !request.headers.has("access-control-request-method")) return undefined;
  const origin = request.headers.get("origin");
  if (origin === null || !originsOf(env).includes(origin)) {
    return Response.json({ error: `origin ${JSON.stringify(origin)} is not in CORS_ORIGINS` }, { status: 403, headers: { vary: "Origin" } });
  }
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "GET, POST",
      "access-control-allow-headers": "Authorization, Content-Type, Last-Event-ID",
      "access-control-max-age": "600",
      vary: "Origin",
    },
  });
}

/** `response` readable by the page when the request came from an origin CORS_ORIGINS lists (401s included). */
export function allowOrigin(response, request, env) {
  const origins = originsOf(env);
  if (!origins.length) return response;
  const origin = request.headers.get("origin");
  const headers = new Headers(response.headers);
  headers.append("vary", "Origin");
  if (origin !== null && origins.includes(origin)) headers.set("access-control-allow-origin", origin);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
