"""Pytest plugin loaded by run.py: points hard-coded `localhost:7687` at the target under test.

Some suites (neo4j-graphrag's e2e conftest) hard-code `neo4j://localhost:7687`. Rather than edit
their code, this wraps the driver factories so any URI naming `localhost:7687` or
`127.0.0.1:7687` is rewritten to `$LIB_TARGET_ADDR` (host:port). Nothing else changes.
"""

import os

import neo4j

_TARGET = os.environ.get("LIB_TARGET_ADDR")
_DEFAULTS = ("localhost:7687", "127.0.0.1:7687")


def _rewrite(uri):
    if not _TARGET or not isinstance(uri, str):
        return uri
    for default in _DEFAULTS:
        if default in uri:
            return uri.replace(default, _TARGET)
    return uri


def _wrap(factory_cls):
    original = factory_cls.driver

    def driver(uri, *args, **kwargs):
        return original(_rewrite(uri), *args, **kwargs)

    factory_cls.driver = staticmethod(driver)


_wrap(neo4j.GraphDatabase)
_wrap(neo4j.AsyncGraphDatabase)
