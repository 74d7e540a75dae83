"""The scale path: mergeable streaming statistics, their compiled kernels, the chunked Parquet scan
and Dask.

``calibnb.scale.stats`` (:class:`~calibnb.CalibrationStats`) and ``calibnb.scale.scan``
(``calibnb.data.scan_predictions``) are imported with ``calibnb``; ``calibnb.dask`` (the public
name of ``calibnb.scale.dask``) only when asked for, so that importing calibnb never imports Dask.
"""

__all__: list[str] = []
