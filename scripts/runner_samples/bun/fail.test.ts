import { test, expect } from "bun:test";

test("adds", () => { expect(1 + 1).toBe(3); });
test("subtracts", () => { expect(2 - 1).toBe(1); });
