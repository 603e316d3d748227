const { Given, When, Then } = require('@cucumber/cucumber');
const assert = require('assert');
Given('the numbers {int} and {int}', function (a, b) { this.a = a; this.b = b; });
When('I add them', function () { this.result = this.a + this.b; });
Then('the result is {int}', function (n) { assert.strictEqual(this.result, n); });
