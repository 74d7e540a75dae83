"""Calibration metrics on Dask arrays and Dask DataFrame columns: the public name of
:mod:`calibnb.scale.dask` (``import calibnb.dask as cdask``; needs the ``calibnb[dask]`` extra).

Examples
--------
>>> import calibnb.dask as cdask
>>> cdask.ece.__module__
'calibnb.scale.dask'
"""

from .scale import dask as _impl
from .scale.dask import *  # noqa: F401,F403

__all__ = list(_impl.__all__)
