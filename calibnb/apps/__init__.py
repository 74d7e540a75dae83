"""Applications built on the library: the report (``python -m calibnb.report``), the audit of one's
own model (``python -m calibnb.audit``) and the summary of every metric with intervals behind both.

Importing this package imports none of them (the report and the audit need the ``[report]`` extra).
"""

__all__: list[str] = []
