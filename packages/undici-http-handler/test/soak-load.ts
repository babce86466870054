/**
 * A bounded mixed load for soak tests, through any handler with the suites' `handle()` surface, against the
 * `servers.ts` router. Each request is one of {@link SOAK_KINDS}, in a fixed rotation (deterministic mix):
 *
 * | kind                 | request                       | what the load does                                      |
 * |----------------------|-------------------------------|---------------------------------------------------------|
 * | `ok`                 | `/status/200`                 | reads the body                                          |
 * | `ok-large`           | `/large?bytes=20000`          | reads the body                                          |
 * | `abort-before`       | `/status/200`                 | signal aborted before `handle()`                        |
 * | `abort-same-turn`    | `/status/200`                 | aborts right after `handle()` (queued / connecting)     |
 * | `abort-sent`         | `/never`                      | aborts once the server saw the request                  |
 * | `abort-after-headers`| `/stall-body`                 | aborts after the headers, reads the body (an error)     |
 * | `abort-mid-body`     | `/slow-body?ms=30`            | aborts 10 ms into reading (between the two chunks)      |
 * | `timeout`            | `/never`                      | the handler's requestTimeout rejects it                 |
 * | `unread-destroyed`   | `/status/200`                 | body left unread for a few ms, then destroyed           |
 * | `unread-reset`       | `/reset-mid-body`             | body never read; the server resets the connection       |
 *
 * Every outcome is tallied by kind (`"Name/code"`, `"ok"`, `"body:Name/code"`); the load counts what it sent.
 */
import type { Readable } from "node:stream";
import { requestTo, type TestServer } from "../../node-http-handler/test/servers";

/** The kinds of request of the mix, in rotation order. */
export const SOAK_KINDS = [
  "ok",
  "ok-large",
  "abort-before",
  "ok",
  "abort-same-turn",
  "abort-sent",
  "ok",
  "abort-after-headers",
  "abort-mid-body",
  "ok",
  "timeout",
  "unread-destroyed",
  "ok-large",
  "unread-reset",
] as const;

/** One kind of request of the mix. */
export type SoakKind = (typeof SOAK_KINDS)[number];

/** The kinds the load aborts itself. */
export const ABORTING_KINDS: readonly SoakKind[] = [
  "abort-before",
  "abort-same-turn",
  "abort-sent",
  "abort-after-headers",
  "abort-mid-body",
];

/** What the load did. */
export interface SoakTally {
  /** `handle()` calls made. */
  sent: number;
  /** Outcome counts per kind. */
  outcomes: Record<string, Record<string, number>>;
}

/** The `handle()` surface the load needs. */
export interface SoakHandler {
  handle(request: any, options?: { abortSignal?: AbortSignal }): Promise<{ response: { body?: any } }>;
}

function shape(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown };
  return `${String(e?.name)}/${e?.code === undefined ? "-" : String(e.code)}`;
}

async function drain(body: Readable): Promise<string> {
  try {
    for await (const _ of body) {
      // read to the end
    }
    return "ok";
  } catch (error) {
    return `body:${shape(error)}`;
  }
}

const PATHS: Record<SoakKind, { path: string; query?: Record<string, string> }> = {
  ok: { path: "/status/200" },
  "ok-large": { path: "/large", query: { bytes: "20000" } },
  "abort-before": { path: "/status/200" },
  "abort-same-turn": { path: "/status/200" },
  "abort-sent": { path: "/never" },
  "abort-after-headers": { path: "/stall-body" },
  "abort-mid-body": { path: "/slow-body", query: { ms: "30" } },
  timeout: { path: "/never" },
  "unread-destroyed": { path: "/status/200" },
  "unread-reset": { path: "/reset-mid-body" },
};

async function one(handler: SoakHandler, server: TestServer, kind: SoakKind): Promise<string> {
  const controller = new AbortController();
  if (kind === "abort-before") controller.abort();
  const pending = handler.handle(requestTo(server, PATHS[kind]), { abortSignal: controller.signal });
  if (kind === "abort-same-turn") controller.abort();
  if (kind === "abort-sent") setTimeout(() => controller.abort(), 5);
  let response: { body: Readable };
  try {
    response = (await pending).response as { body: Readable };
  } catch (error) {
    return shape(error);
  }
  switch (kind) {
    case "abort-after-headers":
      controller.abort();
      return drain(response.body);
    case "abort-mid-body": {
      // The first chunk is there at once, the second after 30 ms: abort in between, while the body is being read.
      const reading = drain(response.body);
      setTimeout(() => controller.abort(), 10);
      return reading;
    }
    case "unread-destroyed":
      await new Promise((resolve) => setTimeout(resolve, 3));
      response.body.destroy();
      return "unread";
    case "unread-reset":
      return "unread";
    default:
      return drain(response.body);
  }
}

/**
 * Runs `total` requests of the mix with `concurrency` loops; stops issuing new ones after `maxMs` (a bound on a
 * slow machine, never asserted). Resolves once every request settled.
 */
export async function runSoakLoad(
  handler: SoakHandler,
  server: TestServer,
  options: { total: number; concurrency: number; maxMs: number; tally?: SoakTally }
): Promise<SoakTally> {
  const tally = options.tally ?? { sent: 0, outcomes: {} };
  const stopAt = Date.now() + options.maxMs;
  let next = 0;
  const loop = async () => {
    while (next < options.total && Date.now() < stopAt) {
      const kind = SOAK_KINDS[(tally.sent + next) % SOAK_KINDS.length]!;
      next++;
      const outcome = await one(handler, server, kind);
      const byKind = (tally.outcomes[kind] ??= {});
      byKind[outcome] = (byKind[outcome] ?? 0) + 1;
    }
  };
  const start = tally.sent;
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  tally.sent = start + next;
  return tally;
}
