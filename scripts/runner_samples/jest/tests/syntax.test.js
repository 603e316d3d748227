describe('broken', () => {
  test('never parses', () => {
    expect(1).toBe(1;
  });
});
