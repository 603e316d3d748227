Feature: Addition
  Scenario: two small numbers
    Given the numbers 2 and 3
    When I add them
    Then the result is 5

  Scenario: negative numbers
    Given the numbers -1 and -1
    When I add them
    Then the result is -2
