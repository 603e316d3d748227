import { assertEquals } from "./assert.ts";

Deno.test("adds", () => {
  assertEquals(1 + 1, 2);
});

Deno.test("reports failure text", () => {
  console.log("FAILED | 0 passed | 1 failed (printed, not a result)");
  assertEquals("failed".length, 6);
});

Deno.test({ name: "ignored", ignore: true, fn() { throw new Error("no"); } });
