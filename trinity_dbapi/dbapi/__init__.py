"""The PEP 249 (DB-API 2.0) driver of trinity-dbapi."""
