/** Option rules: each option's check, in order (the first bad value throws); `null` counts as unset. Never per request. */

import { describeValue, invalidOption } from "./invalid-option";

/**
 * One option's rule: `accepts` says whether a set value is valid (it may throw its own error for a nested option);
 * `expected` ends the message; `range` makes a failing number a `RangeError` (else `TypeError`). @internal
 */
export type OptionRule = readonly [
  accepts: (value: any, prefix: string, name: string) => unknown,
  expected: string,
  range?: true,
];

/** Option name → its rule, in the order the checks run. @internal */
export type OptionRules = Readonly<Record<string, OptionRule>>;

/** The expectation every millisecond option's message states. */
const MS_EXPECTED = "a number of milliseconds >= 0 (0 or undefined disables it)";

/** A millisecond option: a number >= 0 (`Infinity` too), or a numeric string (as upstream's timers coerce). @internal */
export const MS: OptionRule = [(value) => typeof value === "number" && value >= 0, MS_EXPECTED];

/** `true` or `false` only (upstream's truthiness would make `"false"` true). @internal */
export const BOOLEAN: OptionRule = [(value) => typeof value === "boolean", "a boolean (true or false)"];

/** A function (a callback). @internal */
export const FUNCTION: OptionRule = [(value) => typeof value === "function", "a function"];

/** An object (not an array) whose options, if `rules` is given, follow them. @internal */
export function objectRule(expected: string, rules?: OptionRules): OptionRule {
  return [
    (value, prefix, name) =>
      typeof value === "object" &&
      !Array.isArray(value) &&
      (!rules || applyOptionRules(rules, value, prefix, `${name}.`)),
    expected,
  ];
}

/** An integer >= `min`, or `Infinity` (a count of sockets, sessions or streams). @internal */
export function countRule(min: number): OptionRule {
  return [
    (value) => value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= min),
    `an integer >= ${min} or Infinity`,
  ];
}

/** An integer >= 1, or `Infinity`. @internal */
export const COUNT: OptionRule = /* @__PURE__ */ countRule(1);

/** A logger: an object whose `warn`, if any, is a function. @internal */
export const LOGGER: OptionRule = /* @__PURE__ */ objectRule("an object with a warn(message) method", {
  warn: FUNCTION,
});

/**
 * What `updateHttpClientConfig()` does with a valid value: `"request"`: later requests read it; `"monitor"`: also
 * applied to the monitor at once; `"pool"`: the connection pool is built from it. @internal
 */
export type OptionUpdate = "request" | "monitor" | "pool";

/** An option's declaration `[rule, update, default, env?]`; `env` is read by the rule when it is unset. @internal */
export type OptionSpec<T> = readonly [
  rule: OptionRule,
  update: OptionUpdate,
  defaultValue: T | undefined,
  env?: string,
];

/** The declaration of every option of `O`, in check order (used with `satisfies`). @internal */
export type OptionSchema<O> = { readonly [K in keyof O]-?: OptionSpec<Exclude<O[K], null | undefined>> };

/** The resolved options of schema `S` over options `O`: an option with a default is never `undefined`. @internal */
export type ResolvedOptions<O, S> = {
  -readonly [K in keyof O & keyof S]-?: S[K] extends readonly [OptionRule, OptionUpdate, undefined, ...unknown[]]
    ? Exclude<O[K], null> | undefined
    : Exclude<O[K], null | undefined>;
};

/** Schema-agnostic view of an `OptionSchema` (for the resolvers). @internal */
export type AnySchema = { readonly [name: string]: OptionSpec<unknown> };

/** `raw` checked by `rule` and normalised (`null` → `undefined` unless `keepNull`; `MS` strings → numbers). @internal */
export function checkOption(rule: OptionRule, raw: unknown, prefix: string, name: string, keepNull = false): unknown {
  let value = keepNull ? raw : (raw ?? undefined);
  if (rule === MS && typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) {
    value = Number(value);
  }
  if (value !== undefined && !rule[0](value, prefix, name)) {
    throw invalidOption(prefix, name, raw, rule[1], rule[2] && typeof raw === "number" ? RangeError : TypeError);
  }
  return value;
}

/** Checks `options` by `schema`; returns a copy with its options normalised and defaulted. @internal */
export function resolveOptions<S extends object>(
  schema: S,
  options: object | null | undefined | void,
  prefix: string,
  env: NodeJS.ProcessEnv = process.env
): Record<keyof S, unknown> & Record<string, unknown> {
  if (options != null && typeof options !== "object") {
    throw new TypeError(
      `${prefix} - invalid options: ${describeValue(options)}; expected an options object or a provider function.`
    );
  }
  const out = { ...options } as Record<string, unknown>;
  for (const [name, [rule, , defaultValue, variable]] of Object.entries(schema as AnySchema)) {
    let value = checkOption(rule, out[name], prefix, name, variable !== undefined);
    if (value === undefined && variable !== undefined) {
      // An empty variable counts as unset.
      const fromEnv = env[variable] || undefined;
      if (fromEnv !== undefined && !rule[0](fromEnv, prefix, name)) {
        throw new TypeError(
          `${prefix} - invalid environment variable ${variable}: ${describeValue(fromEnv)}; expected ${rule[1]}.`
        );
      }
      value = fromEnv;
    }
    out[name] = value ?? defaultValue;
  }
  return out as Record<keyof S, unknown> & Record<string, unknown>;
}

/** Checks `options` by `rules` (names after `path` in messages); returns a normalised copy. @internal */
export function applyOptionRules<T extends object>(
  rules: OptionRules,
  options: T | null | undefined | void,
  prefix: string,
  path = ""
): T & Record<string, unknown> {
  const out = { ...options } as Record<string, unknown>;
  for (const name in rules) out[name] = checkOption(rules[name], out[name], prefix, path + name);
  return out as T & Record<string, unknown>;
}
