import { describe, it, expect } from 'vitest';

describe('math', () => {
  it('adds', () => { expect(1 + 2).toBe(4); });
  it('subtracts', () => { expect(3 - 2).toBe(1); });
});
