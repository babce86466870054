/**
 * A loopback http server for the handler's unit specs: it counts the requests it saw, lets a test wait until it
 * has seen N (event-driven, no sleeps), and holds the responses `hold(url)` selects until the test releases them.
 * `/big` is answered with `BIG_BODY_BYTES`: more than the client buffers, so its response stays open until read.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** Size of the `/big` response body: far beyond what the socket, the response and the body buffer. */
export const BIG_BODY_BYTES = 4 * 1024 * 1024;

export class HoldingServer {
  /** Port on 127.0.0.1, set by `start()`. */
  port = 0;
  /** Requests seen since `start()` or the last reset (`seen = 0`). */
  seen = 0;
  /** Responses held without an answer, oldest first. */
  readonly held: http.ServerResponse[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];
  private readonly server: http.Server;

  /** @param hold - whether to hold the response to a request for `url` (others are answered "ok" at once). */
  constructor(hold: (url: string) => boolean) {
    this.server = http.createServer((req, res) => {
      this.seen++;
      const due = this.waiters.filter((w) => this.seen >= w.n);
      this.waiters = this.waiters.filter((w) => this.seen < w.n);
      for (const w of due) w.resolve();
      req.resume();
      if (hold(req.url ?? "")) this.held.push(res);
      else if (req.url === "/big") res.end(Buffer.alloc(BIG_BODY_BYTES));
      else res.end("ok");
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Resolves once the server has seen `n` requests. */
  saw(n: number): Promise<void> {
    if (this.seen >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** Answers every held response with "ok". */
  releaseAll(): void {
    for (const res of this.held.splice(0)) res.end("ok");
  }

  async close(): Promise<void> {
    this.releaseAll();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
