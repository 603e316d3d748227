test('logs errors but passes', () => {
  console.error('Error: FAIL something went wrong (expected in this test)');
  console.log('not ok 1 - fake tap line');
  expect(true).toBe(true);
});
