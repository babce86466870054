import { describe, expect, test as it } from "vitest";
import { guardedCall, guardedWarn } from "./guarded-call";

describe("guardedCall / guardedWarn", () => {
  it("calls the function with its this and argument", () => {
    const seen: unknown[] = [];
    const target = {
      name: "t",
      fn(this: { name: string }, arg: number) {
        seen.push(this.name, arg);
      },
    };
    guardedCall(target.fn as (this: unknown, arg: number) => unknown, target, 7);
    expect(seen).toEqual(["t", 7]);
  });

  it("swallows a throw and ignores a missing function or logger", () => {
    expect(() =>
      guardedCall(
        () => {
          throw new Error("boom");
        },
        undefined,
        1
      )
    ).not.toThrow();
    expect(() => guardedCall(undefined, undefined, 1)).not.toThrow();
    expect(() => guardedWarn(undefined, "m")).not.toThrow();
    expect(() => guardedWarn({}, "m")).not.toThrow();
    expect(() =>
      guardedWarn(
        {
          warn() {
            throw new Error("logger down");
          },
        },
        "m"
      )
    ).not.toThrow();
  });

  it("guardedWarn passes the message to logger.warn with the logger as this", () => {
    const logger = {
      lines: [] as string[],
      warn(this: { lines: string[] }, message: string) {
        this.lines.push(message);
      },
    };
    guardedWarn(logger, "hello");
    expect(logger.lines).toEqual(["hello"]);
  });
});
