const sum = (a, b) => a - b;

describe('sum', () => {
  test('adds numbers', () => {
    expect(sum(1, 2)).toBe(3);
  });
  test('adds zero', () => {
    expect(sum(1, 0)).toBe(1);
  });
});
