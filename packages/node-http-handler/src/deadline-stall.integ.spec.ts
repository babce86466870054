/**
 * Event-loop stalls, with real timers and a real loopback server: a response that arrived while the loop was
 * blocked must be delivered, not failed by a deadline that "expired" during the block (the scheduler fires expired
 * deadlines from setImmediate, after the poll phase has processed the I/O). Bounded: each block is 1.2 s.
 */
import { HttpRequest } from "@smithy/protocol-http";
import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test as it } from "vitest";
import { NodeHttpHandler } from "./node-http-handler";

// The server lives in another process so that it answers while this process's event loop is blocked. It prints
// "request" when a request arrives and answers 300 ms later.
const SERVER = `
const http = require("node:http");
const server = http.createServer((req, res) => {
  req.resume();
  process.stdout.write("request\\n");
  setTimeout(() => res.end("late but fine"), 300);
});
server.listen(0, "127.0.0.1", () => process.stdout.write("port " + server.address().port + "\\n"));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
`;
let child: ChildProcess;
let port: number;
const lines: string[] = [];
let onLine: (() => void) | undefined;

function nextLine(prefix: string): Promise<string> {
  return new Promise((resolve) => {
    const check = () => {
      const i = lines.findIndex((l) => l.startsWith(prefix));
      if (i === -1) return false;
      resolve(lines.splice(i, 1)[0]);
      return true;
    };
    if (!check()) onLine = () => void (check() && (onLine = undefined));
  });
}

beforeAll(async () => {
  child = spawn(process.execPath, ["-e", SERVER], { stdio: ["pipe", "pipe", "inherit"] });
  let buffered = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk;
    let nl = buffered.indexOf("\n");
    while (nl !== -1) {
      lines.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf("\n");
    }
    onLine?.();
  });
  port = Number((await nextLine("port ")).slice(5));
});
afterAll(() => {
  child.stdin!.end();
});

/** Blocks this thread (and so the client's event loop) for `ms`. */
function blockFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy
  }
}

it("delivers a response that arrived during a block longer than requestTimeout", async () => {
  const handler = new NodeHttpHandler({ requestTimeout: 500, throwOnRequestTimeout: true });
  try {
    const pending = handler.handle(
      new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path: "/", headers: {} })
    );
    // Let the request reach the server, then block past both the answer (300 ms) and the deadline (500 ms).
    await nextLine("request");
    blockFor(1200);
    const { response } = await pending;
    let body = "";
    for await (const chunk of response.body) body += chunk;
    expect(response.statusCode).toBe(200);
    expect(body).toBe("late but fine");
  } finally {
    handler.destroy();
  }
});

it("still fails a request whose response had not arrived when the deadline fires after a block", async () => {
  const silent = http.createServer((req) => req.resume());
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const silentPort = (silent.address() as AddressInfo).port;
  const handler = new NodeHttpHandler({ requestTimeout: 500, throwOnRequestTimeout: true });
  try {
    const outcome = handler
      .handle(
        new HttpRequest({
          protocol: "http:",
          hostname: "127.0.0.1",
          port: silentPort,
          method: "GET",
          path: "/",
          headers: {},
        })
      )
      .then(
        () => "resolved",
        (e: Error) => e.name
      );
    await new Promise((resolve) => silent.once("request", resolve));
    blockFor(1200);
    expect(await outcome).toBe("TimeoutError");
  } finally {
    handler.destroy();
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
});
