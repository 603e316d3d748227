const sum = (a, b) => a + b;

describe('sum', () => {
  test('adds numbers', () => {
    expect(sum(1, 2)).toBe(3);
  });
  test('reports failure messages correctly', () => {
    const msg = 'Tests: 1 failed, 1 total';
    expect(msg).toContain('failed');
  });
  test.skip('skipped for now', () => {
    expect(true).toBe(false);
  });
  test.todo('write more tests');
});
