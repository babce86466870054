/**
 * A transparent TCP relay in front of moto that watches each connection's first HTTP exchange, to prove what an
 * `Expect: 100-continue` upload really did on the wire (moto's werkzeug server speaks HTTP/1.1 and answers
 * `100 Continue`):
 * - the request head (so a test can see the `expect` header the SDK added),
 * - whether the server sent `HTTP/1.1 100 Continue`,
 * - how many body bytes the client sent BEFORE that interim response had been relayed to it. A client that waits
 *   for `100 Continue` cannot have sent any (it has not seen the interim response yet), so this is exact.
 *
 * Bytes are relayed unchanged; only the first head per connection is parsed (the SDK sends 100-continue uploads
 * on one-off connections unless the caller owns the agent). Cost: one Buffer concat per chunk until the head ends.
 */
import { once } from "node:events";
import net from "node:net";

/** What the relay saw on one connection. @internal */
export interface ObservedExchange {
  /** The request line and headers, as sent (CRLF-separated, no trailing blank line). */
  head: string;
  /** Body bytes the client sent before `100 Continue` was relayed back (all of them if none came). */
  bodyBytesBeforeContinue: number;
  /** Body bytes the client sent in total on this connection after the first head. */
  bodyBytes: number;
  /** The server answered `HTTP/1.x 100`. */
  sawContinue: boolean;
}

/** @internal */
export interface ExpectContinueProbe {
  /** `http://127.0.0.1:PORT` of the relay. */
  readonly endpoint: string;
  readonly exchanges: ObservedExchange[];
  close(): Promise<void>;
}

/** Starts a relay on 127.0.0.1 port 0 forwarding to `target` (`http://127.0.0.1:PORT`). @internal */
export async function startExpectContinueProbe(target: string): Promise<ExpectContinueProbe> {
  const { hostname, port } = new URL(target);
  const exchanges: ObservedExchange[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client);
    sockets.add(upstream);
    const exchange: ObservedExchange = { head: "", bodyBytesBeforeContinue: 0, bodyBytes: 0, sawContinue: false };
    exchanges.push(exchange);
    let pendingHead: Buffer | undefined = Buffer.alloc(0);
    let continueRelayed = false;
    let firstResponseChunk = true;

    client.on("data", (chunk: Buffer) => {
      if (pendingHead !== undefined) {
        pendingHead = Buffer.concat([pendingHead, chunk]);
        const end = pendingHead.indexOf("\r\n\r\n");
        if (end === -1) {
          upstream.write(chunk);
          return;
        }
        exchange.head = pendingHead.subarray(0, end).toString("latin1");
        const bodyPart = pendingHead.length - (end + 4);
        pendingHead = undefined;
        countBody(bodyPart);
      } else {
        countBody(chunk.length);
      }
      upstream.write(chunk);
    });
    function countBody(n: number): void {
      exchange.bodyBytes += n;
      if (!continueRelayed) exchange.bodyBytesBeforeContinue += n;
    }
    upstream.on("data", (chunk: Buffer) => {
      if (firstResponseChunk) {
        firstResponseChunk = false;
        exchange.sawContinue = /^HTTP\/1\.[01] 100 /.test(chunk.subarray(0, 16).toString("latin1"));
        // From here on the client may legitimately send the body.
        continueRelayed = exchange.sawContinue;
      }
      client.write(chunk);
    });
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    client.on("close", closeBoth);
    upstream.on("close", closeBoth);
    client.on("error", closeBoth);
    upstream.on("error", closeBoth);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address() as net.AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    exchanges,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
