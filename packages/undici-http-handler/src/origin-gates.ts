/**
 * OriginGates: the handler's `OriginGate`s by exact origin (`scheme://host:port`), kept only while they hold
 * something.
 *
 * Why: a client of many hosts (S3 buckets, one host each) would otherwise keep a gate for every origin it ever
 * reached. An idle gate tells the registry (`gateIdle()`), which drops it at once.
 *
 *   byOrigin: "http://bucket-7.s3.test:80" ─► gate (inUse 2, queued 5)     busy gates only, plus
 *   pinned:   the gate of the handler's one-entry origin cache (`UndiciHttpHandler.originOf()`)
 *
 * The pinned gate is never dropped: the handler hands it out without a lookup, so a dropped one would count
 * requests nobody drains. So one endpoint keeps its gate, allocation-free, and many origins cost O(busy origins).
 *
 * Costs: `pinGate()` is one `Map` lookup, on an origin-cache miss only; `gateIdle()` one comparison, plus an O(1)
 * `Map` delete when it drops.
 */
import type { ConnectingSockets } from "./connecting-sockets";
import type { DispatcherLike } from "./dispatcher-like";
import { OriginGate, type OriginGateRegistry } from "./origin-gate";
import type { OriginPoolState } from "./origin-pool-state";

/** @internal */
export class OriginGates implements OriginGateRegistry {
  /** The gates that hold something, and the pinned one. */
  readonly byOrigin = new Map<string, OriginGate>();
  /** The gate of the handler's cached origin (see the header). */
  private pinned: OriginGate | undefined = undefined;

  constructor(private readonly connecting: ConnectingSockets) {}

  /** The gate of `origin` (created if it has none), pinned; the gate pinned before is dropped if idle. */
  pinGate(
    origin: string,
    limit: number | null,
    o: OriginPoolState | undefined,
    dispatchTo: DispatcherLike | undefined
  ): OriginGate {
    let gate = this.byOrigin.get(origin);
    if (gate === undefined) {
      if (o !== undefined && o.origin === origin) {
        gate = new OriginGate(origin, limit, this.connecting, o.waitList);
      } else {
        gate = new OriginGate(origin, limit, this.connecting);
        if (o !== undefined) {
          o.gateQueues.set(origin, gate.fifoQueue);
          gate.queueEntry = o;
        }
      }
      if (o !== undefined) o.gatedHere = true;
      gate.dispatchTo = dispatchTo;
      gate.gateRegistry = this;
      this.byOrigin.set(origin, gate);
    }
    const previous = this.pinned;
    this.pinned = gate;
    if (previous !== undefined && previous !== gate) this.gateIdle(previous);
    return gate;
  }

  /** No gate is pinned any more (the origin cache was reset); the one pinned before is dropped if idle. */
  unpin(): void {
    const previous = this.pinned;
    this.pinned = undefined;
    if (previous !== undefined) this.gateIdle(previous);
  }

  /** `gate` has nothing in use or queued: dropped, unless pinned. O(1). */
  gateIdle(gate: OriginGate): void {
    if (gate === this.pinned || !gate.gateUnused) return;
    this.drop(gate);
  }

  /** Drops every gate (and its `gateQueues` entry) and unpins. */
  clear(): void {
    for (const gate of this.byOrigin.values()) this.drop(gate);
    this.byOrigin.clear();
    this.pinned = undefined;
  }

  private drop(gate: OriginGate): void {
    if (gate.gateRegistry !== this) return;
    gate.gateRegistry = undefined;
    const origin = gate.gateOrigin;
    if (this.byOrigin.get(origin) === gate) this.byOrigin.delete(origin);
    const entry = gate.queueEntry;
    if (entry !== undefined) {
      gate.queueEntry = undefined;
      if (entry.gateQueues.get(origin) === gate.fifoQueue) entry.gateQueues.delete(origin);
    }
  }
}
