/**
 * RequestCore: what every transport's request object shares: the promise and its single `finish()`, abort, counting
 * and `request:finished`, and the deadlines of its `DeadlinePlan`. A transport's request reports phases
 * (`enterPhase`), activity (`lastActive = now`), connections and the end, and implements `fail()` and `wireFacts()`.
 *
 * Deadlines: ONE `Deadline` node per request, armed for the earliest due entry; an idle entry is due `ms` after
 * `lastActive`. Activity and ending an entry do not touch the scheduler: when the node comes due it fires the due
 * entry or re-arms for the earliest left. So deadlines that all end in time cost one arm and one disarm.
 */
import type { Readable } from "node:stream";
import { buildAbortError } from "./request-errors";
import type { DeadlineContext, DeadlineKind } from "./deadline-kind";
import { Deadline, type DeadlineOwner } from "./deadline-scheduler";
import { requestFinishedChannel } from "./diagnostics";
import type { OriginTelemetry, RequestOutcome } from "./origin-telemetry";
import type { DeadlinePlan } from "./request-core-plan";
import { type PhaseOf, RequestPhase } from "./request-core-phase";
import { requestFinishedEvent, type WireFacts } from "./request-finished";
import type { TelemetryCore } from "./telemetry-core";
import { timing } from "./timing";

/** An abort signal as the SDK passes it: a DOM `AbortSignal` or Smithy's legacy `{ aborted, onabort }`. @internal */
export interface AbortSignalLike {
  aborted: boolean;
  reason?: unknown;
  addEventListener?: (type: "abort", listener: { handleEvent(): void }, options?: { once?: boolean }) => void;
  removeEventListener?: (type: "abort", listener: { handleEvent(): void }) => void;
  onabort?: ((this: any, ...args: any[]) => any) | null;
}

const kRequest = Symbol("sockeye.request");
type Owned = AbortSignalLike & { [kRequest]?: RequestCore<any> };

/** The legacy signal's `onabort`: one shared function, the request found on the signal. */
function onLegacyAbort(this: Owned): void {
  this[kRequest]?.handleEvent();
}

