/**
 * `idleSocketTimeout` bounds how long undici keeps an idle connection even when the server's `Keep-Alive: timeout=N`
 * hint allows longer: the hint may only shorten it. A real server on 127.0.0.1 announces a 600 s keep-alive; the
 * handler closes the connection after its own idle limit, and counts it.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { readAll, requestTo, waitFor } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "./undici-http-handler";

let server: http.Server | undefined;
let handler: UndiciHttpHandler | undefined;

afterEach(async () => {
  handler?.destroy();
  handler = undefined;
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** An http server whose responses announce `Keep-Alive: timeout=<keepAliveSeconds>`; counts open connections. */
async function startServer(keepAliveSeconds: number): Promise<{ port: number; open: () => number }> {
  const sockets = new Set<Socket>();
  server = http.createServer((req, res) => {
    req.resume();
    res.end("ok");
  });
  server.keepAliveTimeout = keepAliveSeconds * 1000;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, open: () => sockets.size };
}

it("closes a connection idle for idleSocketTimeout although the server's keep-alive hint allows 600 s", async () => {
  const { port, open } = await startServer(600);
  handler = new UndiciHttpHandler({ idleSocketTimeout: 50, socketMonitor: "off" });
  const target = { protocol: "http:", hostname: "127.0.0.1", port };
  const { response } = await handler.handle(requestTo(target, { path: "/" }));
  expect(response.headers["keep-alive"]).toBe("timeout=600");
  expect((await readAll(response.body)).toString()).toBe("ok");
  expect(open()).toBe(1);
  // Without the bound, undici keeps it for the hint (599 s): this wait would time out.
  await waitFor(() => open() === 0, "the idle connection to close", 3000);
  expect(handler.getPoolStats().origins[0].sockets.closed.idle_timeout).toBe(1);
});
