/**
 * The `AbortError` of every Sockeye handler, side by side with upstream's, as structured loggers see it: `Object.keys`,
 * `JSON.stringify`, `cause === signal.reason`, `name`, `message`. Upstream's `buildAbortError` assigns `name` and
 * `cause` to a plain `Error` (own enumerable properties, in that order), for an already-aborted signal and for an abort
 * during the request alike; Sockeye's must have the same shape, so a logger that prints `JSON.stringify(err)` keeps the
 * reason.
 *
 * Pairs: Sockeye `NodeHttpHandler` / `@smithy/node-http-handler` `NodeHttpHandler`, Sockeye `NodeHttp2Handler` /
 * upstream `NodeHttp2Handler` (h2c), Sockeye `UndiciHttpHandler` / `@smithy/undici-http-handler`. Intended difference
 * (undici README, migration table): an abort during the request rejects `@smithy/undici-http-handler` with the
 * signal's reason itself (undici's own rejection: a `DOMException`, the caller's `Error`, even a string), while
 * Sockeye's `UndiciHttpHandler` rejects with `NodeHttpHandler`'s `AbortError`; an already-aborted signal gives
 * upstream's `AbortError` on both.
 *
 * Real servers on 127.0.0.1 (port 0) hold every request; "during" aborts once the server has the request (no sleep).
 * Run: `npx vitest run --project integ packages/undici-http-handler/test/abort-error-shape.integ.spec.ts` (Sockeye's
 * Node handlers are imported built: `npm run build` first).
 */
import { once } from "node:events";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import {
  NodeHttp2Handler as SmithyNodeHttp2Handler,
  NodeHttpHandler as SmithyNodeHttpHandler,
} from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { UndiciHttpHandler as SmithyUndiciHttpHandler } from "@smithy/undici-http-handler";
import { NodeHttp2Handler, NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UndiciHttpHandler } from "../src/index";

type Transport = "http1" | "h2c";

interface AnyHandler {
  handle(request: HttpRequest, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
  destroy(): void;
}

/** Each Sockeye handler, its upstream counterpart and the server they talk to. */
const PAIRS: { name: string; transport: Transport; sockeye: () => AnyHandler; upstream: () => AnyHandler }[] = [
  {
    name: "NodeHttpHandler",
    transport: "http1",
    sockeye: () => new NodeHttpHandler(),
    upstream: () => new SmithyNodeHttpHandler(),
  },
  {
    name: "NodeHttp2Handler",
    transport: "h2c",
    sockeye: () => new NodeHttp2Handler(),
    upstream: () => new SmithyNodeHttp2Handler(),
  },
  {
    name: "UndiciHttpHandler",
    transport: "http1",
    sockeye: () => new UndiciHttpHandler(),
    upstream: () => new SmithyUndiciHttpHandler(),
  },
];

/** The abort reasons: AbortController's own (a `DOMException`), an `Error` with an enumerable field, a string. */
const REASONS: { name: string; make: () => unknown }[] = [
  { name: "abort() (DOMException reason)", make: () => undefined },
  {
    name: "an Error reason with an enumerable code",
    make: () => Object.assign(new Error("user cancelled"), { code: "E_USER" }),
  },
  { name: "a string reason", make: () => "stop" },
];

/** What a structured logger sees of the rejection, and whether its cause is the signal's reason. */
function loggedShape(error: unknown, signal: AbortSignal) {
  const e = error as Error;
  return {
    isError: e instanceof Error,
    keys: Object.keys(e),
    json: JSON.stringify(e),
    causeIsReason: e.cause === signal.reason,
    causeEnumerable: Object.getOwnPropertyDescriptor(e, "cause")?.enumerable,
    name: e.name,
    message: e.message,
  };
}

/** A server that holds every request (HTTP/1.1 or h2c); `arrived()` resolves at the next one. */
class HoldingServer {
  private readonly held: { destroy(): void }[] = [];
  private constructor(
    readonly server: http.Server | http2.Http2Server,
    readonly port: number
  ) {}

  static async start(transport: Transport): Promise<HoldingServer> {
    const server = transport === "http1" ? http.createServer() : http2.createServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const s = new HoldingServer(server, (server.address() as AddressInfo).port);
    if (transport === "http1") server.on("request", (req: http.IncomingMessage) => s.held.push(req.socket));
    else server.on("stream", (stream: http2.ServerHttp2Stream) => s.held.push(stream));
    return s;
  }

