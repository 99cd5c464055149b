"""The model files: manifest, download, verification, hub access and the data dir.

Nothing here loads the model: that is the engine's job (:mod:`wyoming_omnivoice.engine`).
"""
