export function assertEquals(actual: unknown, expected: unknown): void {
  if (actual !== expected) {
    throw new Error(`Values are not equal: ${actual} !== ${expected}`);
  }
}
