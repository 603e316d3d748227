// Playwright sample: no browser is needed (the tests use no page)
module.exports = { testDir: './tests', reporter: 'list', workers: 1 };
