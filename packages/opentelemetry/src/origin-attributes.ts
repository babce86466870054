/**
 * Attribute sets per origin, built once and reused at every collection and event.
 *
 * OpenTelemetry attribute objects are compared by content and hashed by the SDK on every record;
 * handing it the same frozen object keeps that cheap and avoids per-event allocation. The cache holds
 * one entry per origin the monitor reports (bounded by the monitor's `maxOrigins` + `_OTHER`).
 */
import type { Attributes } from "@opentelemetry/api";

/** Attributes derived from one origin. @internal */
export interface OriginAttributes {
  /** `server.address`, `server.port`, `url.scheme`. */
  base: Attributes;
  /** Lazily built variants of `base` with one extra attribute, keyed by `key=value`. */
  variants: Map<string, Attributes>;
}

/** @internal */
export class OriginAttributeCache {
  private readonly cache = new Map<string, OriginAttributes>();

  get(origin: string): OriginAttributes {
    let entry = this.cache.get(origin);
    if (entry === undefined) {
      entry = { base: Object.freeze(parseOrigin(origin)), variants: new Map() };
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
}

function parseOrigin(origin: string): Attributes {
  try {
    const url = new URL(origin);
    const scheme = url.protocol.replace(/:$/, "");
    const port = url.port ? Number(url.port) : scheme === "https" ? 443 : 80;
    return { "server.address": url.hostname, "server.port": port, "url.scheme": scheme };
  } catch {
    // `_OTHER` (overflow) or anything that is not a URL: keep the label, no port or scheme.
    return { "server.address": origin };
  }
}
