"""The ONNX graphs this project builds or rewrites (``onnx`` imported only to build them).

``scoring`` (classifier-free guidance and the choice of each cell), ``scoring_cache`` (built
scoring graphs kept on disk), ``selection_graph`` (a step's selection on the device),
``prefix_cache_graph`` (the cached forward's rewrite), ``rotary_table`` (the rotary table
folded into a constant), ``graph_rewrite`` (the published graph's NaN guards removed).
"""