/** See the file header. `O`: the transport's origin state. @internal */
export abstract class RequestCore<O extends OriginTelemetry = OriginTelemetry>
  implements DeadlineOwner<DeadlineKind>, DeadlineContext
{
  readonly begunAt: number;
  // BodySource's links to the body handed out (`response-body.ts`).
  heldBody: Readable | undefined = undefined;
  bodyRef: WeakRef<Readable> | undefined = undefined;
  phase: PhaseOf = RequestPhase.Created;
  settled = false;
  isFinished = false;
  /** How it is counted when it finishes; the first outcome noted wins unless the transport overwrites it. */
  outcome: RequestOutcome | undefined = undefined;
  /** The error its caller saw (the rejection, or the body's error), for `request:finished`. */
  failure: unknown = undefined;
  /** It waited behind others (`request:enqueued` was emitted). */
  wasQueued = false;
  /** `timing.now()` when it got its connection; -1 while it holds none. */
  heldSince = -1;
  /** It got a connection at some point (else its whole wait is `queuedMs`). */
  everHeld = false;
  /** `timing.now()` of the last activity: idle deadlines are due `ms` after it. A transport writes it directly. */
  lastActive = 0;
  /** Idle deadlines are suspended (a response body paused for its reader). */
  idlePaused = false;
  private settleResolve: ((value: any) => void) | undefined = undefined;
  private settleReject: ((reason: unknown) => void) | undefined = undefined;
  private deadline: Deadline<DeadlineKind> | undefined = undefined;
  /** Per plan entry: -1 when not armed, else the time it was armed at (an idle entry runs from `lastActive`). */
  private dues: number[] | undefined = undefined;
  private abortAttached = false;
  /** Counted started (`countStarted`): only then is it counted acquired, released and finished. */
  private counted = false;

  constructor(
    readonly plan: DeadlinePlan<any>,
    readonly monitor: TelemetryCore<O> | undefined,
    readonly telemetry: O | undefined,
    readonly signal: AbortSignalLike | undefined
  ) {
    this.begunAt = timing.now();
  }

  abstract get errorPrefix(): string;
  abstract get waitsFor(): "socket" | "connection";
  /** Tears the exchange down after a failure (abort, deadline, error): reject or fail the body, then `finish()`. */
  abstract fail(error: Error, outcome: RequestOutcome): void;
  /** What only the wire knows, for `request:finished` (called only when someone listens). */
  protected abstract wireFacts(): WireFacts;

  describeQueue(): string {
    return "";
  }

  connectionDetail(): string | undefined {
    return undefined;
  }

  /** Starts the request: counts it started (if its telemetry is known), listens for abort, arms `Created` deadlines. */
  protected begin(resolve: (value: any) => void, reject: (reason: unknown) => void): void {
    this.settleResolve = resolve;
    this.settleReject = reject;
    this.countStarted();
    const signal = this.signal;
    if (signal !== undefined && signal !== null) {
      this.abortAttached = true;
      if (typeof signal.addEventListener === "function") signal.addEventListener("abort", this, { once: true });
      else {
        (signal as Owned)[kRequest] = this;
        signal.onabort = onLegacyAbort;
      }
    }
    this.armPhase(-1, RequestPhase.Created, this.begunAt);
  }

  /** Counts it started (once): from `begin()`, or HTTP/1's dispatch (never for an unpooled request). */
  protected countStarted(): void {
    const m = this.monitor;
    if (this.counted || m === undefined || this.telemetry === undefined || m.coreDestroyed) return;
    this.counted = true;
    m.started(this.telemetry);
  }

  /** Its monitor while it counts this request (counted started, not destroyed since). */
  private get counter(): TelemetryCore<O> | undefined {
    return this.counted && !this.monitor!.coreDestroyed ? this.monitor : undefined;
  }

  /** It waits behind others: `Queued`, counted enqueued. */
  protected enterQueue(now: number): void {
    this.wasQueued = true;
    this.enterPhase(RequestPhase.Queued, now);
    const m = this.monitor;
    if (m !== undefined && this.telemetry !== undefined && !m.coreDestroyed) m.enqueued(this.telemetry);
  }

  /** Moves to `phase` at `now` (no-op unless later than the current one): deadlines armed and ended by the rules. */
  enterPhase(phase: PhaseOf, now: number): void {
    const prev = this.phase;
    if (phase <= prev) return;
    this.phase = phase;
    // The phases passed, (prev, phase], as bits: nothing to do unless an entry arms or ends at one of them.
    if ((this.plan.phaseMask & ((2 << phase) - (2 << prev))) !== 0) this.armPhase(prev, phase, now);
  }

  /** Counts the connection given at `now` (`reused`: it carried a request before). */
  protected countAcquired(now: number, reused: boolean): void {
    this.heldSince = now;
    this.everHeld = true;
    this.counter?.acquired(this.telemetry!, now - this.begunAt, reused, this.wasQueued);
  }

  /** Counts the connection given back at `now` (no-op unless one is held). */
  protected countReleased(now: number): void {
    if (this.heldSince < 0) return;
    this.counter?.released(this.telemetry!, now - this.heldSince);
    this.heldSince = -1;
  }

  /** Resolves the promise with `value` (once): `Headers`. The outcome stays unnoted (`finish()` gets it). */
  protected resolveWith(value: unknown, now: number): void {
    if (this.settled) return;
    this.settled = true;
    const resolve = this.settleResolve!;
    this.settleResolve = this.settleReject = undefined;
    this.enterPhase(RequestPhase.Headers, now);
    resolve(value);
  }

  /** Rejects the promise with `error` (once; the first cause stands), noting `outcome` if none was. */
  protected rejectWith(error: unknown, outcome: RequestOutcome): void {
    if (this.settled) return;
    this.settled = true;
    const reject = this.settleReject!;
    this.settleResolve = this.settleReject = undefined;
    this.failure = error;
    if (this.outcome === undefined) this.outcome = outcome;
    reject(error);
  }

  handleEvent(): void {
    if (this.isFinished) return;
    this.detachAbort();
    this.fail(buildAbortError(this.signal), "aborted");
  }

  /**
   * The single way out, idempotent, after the transport's release: rejects a pending promise, ends deadlines and the
   * abort listener, counts the outcome (a noted one wins over the argument), publishes `request:finished`.
   */
  protected finish(outcome: RequestOutcome, unsettled?: Error): void {
    if (this.isFinished) return;
    this.isFinished = true;
    if (!this.settled)
      this.rejectWith(unsettled ?? new Error(`${this.errorPrefix} - the request ended without a response.`), "failed");
    const final = this.outcome ?? outcome;
    this.outcome = final;
    const d = this.deadline;
    if (d !== undefined) this.plan.scheduler.disarm(d);
    this.phase = RequestPhase.Done;
    this.detachAbort();
    const m = this.monitor;
    const o = this.telemetry;
    if (m === undefined || o === undefined || m.coreDestroyed) return;
    if (this.counted) m.finished(o, final);
    if (m.wants(requestFinishedChannel)) {
      const durationMs = timing.now() - this.begunAt;
      const facts = this.wireFacts();
      m.emit(
        requestFinishedEvent({
          ...facts,
          origin: o.origin,
          outcome: final,
          error: this.failure ?? facts.error,
          durationMs,
          queuedMs: this.wasQueued && !this.everHeld ? durationMs : null,
        }),
        requestFinishedChannel
      );
    }
  }

  bodyCollected(): void {
    if (this.isFinished || (this.heldBody === undefined && this.bodyRef === undefined)) return;
    this.heldBody = this.bodyRef = undefined;
    const m = this.monitor;
    if (m !== undefined && this.telemetry !== undefined && !m.coreDestroyed) m.bodyReclaimed(this.telemetry);
    this.releaseCollectedBody();
  }

  /** Tears down the exchange whose body was collected, freeing its connection or stream (`bodyCollected()`). */
  protected releaseCollectedBody(): void {}

  private detachAbort(): void {
    if (!this.abortAttached) return;
    this.abortAttached = false;
    const signal = this.signal as Owned;
    if (typeof signal.removeEventListener === "function") signal.removeEventListener("abort", this);
    else if (signal[kRequest] === this) {
      signal[kRequest] = undefined;
      if (signal.onabort === onLegacyAbort) signal.onabort = null;
    }
  }

  // ---- deadlines (see the header) ------------------------------------------------------------------------------

  /** Arms `kind` from `now` (a kind the transport arms itself); no-op when the plan does not configure it. */
  armDeadline(kind: DeadlineKind, now: number): void {
    const i = this.plan.indexOf(kind);
    if (i < 0 || this.isFinished) return;
    if (this.plan.entries[i].idle) this.lastActive = now;
    this.duesOf()[i] = now;
    this.schedule();
  }

  /** Ends `kind` before its phase (no scheduler work: see the header). */
  endDeadline(kind: DeadlineKind): void {
    if (this.dues !== undefined) this.endEntry(this.plan.indexOf(kind));
  }

  /** The caller started reading the body: ends `unreadBodyTimeout`. Cheap enough to call on every read. */
  bodyReadStarted(): void {
    this.endEntry(this.plan.unreadBodyIndex);
  }

  private endEntry(i: number): void {
    const dues = this.dues;
    if (i < 0 || dues === undefined || dues[i] < 0) return;
    dues[i] = -1;
    if (!this.isFinished) this.schedule();
  }

  deadlineArmed(kind: DeadlineKind): boolean {
    const i = this.plan.indexOf(kind);
    return i >= 0 && this.dues !== undefined && this.dues[i] >= 0;
  }

  /** When `kind` is due (`timing.now()` ms; an idle one from the last activity), -1 when it is not armed. */
  deadlineDueAt(kind: DeadlineKind): number {
    const i = this.plan.indexOf(kind);
    if (i < 0 || this.dues === undefined || this.dues[i] < 0) return -1;
    const e = this.plan.entries[i];
    return (e.idle ? this.lastActive : this.dues[i]) + e.ms;
  }

  pauseIdle(): void {
    if (this.idlePaused) return;
    this.idlePaused = true;
    if (this.dues !== undefined && !this.isFinished) this.schedule();
  }

  resumeIdle(now: number): void {
    if (!this.idlePaused) return;
    this.idlePaused = false;
    this.lastActive = now;
    if (this.dues !== undefined && !this.isFinished) this.schedule();
  }

  /** DeadlineOwner: the node came due: fire the entry that is due, else re-arm for the earliest. */
  onDeadline(_kind: DeadlineKind, now: number): void {
    const dues = this.dues;
    if (this.isFinished || dues === undefined) return;
    const entries = this.plan.entries;
    for (let i = 0; i < entries.length; i++) {
      const from = this.entryStart(dues, i);
      if (from < 0 || from + entries[i].ms > now) continue;
      dues[i] = -1;
      this.deadlineExpired(entries[i].kind, entries[i].ms, now);
      break;
    }
    if (!this.isFinished) this.schedule();
  }

  /** When entry `i`'s time runs from (an idle one: the last activity); -1 when it is not armed, or idle and paused. */
  private entryStart(dues: number[], i: number): number {
    const start = dues[i];
    if (start < 0 || !this.plan.entries[i].idle) return start;
    return this.idlePaused ? -1 : this.lastActive;
  }

  /** `kind` (`ms` long) expired at `now`: rejects with its rule's error (a transport overrides it for some kinds). */
  protected deadlineExpired(kind: DeadlineKind, ms: number, now: number): void {
    const error = this.deadlineError(kind, ms, now);
    if (error !== undefined) this.fail(error, "timed_out");
  }

  /** The error of `kind`'s rule (`ms` long, expired at `now`); `undefined`: the rule only tells the transport. */
  protected deadlineError(kind: DeadlineKind, ms: number, now: number): Error | undefined {
    return this.plan.entries[this.plan.indexOf(kind)].rule.error(this, ms, now);
  }

  private duesOf(): number[] {
    let dues = this.dues;
    if (dues === undefined) {
      dues = this.dues = [];
      for (let i = 0; i < this.plan.entries.length; i++) dues.push(-1);
    }
    return dues;
  }

  /** Entries armed and ended on the way from phase `prev` to `phase`. */
  private armPhase(prev: number, phase: number, now: number): void {
    const entries = this.plan.entries;
    let changed = false;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (e.endAt <= phase) {
        const dues = this.dues;
        if (dues !== undefined && dues[i] >= 0) {
          dues[i] = -1;
          changed = true;
        }
      } else if (e.armAt > prev && e.armAt <= phase) {
        this.duesOf()[i] = now;
        if (e.idle) this.lastActive = now;
        changed = true;
      }
    }
    if (changed) this.schedule();
  }

  /** Makes the node due no later than the earliest armed entry (an earlier one re-arms then); disarms it if none. */
  private schedule(): void {
    const dues = this.dues!;
    const entries = this.plan.entries;
    let best = -1;
    let bestAt = Number.POSITIVE_INFINITY;
    let bestFrom = 0;
    for (let i = 0; i < entries.length; i++) {
      const from = this.entryStart(dues, i);
      if (from >= 0 && from + entries[i].ms < bestAt) {
        best = i;
        bestAt = from + entries[i].ms;
        bestFrom = from;
      }
    }
    const scheduler = this.plan.scheduler;
    let d = this.deadline;
    if (best < 0) {
      if (d !== undefined) scheduler.disarm(d);
      return;
    }
    if (d === undefined) d = this.deadline = new Deadline<DeadlineKind>(this, this.plan.nodeKind!);
    else if (d.armed && d.at <= bestAt) return;
    scheduler.arm(d, bestFrom, entries[best].ms);
  }
}
