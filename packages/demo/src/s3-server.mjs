/**
 * A tiny S3-compatible endpoint on 127.0.0.1 (port 0), just enough for the real `S3Client` to succeed:
 * path-style CreateBucket (`PUT /bucket`), PutObject (`PUT /bucket/key`), GetObject (`GET /bucket/key`) and
 * HeadObject (`HEAD /bucket/key`). Objects live in a Map in memory; nothing is checked (no signature
 * verification, no auth). Every response is delayed by a fixed `latencyMs`, so the pool's capacity is
 * predictable: `maxSockets / latencyMs` requests per millisecond.
 *
 * Costs: one Map lookup and one timer per request; bodies are buffered whole (the demo's objects are small).
 */
import { createHash } from "node:crypto";
import http from "node:http";

/**
 * @typedef {object} S3Server
 * @property {string} endpoint `http://127.0.0.1:<port>`
 * @property {{ region: string, endpoint: string, forcePathStyle: true, credentials: { accessKeyId: string, secretAccessKey: string }, maxAttempts: number }} clientConfig
 *   what an `S3Client` needs for this endpoint, but its request handler: path-style, fake static credentials (nothing
 *   is checked), one attempt (the demo's requests are never retried)
 * @property {number} latencyMs fixed service time added to every response, ms
 * @property {() => number} served number of responses sent
 * @property {() => Promise<void>} close closes the server and every connection
 */

/**
 * Starts the endpoint.
 * @param {{ latencyMs?: number }} [options] `latencyMs`: service time per request, ms (default 60).
 * @returns {Promise<S3Server>}
 */
export async function startS3Server(options = {}) {
  const latencyMs = options.latencyMs ?? 60;
  /** @type {Map<string, Set<string>>} */
  const buckets = new Map();
  /** @type {Map<string, { body: Buffer, etag: string, lastModified: string }>} */
  const objects = new Map();
  let served = 0;

  const server = http.createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      setTimeout(() => {
        served++;
        respond(req, res, Buffer.concat(chunks));
      }, latencyMs);
    });
  });
  // Real S3 keeps idle connections for a while; so do we, so held sockets are not released behind our back.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;

  /**
   * @param {http.IncomingMessage} req
   * @param {http.ServerResponse} res
   * @param {Buffer} body
   */
  function respond(req, res, body) {
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = url.pathname.split("/").filter((p) => p !== "");
    const bucket = decodeURIComponent(parts[0] ?? "");
    const key = parts.slice(1).map(decodeURIComponent).join("/");
    const requestId = `demo-${served}`;
    res.setHeader("x-amz-request-id", requestId);
    res.setHeader("x-amz-id-2", requestId);

    if (bucket === "") return error(res, 400, "InvalidRequest", "Path-style bucket expected.");
    if (key === "") {
      if (req.method === "PUT") {
        if (!buckets.has(bucket)) buckets.set(bucket, new Set());
        res.setHeader("Location", `/${bucket}`);
        res.setHeader("Content-Length", "0");
        res.writeHead(200);
        return res.end();
      }
      if (req.method === "HEAD") {
        res.writeHead(buckets.has(bucket) ? 200 : 404, { "Content-Length": "0" });
        return res.end();
      }
      return error(res, 405, "MethodNotAllowed", "Only CreateBucket and HeadBucket on a bucket.");
    }
    if (!buckets.has(bucket)) return error(res, 404, "NoSuchBucket", "The specified bucket does not exist.");
    const id = `${bucket}/${key}`;

    if (req.method === "PUT") {
      const etag = `"${createHash("md5").update(body).digest("hex")}"`;
      objects.set(id, { body, etag, lastModified: new Date().toUTCString() });
      buckets.get(bucket)?.add(key);
      res.setHeader("ETag", etag);
      res.setHeader("Content-Length", "0");
      res.writeHead(200);
      return res.end();
    }
    if (req.method === "GET" || req.method === "HEAD") {
      const obj = objects.get(id);
      if (obj === undefined) {
        if (req.method === "HEAD") {
          res.writeHead(404, { "Content-Length": "0" });
          return res.end();
        }
        return error(res, 404, "NoSuchKey", "The specified key does not exist.");
      }
      res.writeHead(200, {
        "Content-Type": "application/octet-stream",
        "Content-Length": String(obj.body.length),
        ETag: obj.etag,
        "Last-Modified": obj.lastModified,
        "Accept-Ranges": "bytes",
      });
      return req.method === "HEAD" ? res.end() : res.end(obj.body);
    }
    return error(res, 405, "MethodNotAllowed", `${req.method} is not supported by the demo endpoint.`);
  }

  /**
   * @param {http.ServerResponse} res
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  function error(res, status, code, message) {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
    res.writeHead(status, { "Content-Type": "application/xml", "Content-Length": String(Buffer.byteLength(xml)) });
    res.end(xml);
  }

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(undefined));
  });
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    clientConfig: {
      region: "us-east-1",
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: "DEMOACCESSKEY", secretAccessKey: "demo-secret-not-a-secret" },
      maxAttempts: 1,
    },
    latencyMs,
    served: () => served,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      }),
  };
}
