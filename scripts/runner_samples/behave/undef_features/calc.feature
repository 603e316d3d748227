Feature: Steps nobody wrote
  Scenario: multiplication
    Given the numbers 2 and 3
    When I multiply them
    Then the result is 6
