"""The masked-diffusion decode, step by step.

``decode_types`` (the decode's values), ``schedule`` (the timesteps and the per-step unmask
counts), ``selection`` (one step's choice of cells, and the Gumbel noise), ``stepping`` (the
resumable decode: states joining and leaving at step boundaries), ``decoder`` (one forward
of a batch, and a whole batch stepped to the end), ``device_selection`` (the step's scoring
and selection run on the device).
"""
