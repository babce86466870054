/**
 * Option rules: the one way every Sockeye package checks its options. A table maps each option's name to its rule
 * (`OptionRules`, in the order the checks run: the first bad value throws) and `applyOptionRules()` applies it, so a
 * handler's resolver is its table plus what its options mean; the handlers share the rows of the options they share
 * (resolve-shared-options.ts), and `new PoolMonitor()` applies its own (pool-monitor-options.ts). `null` counts as
 * unset for every option in a table (JSON-built configs).
 *
 * Cost: once per constructor / provider resolution / `updateHttpClientConfig()`; nothing per request.
 */

import { describeValue, invalidOption } from "./invalid-option";

/**
 * One option's rule: `accepts(value, prefix, name)` says whether a set value (neither `null` nor `undefined`) is
 * valid (it may throw a more precise error itself, naming a nested option such as `httpAgent.maxSockets`);
 * `expected` ends the message (`…; expected <expected>.`); `range` makes a number of the right type that fails a
 * `RangeError` (else every failure is a `TypeError`).
 * @internal
 */
export type OptionRule = readonly [
  accepts: (value: any, prefix: string, name: string) => unknown,
  expected: string,
  range?: true,
];

/** Option name → its rule, in the order the checks run. @internal */
export type OptionRules = Readonly<Record<string, OptionRule>>;

/** The expectation every millisecond option's message states. @internal */
export const MS_EXPECTED = "a number of milliseconds >= 0 (0 or undefined disables it)";

/**
 * A millisecond option: a number >= 0 (`0` and `Infinity` are kept: each handler decides what they mean). A numeric
 * string (e.g. from an environment variable) is converted first, as upstream's timers would coerce it; `NaN`, a
 * negative number, `"5s"` fail.
 * @internal
 */
export const MS: OptionRule = [(value) => typeof value === "number" && value >= 0, MS_EXPECTED];

/**
 * A boolean: `true` or `false` only (upstream's truthiness would make `"false"` true: a clear error is safer than a
 * guess).
 * @internal
 */
export const BOOLEAN: OptionRule = [(value) => typeof value === "boolean", "a boolean (true or false)"];

/** A function (a callback). @internal */
export const FUNCTION: OptionRule = [(value) => typeof value === "function", "a function"];

/**
 * An object (not an array) whose own options, if `rules` is given, follow `rules` (named `<name>.<option>`).
 * @internal
 */
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

/**
 * A logger: an object whose `warn`, if it has one, is a function (the Smithy `Logger`, `console`, pino…). The rule
 * `new PoolMonitor()` applies too.
 * @internal
 */
export const LOGGER: OptionRule = /* @__PURE__ */ objectRule("an object with a warn(message) method", {
  warn: FUNCTION,
});

/**
 * What `updateHttpClientConfig(name, value)` does with an option once the value passed its rule (every handler;
 * a bad value throws and changes nothing):
 * - `"request"`: stored; requests started from then on read it;
 * - `"monitor"`: also applied to the handler's monitor at once (`applyHandlerOption()`);
 * - `"pool"`: the connection pool is built from it: `UndiciHttpHandler` closes its dispatcher gracefully and builds
 *   a new one, `NodeHttpHandler` takes an agent as given (as upstream), `NodeHttp2Handler` applies it to sessions
 *   opened from then on.
 * @internal
 */
export type OptionUpdate = "request" | "monitor" | "pool";

/**
 * One option's declaration: `[rule, update, default, env?]` — its rule, what an update does, its default
 * (`undefined`: none) and, optionally, an environment variable read by the same rule when the option is unset (`null`
 * then counts as a bad value, not as unset). A tuple: the tables are shipped, and a row stays one short line.
 * @internal
 */
export type OptionSpec<T> = readonly [
  rule: OptionRule,
  update: OptionUpdate,
  defaultValue: T | undefined,
  env?: string,
];

/**
 * The declaration of every option of `O`, in the order the checks run: a missing option, rule, default or update
 * kind fails to compile, and so does a row `O` does not have (used with `satisfies`).
 * @internal
 */
export type OptionSchema<O> = { readonly [K in keyof O]-?: OptionSpec<Exclude<O[K], null | undefined>> };

/** The resolved options of schema `S` over options `O`: an option with a default is never `undefined`. @internal */
export type ResolvedOptions<O, S> = {
  -readonly [K in keyof O & keyof S]-?: S[K] extends readonly [OptionRule, OptionUpdate, undefined, ...unknown[]]
    ? Exclude<O[K], null> | undefined
    : Exclude<O[K], null | undefined>;
};

/** Schema-agnostic view of an `OptionSchema` (for the resolvers). @internal */
export type AnySchema = { readonly [name: string]: OptionSpec<unknown> };

/**
 * `raw` checked by `rule` and normalised (`null` → `undefined` unless `keepNull`, a numeric string of an `MS`
 * option → its number); a bad value throws the one-line error of `invalidOption()` naming `name`.
 * @internal
 */
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

/**
 * Checks `options` (an options object, or `undefined`/`null`: nothing set) by `schema`, in its order (the first bad
 * value throws), and returns a copy of every option given with those of `schema` normalised and defaulted.
 * @param prefix - the package name starting every message, e.g. `@sockeye/node-http-handler`.
 * @internal
 */
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

/**
 * Checks `options` (an object, or `undefined`/`null`: nothing set) by `rules` and returns a copy with each option
 * of `rules` normalised: `null` → `undefined`, a numeric string of an `MS` option → its number; the other options
 * are copied unchecked. The first bad value throws the one-line error of `invalidOption()` naming `<path><name>` and
 * the value as given.
 * @param path - put before each option's name in the message (`"saturation."` for a nested block).
 * @internal
 */
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
