"""One forward of the backbone over a batch.

``layouts`` (the row layouts and length buckets, the forward cost model), ``iobinding``
(the step runners: plain, IO binding with CUDA graphs), ``prefix_cache`` (the cached
forward), ``target_embeddings`` (the embeddings of the target positions, on the host or the
device).
"""
