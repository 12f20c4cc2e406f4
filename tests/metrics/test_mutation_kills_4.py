"""Tests written in the seventh session (2026-12-01) to kill the survivors of its mutation run.

Each expected figure is derived by hand or by an independent library, never by the product
function under test; each test names the mutant it was written against (see tests/MUTATION.md).
"""
