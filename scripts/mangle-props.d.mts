/** Types of mangle-props.mjs (for the packages' tsup.config.ts). */

/** The esbuild options that rename a package's private (and, with `publicEntry`, internal) class members. */
export interface MangleOptions {
  mangleProps: RegExp;
  mangleCache: Record<string, string>;
}

/** File of pool-monitor's dist holding its mapping (name → short name), read by the handler packages' builds. */
export const MANGLE_MAP: string;

export function manglePropsFor(packageDir: string, options?: { publicEntry?: string }): MangleOptions;
