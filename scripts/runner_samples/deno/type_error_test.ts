import { assertEquals } from "./assert.ts";

Deno.test("typed", () => {
  const n: number = "not a number";
  assertEquals(n, 1);
});
