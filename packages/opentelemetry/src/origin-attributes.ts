/**
 * Attribute sets per origin (at most `maxOrigins` plus `_OTHER`), built once and reused, so the SDK's per-record
 * hashing sees the same frozen object.
 */
import type { Attributes } from "@opentelemetry/api";
import type { RequestFinishedEvent } from "@sockeye/pool-monitor";

/** As `@sockeye/pool-monitor`'s `OVERFLOW_ORIGIN`. */
const OTHER = "_OTHER";

interface OriginAttributes {
  /** `server.address`, `server.port`, `url.scheme`. */
  base: Attributes;
  /** Lazily built variants of `base` with one extra attribute, keyed by `key=value`. */
  variants: Map<string, Attributes>;
  /** Lazily built request attribute sets (`http.client.request.duration`), keyed by `requestKey()`. */
  requests: Map<string, Attributes>;
}

/** @internal */
export class OriginAttributeCache {
  private readonly cache = new Map<string, OriginAttributes>();

  /** @param maxOrigins - origins with attribute sets of their own; the rest report as `_OTHER`. */
  constructor(private readonly maxOrigins: number) {}

  get(origin: string): OriginAttributes {
    let entry = this.cache.get(origin);
    if (entry === undefined) {
      if (this.cache.size >= this.maxOrigins && origin !== OTHER) return this.get(OTHER);
      entry = { base: Object.freeze(parseOrigin(origin)), variants: new Map(), requests: new Map() };
      this.cache.set(origin, entry);
    }
    return entry;
  }

  /** `base` plus `{ [key]: value }`, cached. */
  with(origin: string, key: string, value: string | boolean): Attributes {
    const entry = this.get(origin);
    const id = `${key}=${value}`;
    let attrs = entry.variants.get(id);
    if (attrs === undefined) {
      attrs = Object.freeze({ ...entry.base, [key]: value });
      entry.variants.set(id, attrs);
    }
    return attrs;
  }

  /** The semantic-convention attributes of a finished request, cached. */
  request(e: RequestFinishedEvent): Attributes {
    const entry = this.get(e.origin);
    const id = `${e.method} ${e.statusCode ?? ""} ${e.errorType ?? ""} ${e.protocolVersion ?? ""} ${e.scheme ?? ""}`;
    let attrs = entry.requests.get(id);
    if (attrs === undefined) {
      const a: Attributes = { ...entry.base, "http.request.method": e.method };
      if (e.statusCode !== null) a["http.response.status_code"] = e.statusCode;
      if (e.errorType !== null) a["error.type"] = e.errorType;
      if (e.protocolVersion !== null) a["network.protocol.version"] = e.protocolVersion;
      if (a["url.scheme"] === undefined && e.scheme !== null) a["url.scheme"] = e.scheme;
      attrs = Object.freeze(a);
      entry.requests.set(id, attrs);
    }
    return attrs;
  }
}

function parseOrigin(origin: string): Attributes {
  try {
    const url = new URL(origin);
    const scheme = url.protocol.replace(/:$/, "");
    const port = url.port ? Number(url.port) : scheme === "https" ? 443 : 80;
    // IPv6 literals come back bracketed from `URL`; semconv wants the address itself.
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    return { "server.address": host, "server.port": port, "url.scheme": scheme };
  } catch {
    // `_OTHER` (overflow) or anything that is not a URL: keep the label, no port or scheme.
    return { "server.address": origin };
  }
}
