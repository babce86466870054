/**
 * Test helpers: a loopback HTTP/HTTPS server whose responses the test releases explicitly, a
 * request helper that tracks through a `PoolMonitor`, and a throwaway self-signed certificate made
 * with the `openssl` CLI. Real sockets only; nothing here is a stub.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PoolMonitor } from "./pool-monitor";
import { timing } from "./timing";

export interface TestServer {
  origin: string;
  port: number;
  /** Requests received and not answered yet, oldest first. */
  pending: http.ServerResponse[];
  /** Total requests received. */
  received: number;
  /** Answer this many pending requests (oldest first) with `body`. */
  release(n?: number): void;
  /** Resolves once at least `n` requests are pending. */
  waitForPending(n: number): Promise<void>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Answer every request at once instead of parking it. */
  autoRespond?: boolean;
  /** Answer every request after this many ms (a long poll, or a latency ramp when a function of time). */
  holdMs?: number | (() => number);
  /** Response body size in bytes. @defaultValue 2 */
  bodyBytes?: number;
  tls?: { key: string; cert: string };
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const body = Buffer.alloc(options.bodyBytes ?? 2, "o");
  const pending: http.ServerResponse[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let waiter: { n: number; resolve: () => void } | undefined;
  const answer = (res: http.ServerResponse) => {
    res.writeHead(200, { "content-length": body.length, "content-type": "text/plain" });
    res.end(body);
  };
  const handler = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    state.received++;
    if (options.autoRespond) return answer(res);
    if (options.holdMs !== undefined) {
      const ms = typeof options.holdMs === "function" ? options.holdMs() : options.holdMs;
      const timer = setTimeout(() => answer(res), ms);
      timers.add(timer);
      res.on("close", () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
      return;
    }
    pending.push(res);
    if (waiter && pending.length >= waiter.n) {
      const w = waiter;
      waiter = undefined;
      w.resolve();
    }
  };
  const server = options.tls
    ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler)
    : http.createServer(handler);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const state: TestServer = {
    origin: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    pending,
    received: 0,
    release(n = pending.length) {
      for (const res of pending.splice(0, n)) answer(res);
    },
    waitForPending(n) {
      if (pending.length >= n) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiter = { n, resolve };
      });
    },
    async close() {
      pending.length = 0;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return state;
}

export interface Fired {
  req: http.ClientRequest;
  /** Resolves with the response once headers arrived (body untouched), or rejects on request error. */
  response: Promise<http.IncomingMessage>;
  /** Resolves when the body was fully read (if `consume`), or the request failed (never rejects). */
  done: Promise<"ok" | "error">;
  /** Resolves on the request's `'close'` (after the monitor's own close listener ran). */
  closed: Promise<void>;
}

/** Sends a GET through `agent`, tracked by `monitor`; reads the body unless `consume` is false. */
export function fire(
  monitor: PoolMonitor,
  agent: http.Agent,
  server: Pick<TestServer, "origin" | "port">,
  consume = true
): Fired {
  const startedAt = timing.now();
  const secure = server.origin.startsWith("https:");
  const request = secure ? https.request : http.request;
  const req = request({ host: "127.0.0.1", port: server.port, path: "/secret/path?token=abc", agent });
  monitor.trackRequest(req, agent, server.origin, startedAt);
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.on("response", resolve);
    req.on("error", reject);
  });
  const done = response.then(
    (res) =>
      new Promise<"ok" | "error">((resolve) => {
        if (!consume) return resolve("ok");
        res.on("end", () => resolve("ok"));
        res.on("error", () => resolve("error"));
        res.resume();
      }),
    () => "error" as const
  );
  const closed = new Promise<void>((resolve) => req.on("close", () => resolve()));
  req.end();
  return { req, response, done, closed };
}

/** A self-signed certificate for 127.0.0.1 generated with `openssl` into a temp dir (removed at once). */
export function makeSelfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "sockeye-cert-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" }
    );
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
