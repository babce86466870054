/**
 * A deliberately slow (or, with delay 0, merely local and keep-alive capable) HTTP endpoint (127.0.0.1, port 0) for timeout, abort and logger tests: every request
 * is read fully and answered `200 {}` (a valid empty answer for the JSON-protocol clients, e.g. DynamoDB GetItem)
 * after `delayMs` (or, with `bodyBytes`, `200` with that many bytes: a body larger than the client buffers keeps its
 * connection until it is read). The delay timer is cleared as soon as the client goes away, so an aborted or timed-out request
 * leaves no timer behind on the server side either.
 */
import { EventEmitter, once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** @internal */
export interface SlowServer {
  /** `http://127.0.0.1:PORT` */
  readonly endpoint: string;
  /** Requests whose headers arrived so far. */
  readonly received: () => number;
  /** Requests whose connection closed before the answer was sent (the client gave up). */
  readonly abandoned: () => number;
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests). */
  readonly connections: () => number;
  /** Emits `"request"` when a request's headers arrive. */
  readonly events: EventEmitter;
  close(): Promise<void>;
}

/** Starts a server that answers each request after `delayMs` milliseconds. @internal */
export async function startSlowServer(delayMs: number, bodyBytes?: number): Promise<SlowServer> {
  const big = bodyBytes === undefined ? undefined : Buffer.alloc(bodyBytes, 0x61);
  const events = new EventEmitter();
  let received = 0;
  let abandoned = 0;
  let connections = 0;
  const server = http.createServer((req, res) => {
    received++;
    events.emit("request");
    req.resume();
    const timer = setTimeout(() => {
      if (big !== undefined) {
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": big.length });
        res.end(big);
        return;
      }
      res.writeHead(200, { "content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "slow-server" });
      res.end("{}");
    }, delayMs);
    res.once("close", () => {
      clearTimeout(timer);
      if (!res.writableFinished) abandoned++;
    });
  });
  server.on("connection", () => {
    connections++;
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    received: () => received,
    abandoned: () => abandoned,
    connections: () => connections,
    events,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
