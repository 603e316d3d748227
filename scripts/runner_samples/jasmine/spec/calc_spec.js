const add = (a, b) => a + b;
describe('calc', () => {
  it('adds', () => { expect(add(2, 3)).toBe(5); });
  it('adds negatives', () => { expect(add(-1, -1)).toBe(-2); });
  xit('multiplies', () => { expect(2 * 3).toBe(6); });
});
