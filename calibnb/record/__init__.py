"""The reproduction record: claims ledgers, claim statuses, result JSON and their rendering.

Not the thin core: the infrastructure behind every paper notebook's "does it
reproduce?" answer. ``calibnb`` re-exports its main names (``cn.Claim``,
``cn.Reproduction``, ...).
"""

from . import reproduction as _reproduction
from .reproduction import *  # noqa: F401,F403

__all__ = list(_reproduction.__all__)
