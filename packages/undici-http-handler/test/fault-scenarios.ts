/**
 * The scenarios of the cross-handler fault suite (`fault-suite.integ.spec.ts`): each plays one fault against real
 * loopback servers; what each handler must do is in `fault-expectations.ts`, keyed by `id`.
 */
import type { Logger } from "@smithy/types";
import { closedPort, waitFor } from "../../node-http-handler/test/servers";
import { settleAll } from "../../node-http-handler/test/settle-all";
import { CAP_MS, type FaultCtx, type FaultScenario } from "./fault-run";

const quietLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

const throwingLogger: Logger = {
  debug() {},
  info() {},
  warn() {
    throw new Error("logger down");
  },
  error() {
    throw new Error("logger down");
  },
};

/** Calls of the throwing `onSaturation` below since the scenario started. */
let onSaturationCalls = 0;

async function sawRequests(ctx: FaultCtx, n: number): Promise<void> {
  await ctx.server.waitForRequests(n);
}

/** Requests of the run that are reading their body. */
async function readingFirstChunk(ctx: FaultCtx, path: string): Promise<number> {
  const i = ctx.start({ path }, { signal: true });
  const reader = await ctx.read(i);
  await reader.first;
  return i;
}

/** The scenarios, in the order the suite runs them. */
export const FAULT_SCENARIOS: FaultScenario[] = [
  // ---- resets -------------------------------------------------------------------------------------------------
  {
    id: "reset-before-response",
    title: "reset before the response (fresh connection)",
    async run(ctx) {
      ctx.start({ path: "/reset" }, { signal: true });
    },
  },
  {
    id: "reset-before-response-reused",
    title: "reset before the response on a reused keep-alive connection",
    config: { maxSockets: 1 },
    async run(ctx) {
      const first = await ctx.read(ctx.start({ path: "/status/200" }));
      await first.done;
      // The second request goes on the same (pooled) connection; the server resets it.
      ctx.start({ path: "/reset" }, { signal: true });
    },
  },
  {
    id: "reset-mid-body-keep-alive",
    title: "reset mid-body (keep-alive response)",
    async run(ctx) {
      ctx.start({ path: "/reset-mid-body" }, { signal: true });
    },
  },
  {
    id: "reset-mid-body-close",
    title: "reset mid-body (Connection: close response)",
    async run(ctx) {
      ctx.start({ path: "/reset-mid-body", query: { close: "1" } }, { signal: true });
    },
  },
  {
    id: "fin-mid-body-keep-alive",
    title: "FIN mid-body: truncated Content-Length (keep-alive response)",
    async run(ctx) {
      ctx.start({ path: "/fin-mid-body" }, { signal: true });
    },
  },
  {
    id: "fin-mid-body-close",
    title: "FIN mid-body: truncated Content-Length (Connection: close response)",
    async run(ctx) {
      ctx.start({ path: "/fin-mid-body", query: { close: "1" } }, { signal: true });
    },
  },
  // ---- no answer ----------------------------------------------------------------------------------------------
  {
    id: "refused",
    title: "connection refused",
    async run(ctx) {
      ctx.start({ path: "/echo", port: await closedPort() }, { signal: true });
    },
  },
  {
    id: "never-answers",
    title: "server never answers (requestTimeout 200 ms, rejecting)",
    config: { requestTimeout: 200 },
    async run(ctx) {
      ctx.start({ path: "/never" }, { signal: true });
    },
  },
  {
    id: "stalled-handshake",
    title: "TLS handshake (https) / first byte (http) never comes (connectionTimeout and socketTimeout 200 ms)",
    config: { connectionTimeout: 200, socketTimeout: 200 },
    async run(ctx) {
      ctx.start({ path: "/echo", port: ctx.silent.port }, { signal: true });
    },
  },
  {
    id: "slow-body",
    title: "slow body (second chunk after 50 ms)",
    async run(ctx) {
      ctx.start({ path: "/slow-body", query: { ms: "50" } }, { signal: true });
    },
  },
  {
    id: "stalled-body",
    title: "stalled body (socketTimeout 200 ms)",
    config: { socketTimeout: 200 },
    async run(ctx) {
      ctx.start({ path: "/stall-body" }, { signal: true });
    },
  },
  // ---- aborts at every phase ----------------------------------------------------------------------------------
  {
    id: "abort-queued",
    title: "abort while queued for a connection (maxSockets 1), then the connection is reused",
    config: { maxSockets: 1 },
    async run(ctx) {
      const holder = ctx.start({ path: "/delay", query: { ms: "150" } });
      await sawRequests(ctx, 1);
      const i = ctx.start({ path: "/status/200" }, { signal: true });
      // Give the queued request a few turns to reach the pool's queue.
      await new Promise((resolve) => setTimeout(resolve, 20));
      ctx.controllers[0]!.abort();
      await settleAll([ctx.pending[i]!, ctx.pending[holder]!], CAP_MS);
      await ctx.readers[holder]?.done;
      ctx.start({ path: "/status/200" });
    },
  },
  {
    id: "acquisition-timeout-queued",
    title: "socketAcquisitionTimeout while queued (maxSockets 1, 100 ms), then the connection is reused",
    handlers: ["sockeye-node", "sockeye-undici"],
    config: { maxSockets: 1, socketAcquisitionTimeout: 100 },
    async run(ctx) {
      const holder = ctx.start({ path: "/delay", query: { ms: "200" } });
      await sawRequests(ctx, 1);
      const i = ctx.start({ path: "/status/200" }, { signal: true });
      await settleAll([ctx.pending[i]!, ctx.pending[holder]!], CAP_MS);
      await ctx.readers[holder]?.done;
      ctx.start({ path: "/status/200" });
    },
  },
  {
    id: "abort-connecting",
    title: "abort in the same turn as handle() (before / while connecting)",
    async run(ctx) {
      ctx.start({ path: "/echo" }, { signal: true });
      ctx.controllers[0]!.abort();
    },
  },
  {
    id: "abort-tls-handshake",
    title: "abort during the TLS handshake (connectionTimeout 400 ms)",
    kinds: ["https"],
    config: { connectionTimeout: 400 },
    async run(ctx) {
      const i = ctx.start({ path: "/echo", port: ctx.silent.port }, { signal: true });
      await waitFor(() => ctx.silent.openConnections === 1, "the TCP connection accepted");
      ctx.controllers[0]!.abort();
      await settleAll([ctx.pending[i]!], CAP_MS);
      // Before destroy(): is the handshaking socket still open?
      await waitFor(() => ctx.silent.openConnections === 0, "the handshaking socket closed", 300).catch(() => {});
      ctx.notes.handshakingLeftOpen = ctx.silent.openConnections;
    },
  },
  {
    id: "abort-sent",
    title: "abort after the request was sent (no response yet)",
    async run(ctx) {
      ctx.start({ path: "/never" }, { signal: true });
      await sawRequests(ctx, 1);
      ctx.controllers[0]!.abort();
    },
  },
  {
    id: "abort-after-headers-unread",
    title: "abort after the response headers, body not read (then read)",
    body: "manual",
    async run(ctx) {
      const i = ctx.start({ path: "/stall-body" }, { signal: true });
      await ctx.pending[i];
      ctx.controllers[0]!.abort();
      // Nobody reads for a while: an error emitted now has no listener.
      await new Promise((resolve) => setTimeout(resolve, 30));
      await ctx.read(i);
    },
  },
  {
    id: "abort-mid-body",
    title: "abort mid-body (while reading)",
    async run(ctx) {
      await readingFirstChunk(ctx, "/stall-body");
      ctx.controllers[0]!.abort();
    },
  },
  // ---- destroy() ----------------------------------------------------------------------------------------------
  {
    id: "destroy-in-flight-and-queued",
    title: "destroy() with one request in flight and two queued (maxSockets 1)",
    config: { maxSockets: 1 },
    async run(ctx) {
      for (let i = 0; i < 3; i++) ctx.start({ path: "/never" }, { signal: true });
      await sawRequests(ctx, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      ctx.destroy();
    },
  },
  {
    id: "destroy-mid-body",
    title: "destroy() mid-body (while reading)",
    async run(ctx) {
      await readingFirstChunk(ctx, "/stall-body");
      ctx.destroy();
    },
  },
  // ---- bodies left unread, then errored ------------------------------------------------------------------------
  {
    id: "unread-body-reset",
    title: "body left unread, the server resets the connection, then read",
    body: "manual",
    async run(ctx) {
      const i = ctx.start({ path: "/reset-mid-body" }, { signal: true });
      await ctx.pending[i];
      await waitFor(() => ctx.server.openConnections === 0, "the server's reset");
      await new Promise((resolve) => setTimeout(resolve, 30));
      // Read now: the error must reach the reader.
      await ctx.read(i);
    },
  },
  {
    id: "unread-body-destroy",
    title: "body left unread, destroy(), then read",
    body: "manual",
    async run(ctx) {
      const i = ctx.start({ path: "/stall-body" }, { signal: true });
      await ctx.pending[i];
      ctx.destroy();
      await new Promise((resolve) => setTimeout(resolve, 30));
      await ctx.read(i);
    },
  },
  // ---- throwing logger / callback -------------------------------------------------------------------------------
  {
    id: "throwing-logger",
    title: "a throwing logger on a warn-only requestTimeout (50 ms; the answer comes at 150 ms)",
    config: { requestTimeout: 50, warnOnlyRequestTimeout: true, logger: throwingLogger },
    async run(ctx) {
      ctx.start({ path: "/delay", query: { ms: "150" } }, { signal: true });
    },
  },
  {
    id: "throwing-on-saturation",
    title: "a throwing onSaturation callback (an unread body holds the only connection, another request queued)",
    kinds: ["http"],
    handlers: ["sockeye-node", "sockeye-undici"],
    body: "manual",
    config: {
      maxSockets: 1,
      logger: quietLogger,
      // The shortest detection horizon the options allow: 3 samples of 100 ms.
      saturation: { sampleIntervalMs: 100, windowSamples: 3, unconsumedBodyMs: 1 },
      onSaturation() {
        onSaturationCalls++;
        throw new Error("callback down");
      },
    },
    async run(ctx) {
      onSaturationCalls = 0;
      const i = ctx.start({ path: "/large", query: { bytes: "200000" } }, { signal: true });
      await ctx.pending[i];
      const queued = ctx.start({ path: "/status/200" }, { signal: true });
      await waitFor(() => onSaturationCalls > 0, "onSaturation", 2000).catch(() => {});
      ctx.notes.onSaturationCalled = onSaturationCalls > 0;
      await ctx.read(i);
      await ctx.read(queued);
    },
  },
];
