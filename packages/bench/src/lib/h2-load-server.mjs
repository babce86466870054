// =============================================================================
// h2-load-server.mjs: the HTTP/2 load server of bench-h2.mjs, run in a SEPARATE process (fork) so that its CPU is
// never counted as the clients'. Cleartext HTTP/2 (prior knowledge) on 127.0.0.1, port 0, so TLS cost does not
// dilute the handler overhead being compared; `maxConcurrentStreams: 4096` so c=1000 fits on one session.
// Every stream gets 200 with a 128-byte body. Sends { port } to the parent once listening.
// =============================================================================
import http2 from "node:http2";

const BODY = Buffer.alloc(128, 120);
const server = http2.createServer({ settings: { maxConcurrentStreams: 4096 } });
server.on("stream", (stream) => {
  stream.on("error", () => {});
  stream.resume();
  stream.respond({ ":status": 200, "content-length": String(BODY.length) });
  stream.end(BODY);
});
server.on("session", (session) => session.on("error", () => {}));
server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
process.on("message", (m) => {
  if (m === "close") server.close(() => process.exit(0));
});
process.on("disconnect", () => process.exit(0));
