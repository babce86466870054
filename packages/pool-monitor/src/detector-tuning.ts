/**
 * The saturation detector's fixed tuning: rule thresholds and decay rates that are not options. Kept apart from
 * `saturation-detector.ts` so the message formatter can name them without importing the detector (no import cycle).
 */

/** Number of troughs (local minima of the queue floor) the rising-troughs rule compares. @public */
export const TROUGHS = 3;
/** A gap longer than this many sample periods clears the window. @public */
export const GAP_PERIODS = 3;
/** A held request is stalled past this multiple of the origin's expected hold time. @public */
export const STALL_HOLD_FACTOR = 4;
/** Per-sample decay of the expected hold time (a decaying maximum; half-life ~34 samples). @public */
export const HOLD_DECAY = 0.98;
/** Consecutive samples a different cause must be seen on before the episode's cause changes. @public */
export const CAUSE_CONFIRM_SAMPLES = 2;
/** Headroom applied to the sockets needed in `recommendedMaxSockets`. @public */
export const SIZING_HEADROOM = 1.25;
/** Default of `stallAfterMs`, ms: longer than SQS's maximum long poll (20 s). @public */
export const DEFAULT_STALL_AFTER_MS = 30_000;
