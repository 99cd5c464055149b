"""The model files: manifest, download, verification, hub access, the data dir, and the
memory room a start needs for them (`memory_room`).

Nothing here loads the model: that is the engine's job (:mod:`wyoming_omnivoice.engine`).
"""
