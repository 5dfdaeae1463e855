"""Tests of the SQL front end."""
