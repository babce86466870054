/**
 * The recorded story: pool samples every 250 ms, event markers (Sockeye saturation / recovery, upstream warnings
 * and lockout-silenced checks) and phase boundaries. Plain arrays; times are seconds since the story began.
 * About 240 samples for a one-minute run, so nothing here needs to be clever.
 */

/**
 * @typedef {object} Sample
 * @property {number} t seconds
 * @property {number} queued
 * @property {number} active
 * @property {number} idle
 * @property {number} unconsumed Sockeye's count of unread response bodies
 * @property {string} state Sockeye's saturation state
 */

/**
 * @typedef {object} Marker
 * @property {number} t seconds
 * @property {"sockeye-saturated" | "sockeye-recovered" | "upstream-warn" | "upstream-suppressed" | "upstream-dead" | "note"} kind
 * @property {string} label short text for the chart
 */

/**
 * @typedef {object} Phase
 * @property {number} index 1-based
 * @property {string} name
 * @property {number} start seconds
 * @property {number} end seconds (`NaN` while running)
 */

export class Timeline {
  constructor() {
    /** @type {Map<string, Sample[]>} per origin */
    this.samples = new Map();
    /** @type {Marker[]} */
    this.markers = [];
    /** @type {Phase[]} */
    this.phases = [];
  }

  /** @param {string} origin @param {Sample} sample */
  addSample(origin, sample) {
    let list = this.samples.get(origin);
    if (list === undefined) {
      list = [];
      this.samples.set(origin, list);
    }
    list.push(sample);
  }

  /** @param {Marker} marker */
  mark(marker) {
    this.markers.push(marker);
  }

  /** Ends the running phase (if any) and starts the next. @param {string} name @param {number} t */
  beginPhase(name, t) {
    this.endPhase(t);
    this.phases.push({ index: this.phases.length + 1, name, start: t, end: Number.NaN });
  }

  /** @param {number} t */
  endPhase(t) {
    const last = this.phases.at(-1);
    if (last !== undefined && Number.isNaN(last.end)) last.end = t;
  }

  /** First marker of `kind` inside [from, to). @param {Marker["kind"]} kind @param {number} from @param {number} to */
  first(kind, from, to) {
    return this.markers.find((m) => m.kind === kind && m.t >= from && m.t < to);
  }
}
