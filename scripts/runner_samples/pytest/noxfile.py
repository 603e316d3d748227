import nox

nox.options.reuse_existing_virtualenvs = True


@nox.session(python=False)
def tests(session):
    session.run("pytest", "-q", *(session.posargs or ["tests_pass"]))
