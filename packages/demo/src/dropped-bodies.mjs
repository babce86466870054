/**
 * The dropped-body phase: a code path reads a `GetObject`'s metadata and drops `Body` unread, with no reference kept
 * (aws-sdk-js-v3 issues 6691, 4596, 4029, 3560, 5517, 7416). Run on two clients side by side, with the same
 * `maxSockets`: the demo's client on Sockeye's handler, and a twin on upstream's real `NodeHttpHandler`
 * (`@smithy/node-http-handler`). Each drops `count` bodies (one per socket), then sends one more request, a probe whose
 * body is read; a full garbage collection runs while the probes wait. A dropped body that is still on the wire pins
 * its socket: on upstream nothing frees it, so the probe waits until its deadline aborts it; Sockeye reclaims the
 * connection of a body that was collected unread, so its probe is served.
 *
 * Bounded: every probe is aborted after `deadlineMs`, and the twin is destroyed at the end (its pinned sockets closed).
 */
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler as UpstreamNodeHttpHandler } from "@smithy/node-http-handler";

/** The collection runs at the latest this long before the probes' deadline, so a freed client can serve in time. */
const COLLECT_MARGIN_MS = 1000;

/**
 * @typedef {object} ProbeResult
 * @property {boolean} served the probe's response arrived and its body was read in full
 * @property {number} ms from the probe's start to its end (served, or given up), ms
 * @property {number} endedAt `performance.now()` at its end, ms
 * @property {string} [error] the error's name when not served (`AbortError` at the deadline)
 */

/**
 * @typedef {object} DroppedBodiesResult
 * @property {ProbeResult} sockeye the probe on the Sockeye client
 * @property {ProbeResult} upstream the probe on upstream's twin
 * @property {number} gcAt `performance.now()` when the garbage collection started, ms
 * @property {number} upstreamSocketsInUse the twin's sockets in use when its probe ended
 */

/**
 * A client like `config` but on upstream's real handler with `maxSockets` sockets per origin.
 * @param {import("@aws-sdk/client-s3").S3ClientConfig} config the demo client's configuration, minus its handler
 * @param {number} maxSockets
 * @param {(message: string) => void} onWarn receives upstream's own `logger.warn` messages
 * @returns {S3Client}
 */
export function upstreamTwin(config, maxSockets, onWarn) {
  const ignore = () => {};
  return new S3Client({
    ...config,
    requestHandler: new UpstreamNodeHttpHandler({
      httpAgent: { maxSockets },
      logger: { debug: ignore, info: ignore, warn: onWarn, error: ignore },
    }),
  });
}

/**
 * The code path: one GetObject whose `ContentLength` is read and whose `Body` is dropped unread.
 * @param {S3Client} s3
 * @param {{ Bucket: string, Key: string }} object
 * @returns {Promise<number>} the object's size, bytes
 */
export async function readMetadataOnly(s3, object) {
  const { ContentLength } = await s3.send(new GetObjectCommand(object));
  return ContentLength ?? 0;
}

/**
 * One GetObject whose body is read, given up after `deadlineMs`.
 * @param {S3Client} s3
 * @param {{ Bucket: string, Key: string }} object
 * @param {number} deadlineMs
 * @returns {Promise<ProbeResult>}
 */
export async function probe(s3, object, deadlineMs) {
  const started = performance.now();
  const controller = new AbortController();
  const deadline = setTimeout(() => controller.abort(), deadlineMs);
  try {
    const res = await s3.send(new GetObjectCommand(object), { abortSignal: controller.signal });
    await res.Body?.transformToByteArray();
    const endedAt = performance.now();
    return { served: true, ms: endedAt - started, endedAt };
  } catch (error) {
    const endedAt = performance.now();
    return { served: false, ms: endedAt - started, endedAt, error: /** @type {Error} */ (error).name };
  } finally {
    clearTimeout(deadline);
  }
}

/**
 * Runs the phase on both clients, then destroys the twin.
 * @param {object} options
 * @param {S3Client} options.sockeye the client on Sockeye's handler
 * @param {S3Client} options.upstream the twin on upstream's handler (see `upstreamTwin`); destroyed at the end
 * @param {{ Bucket: string, Key: string }} options.dropped the object whose bodies are dropped: large enough to stay
 *   on the wire (a body that fits the client's buffers pins nothing)
 * @param {{ Bucket: string, Key: string }} options.probed the object the probes read
 * @param {number} options.count bodies dropped per client: its `maxSockets`
 * @param {number} options.deadlineMs each probe is aborted after this long, ms
 * @param {() => Promise<unknown>} options.beforeCollect resolves when the garbage collection should run (the demo
 *   waits for Sockeye's warning first); the wait also ends when Sockeye's probe settles, and 1 s before the deadline
 * @param {() => Promise<void>} options.collect runs a full garbage collection
 * @param {(step: "dropped" | "collecting", detail: { sizes: number[] }) => void} [options.onStep]
 * @returns {Promise<DroppedBodiesResult>}
 */
export async function runDroppedBodies({
  sockeye,
  upstream,
  dropped,
  probed,
  count,
  deadlineMs,
  beforeCollect,
  collect,
  onStep,
}) {
  const dropAll = (/** @type {S3Client} */ s3) =>
    Promise.all(Array.from({ length: count }, () => readMetadataOnly(s3, dropped)));
  try {
    const [sizes] = await Promise.all([dropAll(sockeye), dropAll(upstream)]);
    onStep?.("dropped", { sizes });
    const sockeyeProbe = probe(sockeye, probed, deadlineMs);
    const upstreamProbe = probe(upstream, probed, deadlineMs);
    /** @type {NodeJS.Timeout | undefined} */
    let latest;
    await Promise.race([
      beforeCollect(),
      sockeyeProbe,
      new Promise((resolve) => {
        latest = setTimeout(resolve, Math.max(0, deadlineMs - COLLECT_MARGIN_MS));
      }),
    ]);
    clearTimeout(latest);
    onStep?.("collecting", { sizes });
    const gcAt = performance.now();
    await collect();
    const [sockeyeResult, upstreamResult] = await Promise.all([sockeyeProbe, upstreamProbe]);
    return {
      sockeye: sockeyeResult,
      upstream: upstreamResult,
      gcAt,
      upstreamSocketsInUse: socketsInUse(upstream),
    };
  } finally {
    upstream.destroy();
  }
}

/**
 * Sockets in use on the twin's HTTP agent.
 * @param {S3Client} s3
 * @returns {number}
 */
function socketsInUse(s3) {
  const handler = /** @type {UpstreamNodeHttpHandler} */ (s3.config.requestHandler);
  const agent = /** @type {import("node:http").Agent | undefined} */ (handler.httpHandlerConfigs().httpAgent);
  let n = 0;
  for (const name in agent?.sockets ?? {}) n += agent?.sockets[name]?.length ?? 0;
  return n;
}
