import { describe, expect, test as it } from "vitest";
import { guardedWarn } from "./guarded-warn";

describe("guardedWarn", () => {
  it("ignores a missing logger or warn, and swallows a throwing warn", () => {
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

  it("passes the message to logger.warn with the logger as this", () => {
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
