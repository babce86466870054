/**
 * Http2IdleWatch: the inactivity timeouts of one HTTP/2 handler (`requestTimeout` per stream, `sessionTimeout` per
 * session, the service default idle timeout) without a native timer per stream or per session.
 *
 * Upstream arms `stream.setTimeout()` per stream and `session.setTimeout()` per session: a native `Timeout` each,
 * refreshed on every frame. Here every watched stream or session has one `Deadline` on the handler's shared
 * `DeadlineScheduler` (created once per watcher; its `kind` is the watcher and its owner this watch, so firing needs
 * no closure), and activity restarts it through `touch()` (`DeadlineScheduler.refresh`: O(1), no allocation).
 *
 * Activity: a stream reports its OWN progress (its response headers, each DATA chunk received, each request-body
 * chunk written) and touches itself and its session, as Node's stream timer refreshes the session's; so traffic of
 * sibling streams on a shared session never keeps a silent stream alive. Getting a stream is activity of the session
 * only: a stream's limit counts from `handle()` through any wait for a session or a stream slot, as upstream's
 * `stream.setTimeout()`, armed at once, does. A session reports everything else Node sees on it (SETTINGS, frames of any stream, writes) the same way, at the moment it happens:
 * `Http2SessionEntry.observeActivity()` hooks Node's own activity method of the session, the one that refreshes
 * upstream's `session.setTimeout()`, so "inactivity" means what it means upstream (frames Node handles natively
 * without telling JavaScript, such as WINDOW_UPDATE or a PING without a `'ping'` listener, are not activity, for
 * upstream either).
 *
 * Unreported activity (a fallback): at the deadline, a watcher's `activity()` number is compared with the value seen
 * when it was last armed or touched, and a change re-arms it from that moment. A stream's number is its progress
 * counter and a hooked session's a constant, so neither ever differs; only a session on a Node without that
 * activity method falls back to its socket's byte counters, which can delay its timeout by up to one more period
 * (never shorten it).
 *
 * Cost: watch/unwatch/touch O(1) (arm/cancel/refresh a deadline; a touch re-reads the watcher's activity number: a
 * field). No sampling: nothing walks the watchers.
 * Precision: a timeout fires `limit` after the last activity, on the scheduler's native timer, i.e. as late as
 * upstream's native timers would, never early. A stream with nothing to observe yet (waiting for a session) counts
 * as inactive, so the timeout also bounds the wait.
 *
 * Event-loop stalls: an expiry collected more than `STALL_CONFIRM_MS` late is fired after the poll phase (see the
 * scheduler); activity reported during such a block re-arms the deadline first.
 */
import { Deadline, type DeadlineOwner, type DeadlineScheduler } from "@sockeye/pool-monitor/internal";

/** The byte counters the watch compares. @internal */
export interface ActivityCounter {
  bytesRead: number;
  bytesWritten: number;
}

/** What the watch needs from a watched object. @internal */
export interface Http2IdleWatcher {
  /** The watch's deadline, created on first watch and reused. */
  watchDeadline: Deadline<Http2IdleWatcher> | undefined;
  /** On the watch. */
  watched: boolean;
  /** `activity()` when the deadline was last armed (-1 = nothing to observe yet). */
  watchBytes: number;
  /** An activity number for traffic not reported through `touch()` (any change = activity), -1 for none yet. */
  activity(): number;
  /** Called once when the limit passed with no activity; the watcher is already unwatched. */
  onInactive(now: number): void;
}

/** `bytesRead + bytesWritten` of a socket, -1 without one. @internal */
export function socketBytes(counter: ActivityCounter | undefined): number {
  if (counter === undefined || counter === null) return -1;
  return (counter.bytesRead ?? 0) + (counter.bytesWritten ?? 0);
}

/** @internal */
export class Http2IdleWatch implements DeadlineOwner<Http2IdleWatcher> {
  private watching = 0;

  constructor(private readonly sharedScheduler: DeadlineScheduler) {}

  /** Whether nothing is watched. */
  get empty(): boolean {
    return this.watching === 0;
  }

  /** Starts watching `w` for `limitMs` of inactivity from `now`. Re-watching restarts the window. */
  watch(w: Http2IdleWatcher, limitMs: number, now: number): void {
    const d = (w.watchDeadline ??= new Deadline<Http2IdleWatcher>(this, w));
    if (!w.watched) this.watching++;
    w.watched = true;
    w.watchBytes = w.activity();
    this.sharedScheduler.arm(d, now, limitMs);
  }

  /** `w` made progress at `now`: its window restarts (and its activity number is re-read). O(1); no-op when not watched. */
  touch(w: Http2IdleWatcher, now: number): void {
    const d = w.watchDeadline;
    if (!w.watched || d === undefined) return;
    w.watchBytes = w.activity();
    this.sharedScheduler.refresh(d, now);
  }

  /** Stops watching `w`. O(1); no-op when not watched. */
  unwatch(w: Http2IdleWatcher): void {
    if (!w.watched) return;
    w.watched = false;
    if (this.watching > 0) this.watching--;
    if (w.watchDeadline !== undefined) this.sharedScheduler.disarm(w.watchDeadline);
  }

  /** Forgets every watcher (handler `destroy()`; the scheduler's `stop()` forgets the deadlines). */
  clear(): void {
    this.watching = 0;
  }

  /** DeadlineOwner: `w`'s limit passed with no reported activity (after the poll phase if the loop was blocked). */
  onDeadline(w: Http2IdleWatcher, now: number): void {
    if (!w.watched) return;
    const bytes = w.activity();
    if (bytes !== w.watchBytes) {
      // Traffic that was not reported through touch(): it happened some time during the window; count it now.
      w.watchBytes = bytes;
      this.sharedScheduler.arm(w.watchDeadline!, now, w.watchDeadline!.duration);
      return;
    }
    this.unwatch(w);
    w.onInactive(now);
  }
}
