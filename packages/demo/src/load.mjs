/**
 * Load shapes for the story, all driving a real `S3Client`:
 * - `runBatch`: a `Promise.all` of N GetObjects (a step input: the queue only drains after submission);
 * - `OpenLoop`: arrivals at a fixed rate, independent of completions (how real overload happens);
 * - `BodyHolder`: GetObjects whose bodies are deliberately never read nor destroyed (the unread-body leak).
 *
 * Every load is bounded in count and time. Requests that read their body consume it fully (`transformToByteArray`),
 * so their socket goes back to the pool.
 */
import { GetObjectCommand } from "@aws-sdk/client-s3";

/**
 * One GetObject whose body is read to the end.
 * @param {import("@aws-sdk/client-s3").S3Client} s3
 * @param {{ Bucket: string, Key: string }} object
 * @returns {Promise<void>}
 */
export async function getAndRead(s3, object) {
  const res = await s3.send(new GetObjectCommand(object));
  await res.Body?.transformToByteArray();
}

/**
 * `Promise.all` of `count` GetObjects, bodies read.
 * @param {import("@aws-sdk/client-s3").S3Client} s3
 * @param {{ Bucket: string, Key: string }} object
 * @param {number} count
 * @returns {Promise<{ durationMs: number, errors: number, firstDoneMs: number, lastDoneMs: number }>} durations in ms;
 *   `firstDoneMs` / `lastDoneMs`: when the first / last request finished, relative to the start
 */
export async function runBatch(s3, object, count) {
  const started = performance.now();
  let errors = 0;
  let firstDone = Number.NaN;
  let lastDone = Number.NaN;
  const finished = () => {
    lastDone = performance.now();
    if (Number.isNaN(firstDone)) firstDone = lastDone;
  };
  await Promise.all(
    Array.from({ length: count }, () =>
      getAndRead(s3, object).then(finished, () => {
        errors++;
        finished();
      })
    )
  );
  return {
    durationMs: performance.now() - started,
    errors,
    firstDoneMs: firstDone - started,
    lastDoneMs: lastDone - started,
  };
}

/**
 * Open-loop arrivals: starts `ratePerSecond` GetObjects per second (evenly spaced, caught up on each 5 ms tick)
 * until `stop()` or `maxDurationMs`, whichever comes first. Completions do not slow arrivals down.
 */
export class OpenLoop {
  /**
   * @param {import("@aws-sdk/client-s3").S3Client} s3
   * @param {{ Bucket: string, Key: string }} object
   * @param {number} ratePerSecond
   * @param {number} maxDurationMs hard bound on the arrival window
   */
  constructor(s3, object, ratePerSecond, maxDurationMs) {
    this.s3 = s3;
    this.object = object;
    this.rate = ratePerSecond;
    this.started = 0;
    this.completed = 0;
    this.errors = 0;
    /** @type {Set<Promise<void>>} */
    this.inFlight = new Set();
    this.t0 = performance.now();
    this.deadline = this.t0 + maxDurationMs;
    this.timer = setInterval(() => this.tick(), 5);
    this.tick();
  }

  /** @private */
  tick() {
    const now = performance.now();
    if (now >= this.deadline) {
      this.stop();
      return;
    }
    const due = Math.floor(((now - this.t0) / 1000) * this.rate) + 1;
    while (this.started < due) {
      this.started++;
      const p = getAndRead(this.s3, this.object).then(
        () => {
          this.completed++;
        },
        () => {
          this.errors++;
        }
      );
      this.inFlight.add(p);
      p.finally(() => this.inFlight.delete(p));
    }
  }

  /** Stops arrivals (requests already started continue). */
  stop() {
    clearInterval(this.timer);
  }

  /** Resolves when every request started so far has settled. */
  async drain() {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}

/**
 * Issues GetObjects and keeps their bodies without reading or destroying them: each held body pins its socket.
 */
export class BodyHolder {
  /**
   * @param {import("@aws-sdk/client-s3").S3Client} s3
   * @param {{ Bucket: string, Key: string }} object
   */
  constructor(s3, object) {
    this.s3 = s3;
    this.object = object;
    /** @type {Array<{ destroy: () => void }>} */
    this.held = [];
    this.pending = 0;
    this.errors = 0;
    this.released = false;
  }

  /** Starts one GetObject whose body will be held. */
  leakOne() {
    this.pending++;
    this.s3.send(new GetObjectCommand(this.object)).then(
      (res) => {
        this.pending--;
        const body = /** @type {any} */ (res.Body);
        if (body === undefined) return;
        // Deliberately neither read nor destroyed: the response keeps its socket (unless releaseAll() already ran).
        if (this.released) body.destroy();
        else this.held.push(body);
      },
      () => {
        this.pending--;
        this.errors++;
      }
    );
  }

  /**
   * Destroys every held body, which releases (closes) its socket; bodies of requests still pending are destroyed as
   * they arrive. @returns {number} how many were destroyed now
   */
  releaseAll() {
    this.released = true;
    const n = this.held.length;
    for (const body of this.held) body.destroy();
    this.held = [];
    return n;
  }
}
