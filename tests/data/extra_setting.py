"""A pytest plugin (test data, loaded with ``-p extra_setting``, tests/data on PYTHONPATH)
that registers one more setting before anything else imports theory.systems: a copy of
an existing setting under a new name, with the same law.  tests/test_coverage.py collects
``pytest claims`` with and without it and checks that every claim parametrised over
settings covers the new one as it covers the one it copies.

Environment: ``LDSICL_EXTRA_SETTING_FROM`` names the setting copied (default ``c``),
``LDSICL_EXTRA_SETTING`` the new name (default ``extra``).
"""
from __future__ import annotations

import dataclasses
import os
import sys

from theory.settings import SETTING_SPECS

SOURCE = os.environ.get("LDSICL_EXTRA_SETTING_FROM", "c")
NAME = os.environ.get("LDSICL_EXTRA_SETTING", "extra")

if "theory.systems" in sys.modules:          # its tuples of names are built at import
    raise RuntimeError("extra_setting must be loaded before theory.systems is imported")
SETTING_SPECS[NAME] = dataclasses.replace(SETTING_SPECS[SOURCE], name=NAME)
