import { test, expect } from "bun:test";
test("broken", () => { expect(1).toBe(1; });
