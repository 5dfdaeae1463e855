"""Everything byte-exact on disk: file names, keys, node files, definitions, types.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``version``, ``features``, ``keys``, ``locations``, ``paths``,
   ``sql_text``, ``arrow_values`` (``pa.array`` without pandas)
2. ``names`` (on ``keys``), ``node_file``, ``type_mapping``
"""
