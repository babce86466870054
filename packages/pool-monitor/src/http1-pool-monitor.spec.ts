/**
 * `Http1PoolMonitor` (the handler's monitor) against the standalone `PoolMonitor` built on it: an app that uses only
 * the base class must not bundle the standalone paths (`trackRequest()`'s `TrackedRequest` and listeners, `start()`'s
 * interval), and the base class, fed request by request as the handler feeds it, counts exactly as the subclass does.
 * Bundled with esbuild from the sources, as a Lambda build would (minified, tree-shaken); real requests against a
 * loopback server.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import { afterEach, describe, expect, it } from "vitest";
import { Http1PoolMonitor } from "./http1-pool-monitor";
import { PoolMonitor } from "./pool-monitor";
import { TrackedRequest } from "./tracked-request";
import { timing } from "./timing";

const INTERNAL = join(__dirname, "internal.ts");

async function bundledText(source: string): Promise<string> {
  const result = await build({
    stdin: { contents: source, resolveDir: __dirname, loader: "ts" },
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

describe("tree-shaking", () => {
  it("an app using only Http1PoolMonitor and what the handler counts with bundles none of the standalone paths", async () => {
    // What NodeHttpHandler imports: the base class and the pieces it counts its own requests with on the core.
    const handlerOnly = await bundledText(
      `import { Http1PoolMonitor, takeSocket, attachUnpooledRequest, unpooledClosed, httpRequestFinishedEvent,
         addUnreadResponse, addActiveAge, socketStateOf, agentMaps, outcomeOf } from ${JSON.stringify(INTERNAL)};
       export const m = new Http1PoolMonitor();
       export const f = [takeSocket, attachUnpooledRequest, unpooledClosed, httpRequestFinishedEvent, addUnreadResponse, addActiveAge, socketStateOf, agentMaps, outcomeOf];`
    );
    const standalone = await bundledText(
      `import { PoolMonitor } from ${JSON.stringify(INTERNAL)}; export const m = new PoolMonitor();`
    );
    // Markers of tracked-request.ts (its symbol, its connect listeners, its methods) and pool-monitor.ts (public
    // method names).
    for (const marker of [
      "secureConnect",
      "sockeye.pool-monitor.request",
      "trackRequest",
      "trackUnpooledRequest",
      "onSocket",
      "onResponse",
      "noteOutcome",
      "enqueueIfQueued",
    ]) {
      expect(standalone, marker).toContain(marker);
      expect(handlerOnly, marker).not.toContain(marker);
    }
    // The shared paths are in both: a socket's state in its slot, followed to its close (the close reasons).
    for (const marker of ["sockeye.poolMonitor.socketState", "server_closed"]) {
      expect(standalone, marker).toContain(marker);
      expect(handlerOnly, marker).toContain(marker);
    }
    expect(handlerOnly.length).toBeLessThan(standalone.length);
  });
});

describe("Http1PoolMonitor tracks as the handler feeds it", () => {
  let server: http.Server | undefined;
  let agent: http.Agent | undefined;
  const monitors: Http1PoolMonitor[] = [];

  afterEach(async () => {
    for (const m of monitors.splice(0)) m.destroy();
    agent?.destroy();
    if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
    server = agent = undefined;
  });

  /**
   * One request tracked by `monitor`: the base class fed request by request (a bare `TrackedRequest`, which calls the
   * counting methods the handler calls), the standalone monitor through `trackRequest()`.
   */
  async function oneRequest(monitor: Http1PoolMonitor, origin: string, port: number): Promise<void> {
    const startedAt = timing.now();
    const req = http.request({ host: "127.0.0.1", port, agent, path: "/secret?q=1" });
    if (monitor instanceof PoolMonitor) monitor.trackRequest(req, agent!, origin, startedAt);
    else new TrackedRequest(monitor, monitor.originFor(origin), agent, startedAt, req);
    req.on("response", (res) => res.resume());
    req.end();
    await once(req, "close");
  }

  it("counts the same figures as PoolMonitor for the same requests, and no trackRequest() on it", async () => {
    server = http.createServer((_req, res) => res.end("ok"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const origin = `http://127.0.0.1:${port}`;
    const base = new Http1PoolMonitor();
    const standalone = new PoolMonitor();
    monitors.push(base, standalone);
    expect("trackRequest" in base).toBe(false);
    expect("trackUnpooledRequest" in base).toBe(false);
    expect("start" in base).toBe(false);
    for (const monitor of [base, standalone]) {
      await oneRequest(monitor, origin, port);
      await oneRequest(monitor, origin, port);
    }
    const figures = (m: Http1PoolMonitor) => {
      const [o] = m.getStats().origins;
      return { origin: o.origin, requests: o.requests, inFlight: o.inFlight, acquisitions: o.sockets.acquisitions };
    };
    expect(figures(base)).toEqual({
      origin,
      requests: { started: 2, completed: 2, failed: 0, aborted: 0, timedOut: 0, queueFull: 0 },
      inFlight: 0,
      acquisitions: 2,
    });
    // The standalone monitor saw the same two requests on the socket the base monitor had already seen (the socket
    // belongs to the first monitor that saw it, so its socket figures stay with that one).
    expect(figures(standalone).requests).toEqual(figures(base).requests);
    expect(figures(standalone).acquisitions).toBe(2);
  });
});
