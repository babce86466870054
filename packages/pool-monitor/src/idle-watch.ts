/**
 * IdleWatch: one inactivity timeout on the handler's `DeadlineScheduler`, restarted lazily. Activity only writes
 * `lastActive`; when the deadline comes due it is re-armed at `lastActive + limitMs` if there was activity since,
 * else the target is told. It fires when a timer restarted at every event would, for one scheduler touch per period.
 */
import { Deadline, type DeadlineOwner, type DeadlineScheduler } from "./deadline-scheduler";

/** What an `IdleWatch` tells when its limit passed with no activity. @internal */
export interface IdleTarget {
  /** The limit passed with no activity at `now`; the watch is stopped (`start()` again to go on watching). */
  onIdle(now: number): void;
}

/** See the file header. One per watched session or socket, reused for its whole life. @internal */
export class IdleWatch implements DeadlineOwner<undefined> {
  /** `timing.now()` of the last activity, ms: a transport's activity hook writes it directly. */
  lastActive = 0;
  /** The limit the watch was last started with, ms. */
  limitMs = 0;
  private readonly deadline = new Deadline<undefined>(this, undefined);

  /** @param target - told when the limit passed; may be replaced while the watch is stopped (a reused watch). */
  constructor(
    private readonly scheduler: DeadlineScheduler,
    public target: IdleTarget
  ) {}

  get watching(): boolean {
    return this.deadline.armed;
  }

  /** Watches for `limitMs` of inactivity from `now` (restarts a running watch). */
  start(limitMs: number, now: number): void {
    this.lastActive = now;
    this.limitMs = limitMs;
    this.scheduler.arm(this.deadline, now, limitMs);
  }

  stop(): void {
    this.scheduler.disarm(this.deadline);
  }

  /** DeadlineOwner: re-arms from the last activity, or tells the target. */
  onDeadline(_kind: undefined, now: number): void {
    const last = this.lastActive;
    if (last + this.limitMs > now) this.scheduler.arm(this.deadline, last, this.limitMs);
    else this.target.onIdle(now);
  }
}
