// =============================================================================
// server-control.mjs: fork load-server.mjs into its own process and talk to it, so that the measured (client)
// process only pays for client work: CPU, heap and native Timeout counts stay clean.
// =============================================================================

import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const SERVER_PATH = fileURLToPath(new URL("./load-server.mjs", import.meta.url));

/**
 * @typedef {object} LoadServer
 * @property {number} port
 * @property {string} origin                       e.g. "http://127.0.0.1:40123"
 * @property {string} h2Origin                     the same routes over cleartext HTTP/2
 * @property {number} h2TlsPort                    the same routes over HTTP/2 with TLS (for "localhost")
 * @property {() => Promise<void>} hold            hold /hold/* requests until release()
 * @property {() => Promise<number>} release       answer every held request and stop holding; resolves to how many
 * @property {() => Promise<{held:number, served:number, connections:number}>} stats
 * @property {() => Promise<void>} close
 */

/**
 * Start the load server in a child process on 127.0.0.1 (it must not inherit --cpu-prof, --expose-gc or loaders).
 * @returns {Promise<LoadServer>}
 */
export function startLoadServer() {
  const child = fork(SERVER_PATH, [], { stdio: ["ignore", "inherit", "inherit", "ipc"], execArgv: [] });
  let nextId = 1;
  /** @type {Map<number, (msg: any) => void>} */
  const waiting = new Map();
  const request = (type) =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.send({ type, id });
    });
  const close = () =>
    new Promise((done) => {
      if (child.exitCode !== null) return done();
      child.once("exit", () => done());
      child.send({ type: "close" });
    });
  return new Promise((resolve, reject) => {
    const onEarlyExit = (code) => reject(new Error(`load-server exited early with code ${code}`));
    child.once("exit", onEarlyExit);
    child.on("message", (msg) => {
      if (msg.type !== "ready") {
        waiting.get(msg.id)?.(msg);
        waiting.delete(msg.id);
        return;
      }
      child.off("exit", onEarlyExit);
      resolve({
        port: msg.port,
        origin: `http://127.0.0.1:${msg.port}`,
        h2Origin: `http://127.0.0.1:${msg.h2Port}`,
        h2TlsPort: msg.h2TlsPort,
        hold: () => request("hold").then(() => undefined),
        release: () => request("release").then((m) => m.count),
        stats: () => request("stats"),
        close,
      });
    });
  });
}

/**
 * Poll the server until `predicate(stats)` holds (bounded: throws after `timeoutMs`).
 * @param {LoadServer} server
 * @param {(s: {held:number, served:number, connections:number}) => boolean} predicate
 * @param {number} [timeoutMs]
 */
export async function waitForServer(server, predicate, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const s = await server.stats();
    if (predicate(s)) return s;
    if (performance.now() > deadline)
      throw new Error(`load-server: condition not reached in ${timeoutMs} ms (${JSON.stringify(s)})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
