/**
 * A minimal S3-compatible endpoint on 127.0.0.1 (port 0) for the examples and their tests: path-style PutObject
 * (stores the body), GetObject and HeadObject (return it), anything else 200 with an empty body. No auth check.
 * Lets `node examples/*.mjs` run without an AWS account or network.
 */
import http from "node:http";

/**
 * Starts the endpoint.
 * @returns {Promise<{ endpoint: string, close(): Promise<void> }>} `endpoint` is `http://127.0.0.1:<port>`
 */
export async function startLocalS3() {
  /** @type {Map<string, Buffer>} */
  const objects = new Map();
  const server = http.createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const key = (req.url ?? "/").split("?")[0];
      if (req.method === "PUT") {
        objects.set(key, Buffer.concat(chunks));
        res.writeHead(200, { etag: '"0"', "content-length": 0 }).end();
        return;
      }
      const body = objects.get(key);
      if ((req.method === "GET" || req.method === "HEAD") && body !== undefined) {
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length, etag: '"0"' });
        res.end(req.method === "GET" ? body : undefined);
        return;
      }
      res.writeHead(200, { "content-length": 0 }).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