  arrived(): Promise<unknown> {
    return once(this.server, this.server instanceof http.Server ? "request" : "stream");
  }

  request(): HttpRequest {
    return new HttpRequest({
      protocol: "http:",
      hostname: "127.0.0.1",
      port: this.port,
      method: "GET",
      path: "/",
      headers: { host: `127.0.0.1:${this.port}` },
    });
  }

  async close(): Promise<void> {
    for (const h of this.held.splice(0)) h.destroy();
    if (this.server instanceof http.Server) this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Rejects `handler`'s request with `reason`, before it starts or once the server has it; returns what it threw. */
async function abortError(
  handler: AnyHandler,
  server: HoldingServer,
  when: "before" | "during",
  reason: unknown
): Promise<ReturnType<typeof loggedShape>> {
  const controller = new AbortController();
  if (when === "before") controller.abort(reason);
  const arrived = when === "during" ? server.arrived() : undefined;
  const pending = handler.handle(server.request(), { abortSignal: controller.signal });
  if (arrived !== undefined) {
    await arrived;
    controller.abort(reason);
  }
  const error = await pending.then(
    () => new Error("resolved"),
    (e: unknown) => e
  );
  return loggedShape(error, controller.signal);
}

const servers = new Map<Transport, HoldingServer>();

beforeAll(async () => {
  servers.set("http1", await HoldingServer.start("http1"));
  servers.set("h2c", await HoldingServer.start("h2c"));
});

afterAll(async () => {
  for (const s of servers.values()) await s.close();
});

describe.each(PAIRS)("$name: AbortError as upstream's", (pair) => {
  for (const reason of REASONS) {
    for (const when of ["before", "during"] as const) {
      it(`${reason.name}, ${when === "before" ? "signal already aborted" : "aborted during the request"}`, async () => {
        const server = servers.get(pair.transport)!;
        const sockeye = pair.sockeye();
        const upstream = pair.upstream();
        // Node's upstream is the reference for the undici pair too (see the header).
        const reference = pair.name === "UndiciHttpHandler" ? new SmithyNodeHttpHandler() : upstream;
        try {
          const ours = await abortError(sockeye, server, when, reason.make());
          const theirs = await abortError(
            reference,
            reference === upstream ? server : servers.get("http1")!,
            when,
            reason.make()
          );
          expect(ours).toEqual(theirs);
          expect(ours).toMatchObject({ isError: true, name: "AbortError" });
          if (reason.name.startsWith("a string")) {
            expect(ours).toMatchObject({ keys: ["name"], message: "stop", causeEnumerable: undefined });
          } else {
            expect(ours).toMatchObject({
              keys: ["name", "cause"],
              causeIsReason: true,
              causeEnumerable: true,
              message: "Request aborted",
            });
          }
          if (pair.name === "UndiciHttpHandler") {
            const upstreamUndici = await abortError(upstream, server, when, reason.make());
            if (when === "before") expect(upstreamUndici).toEqual(ours);
            // Intended difference: @smithy/undici-http-handler rejects with the signal's reason itself.
            else expect(upstreamUndici).not.toEqual(ours);
          }
        } finally {
          sockeye.destroy();
          upstream.destroy();
          if (reference !== upstream) reference.destroy();
        }
      });
    }
  }
});

it("@smithy/undici-http-handler, aborted during the request: the signal's reason itself, whatever it is", async () => {
  const server = servers.get("http1")!;
  const upstream = new SmithyUndiciHttpHandler();
  try {
    const error = Object.assign(new Error("user cancelled"), { code: "E_USER" });
    const controller = new AbortController();
    const arrived = server.arrived();
    const pending = upstream.handle(server.request(), { abortSignal: controller.signal });
    await arrived;
    controller.abort(error);
    await expect(pending).rejects.toBe(error);
    const defaultReason = await abortError(upstream, server, "during", undefined);
    expect(defaultReason).toMatchObject({ keys: [], json: "{}", name: "AbortError", causeIsReason: false });
    expect(defaultReason.message).toBe("This operation was aborted");
  } finally {
    upstream.destroy();
  }
});
