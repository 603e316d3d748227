import { it, expect } from 'vitest';
it('broken', () => { expect(1).toBe(1; });
