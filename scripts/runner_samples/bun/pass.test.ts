import { test, expect, describe } from "bun:test";

describe("math", () => {
  test("adds", () => { expect(1 + 1).toBe(2); });
  test("handles failure text", () => { expect("1 fail").toContain("fail"); });
  test.skip("skipped", () => { expect(1).toBe(2); });
  test.todo("later");
});
