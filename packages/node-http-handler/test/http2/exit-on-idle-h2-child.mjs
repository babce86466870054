/**
 * Child of exit-on-idle-h2.integ.spec.ts: loads the BUILT handler package, makes requests (pooled and isolated) to
 * the parent's h2 server with every deadline option set, reads the bodies and returns WITHOUT destroy(). The process
 * must exit on its own: idle pooled sessions are unref'd and the shared interval stops when nothing is in flight.
 * Env: H2_PORT, H2_CA (PEM path), HANDLER_DIST (path of dist/index.js).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { NodeHttp2Handler } = require(process.env.HANDLER_DIST);
const handler = new NodeHttp2Handler({
  nodeHttp2ConnectOptions: { ca: readFileSync(process.env.H2_CA) },
  requestTimeout: 60_000,
  sessionTimeout: 120_000,
  connectionTimeout: 30_000,
});
const request = (path) => ({
  protocol: "https:",
  hostname: "localhost",
  port: Number(process.env.H2_PORT),
  method: "GET",
  path,
  headers: {},
});
// Read with 'data'/'end' events, as the SDK's stream collector does: on Node 24, `for await` over an Http2Stream
// whose body has fully arrived before it is read rejects with ERR_STREAM_PREMATURE_CLOSE (upstream's body is the
// same raw stream, so it behaves the same).
function read(body) {
  return new Promise((resolve, reject) => {
    let n = 0;
    body.on("data", (chunk) => {
      n += chunk.length;
    });
    body.on("end", () => resolve(n));
    body.on("error", reject);
  });
}
const results = await Promise.all(
  Array.from({ length: 10 }, (_, i) => handler.handle(request("/echo"), { isEventStream: i % 3 === 0 }))
);
let bytes = 0;
for (const { response } of results) bytes += await read(response.body);
process.stdout.write(`done ${results.length} ${bytes > 0}\n`);
