import { assertEquals } from "./assert.ts";

Deno.test("adds", () => {
  assertEquals(1 + 1, 3);
});

Deno.test("subtracts", () => {
  assertEquals(2 - 1, 1);
});
