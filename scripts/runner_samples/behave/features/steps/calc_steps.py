from behave import given, then, when


@given("the numbers {a:d} and {b:d}")
def numbers(context, a, b):
    context.a, context.b = a, b


@when("I add them")
def add(context):
    context.result = context.a + context.b


@then("the result is {n:d}")
def result(context, n):
    assert context.result == n, f"expected {n}, got {context.result}"
