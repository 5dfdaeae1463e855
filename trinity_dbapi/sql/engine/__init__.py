"""The SQL engine: a connection's session and the handlers that run each statement."""
