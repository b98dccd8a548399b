"""The option types of ``ldsicl``'s parser (claims/cli/main.py): numbers read as typed and checked
by theory.validation, a bad one an argparse error naming its option that echoes the text
typed, shortened -- ``got '1e400'``, never the 400 digits of its value.

>>> import argparse
>>> p = argparse.ArgumentParser(prog="x", exit_on_error=False)
>>> _ = p.add_argument("--sigma-w", type=rational_arg("sigma_w"))
>>> p.parse_args(["--sigma-w", "1/3"]).sigma_w
Fraction(1, 3)
>>> try:
...     rational_arg("sigma_w")("1e400")
... except argparse.ArgumentTypeError as exc:
...     print(exc)
sigma_w must be finite (at most about 1.8e308), got '1e400'
"""
from __future__ import annotations

import argparse

from claims.cli.shared import short
from theory.validation import check_int, check_rational, check_real

__all__ = ["argument", "rational_arg", "int_arg", "real_arg", "pair_arg"]


def argument(name, check):
    """An argparse ``type``: ``check(text)``, its ValueError (which names ``name``) as a usage
    error that echoes the text typed, shortened (``got '1e400'``, never the 400 digits of
    its value; theory.validation's messages end with ``, got <value>``)."""
    def parse(text):
        try:
            return check(text)
        except ValueError as exc:
            message = str(exc)
            if ", got " in message:
                message = message.rpartition(", got ")[0] + f", got {short(text)}"
            raise argparse.ArgumentTypeError(message) from None
    parse.__name__ = name
    return parse


def number(name, convert, what, text):
    """``convert(text)``, or a ValueError in theory.validation's words."""
    try:
        return convert(text.strip())
    except (ValueError, OverflowError):
        raise ValueError(f"{name} must be {what}, got {short(text)}") from None


def finite_rational(name, text):
    """An exact rational whose float is finite (the families compute in floats)."""
    value = check_rational(name, text)
    try:
        float(value)
    except OverflowError:
        raise ValueError(f"{name} must be finite (at most about 1.8e308), got {text}") from None
    return value


def rational_arg(name):
    """An exact rational (``0.1`` is 1/10, ``1/3`` is 1/3) whose float is finite."""
    return argument(name, lambda text: finite_rational(name, text))


#: every integer option is below this (a seed's bound, TrainConfig's): beyond it no size is
#: meant, and the estimates of claims/cli/costs.py would leave the float range
INT_LIMIT = 2 ** 63


def int_arg(name, minimum, maximum=None):
    """An integer >= ``minimum`` and <= ``maximum`` (default: below :data:`INT_LIMIT`)."""
    def parse(text):
        value = check_int(name, number(name, int, "an integer", text), minimum)
        if maximum is not None and value > maximum:
            raise ValueError(f"{name} must be <= {maximum}, got {text}")
        if value >= INT_LIMIT:
            raise ValueError(f"{name} must be < 2**63, got {text}")
        return value
    return argument(name, parse)


def real_arg(name, *, positive=False):
    """A finite real number >= 0 (> 0 when ``positive``)."""
    return argument(name, lambda text: check_real(name, number(name, float, "a real number", text),
                                                   minimum=0, strict_min=positive))


def pair_arg(name):
    """"b1,b2" -> (b1, b2) (AdamW's betas; their range is TrainConfig's to check)."""
    def parse(text):
        parts = text.split(",")
        if len(parts) != 2:
            raise ValueError(f"{name} must be two numbers beta1,beta2, got {short(text)}")
        return tuple(number(name, float, "two numbers beta1,beta2", p) for p in parts)
    return argument(name, parse)
