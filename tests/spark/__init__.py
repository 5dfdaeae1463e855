"""Tests of the PySpark data source ``trinitylake`` (``trinity_dbapi.spark``)."""
