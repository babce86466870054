import { DEADLINE_RULES, DeadlineKind, type DeadlineKindOf, type DeadlineRule, type Transport } from "./deadline-kind";
import type { DeadlineScheduler } from "./deadline-scheduler";
import type { PhaseOf } from "./request-core-phase";

/** One configured deadline of a plan: its kind's rule with the duration. @internal */
export interface PlanEntry {
  readonly kind: DeadlineKind;
  readonly ms: number;
  /** The arming phase; -1: armed by the transport (`RequestCore.armDeadline`). */
  readonly armAt: number;
  readonly endAt: PhaseOf;
  readonly idle: boolean;
  readonly rule: DeadlineRule;
}

/** The deadlines of one resolved config, shared by its requests: configured kinds in the rules' order. @internal */
export class DeadlinePlan<T extends Transport = Transport> {
  readonly entries: readonly PlanEntry[];
  /** The kind of each request's one `Deadline` node (every kind holds the loop while armed). */
  readonly nodeKind: DeadlineKind | undefined;
  /** Bit `p` set: some entry is armed or ended at phase `p` (other phase changes skip the entries). */
  readonly phaseMask: number;
  /** The index of the `unread_body` entry, -1 when `unreadBodyTimeout` is off (read per body read: kept here). */
  readonly unreadBodyIndex: number;

  /**
   * @param durations - each kind's duration in ms (`undefined`, 0 or non-finite: not configured).
   * @param transportArmed - kinds this transport arms itself for some requests (e.g. undici's `socketTimeout`).
   */
  constructor(
    readonly scheduler: DeadlineScheduler,
    durations: Record<DeadlineKindOf<T>, number | undefined>,
    transportArmed: readonly DeadlineKindOf<T>[] = []
  ) {
    const entries: PlanEntry[] = [];
    const ms = durations as Partial<Record<DeadlineKind, number | undefined>>;
    for (const kind of Object.keys(DEADLINE_RULES) as DeadlineKind[]) {
      const d = ms[kind];
      if (d === undefined || !(d > 0) || d === Number.POSITIVE_INFINITY) continue;
      const rule: DeadlineRule = DEADLINE_RULES[kind];
      const manual = rule.armAt === null || (transportArmed as readonly DeadlineKind[]).includes(kind);
      entries.push({
        kind,
        ms: d,
        armAt: manual ? -1 : (rule.armAt as number),
        endAt: rule.endAt,
        idle: rule.idle,
        rule,
      });
    }
    this.entries = entries;
    let mask = 0;
    for (const e of entries) mask |= (e.armAt >= 0 ? 1 << e.armAt : 0) | (1 << e.endAt);
    this.phaseMask = mask;
    this.nodeKind = entries[0]?.kind;
    this.unreadBodyIndex = this.indexOf(DeadlineKind.UnreadBody);
  }

  /** The index of `kind`'s entry, -1 when it is not configured. */
  indexOf(kind: DeadlineKind): number {
    const entries = this.entries;
    for (let i = 0; i < entries.length; i++) if (entries[i].kind === kind) return i;
    return -1;
  }
}
