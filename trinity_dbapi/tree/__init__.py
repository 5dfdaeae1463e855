"""The catalog's copy-on-write B-epsilon tree.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``node`` (in-memory nodes, the copy-on-write rule, the node store)
2. ``btree`` (reads, the B-epsilon write path, invariants)
3. ``diff`` (the keys two trees differ in, reading only what differs)
"""
