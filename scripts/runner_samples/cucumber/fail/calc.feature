Feature: Wrong addition
  Scenario: correct
    Given the numbers 2 and 3
    When I add them
    Then the result is 5

  Scenario: wrong
    Given the numbers 2 and 2
    When I add them
    Then the result is 5
